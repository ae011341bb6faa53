package wsbench;

import com.google.protobuf.ByteString;
import jakarta.ws.rs.client.ClientBuilder;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.client.WebTarget;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.ArrayList;
import java.util.List;
import org.glassfish.jersey.jackson.JacksonFeature;
import wsbench.rest.XmlBodies;

/**
 * Jersey's client against beast's REST API, one keep-alive connection pool per client, with
 * bodies in JSON (Jackson), XML (JAXB) or Protocol Buffers (protobuf-java, ProtobufProvider).
 */
final class JerseyClient implements Client {
  enum Format {
    JSON(MediaType.APPLICATION_JSON_TYPE),
    XML(MediaType.APPLICATION_XML_TYPE),
    PROTOBUF(ProtobufProvider.TYPE);

    final MediaType type;

    Format(MediaType type) {
      this.type = type;
    }
  }

  private final jakarta.ws.rs.client.Client client;
  private final WebTarget base;
  private final Format format;

  JerseyClient(String address, Format format) {
    this.format = format;
    client =
        ClientBuilder.newBuilder()
            .register(JacksonFeature.class)
            .register(ProtobufProvider.class)
            .build();
    base = client.target("http://" + address);
  }

  @Override
  public Object ping() {
    return base.path("ping").request(format.type).get(replyType(null));
  }

  @Override
  public Object get(String label) {
    return base.path("payloads").path(label).request(format.type).get(replyType(label));
  }

  @Override
  public String register() {
    try (Response r = base.path("queues").request().post(null)) {
      expect(r, Response.Status.CREATED, "POST /queues");
      final String location = r.getHeaderString("Location");
      if (location == null || !location.startsWith("/queues/"))
        throw new IllegalStateException("POST /queues: Location " + location);
      return location.substring("/queues/".length());
    }
  }

  @Override
  public Object message(Model.Msg m) {
    switch (format) {
      case JSON:
        final Model.Body body = new Model.Body();
        body.message = m;
        return body;
      case XML:
        return xmlMessage(m);
      default:
        return Wsbench.Response.newBuilder().setMessage(protobufMessage(m)).build();
    }
  }

  @Override
  public void send(String queue, Object message) {
    try (Response r =
        base.path("queues").path(queue).request().put(Entity.entity(message, format.type))) {
      expect(r, Response.Status.NO_CONTENT, "PUT /queues/" + queue);
    }
  }

  @Override
  public Object receive(String queue) {
    final Class<?> type =
        format == Format.JSON
            ? Model.Body.class
            : format == Format.XML ? XmlBodies.Messages.class : Wsbench.Response.class;
    return base.path("queues").path(queue).request(format.type).get(type);
  }

  @Override
  public void unregister(String queue) {
    try (Response r = base.path("queues").path(queue).request().delete()) {
      expect(r, Response.Status.NO_CONTENT, "DELETE /queues/" + queue);
    }
  }

  @Override
  public String text(Object reply) {
    if (reply instanceof Model.Body) return ((Model.Body) reply).text;
    if (reply instanceof XmlBodies.Text) return ((XmlBodies.Text) reply).value;
    return ((Wsbench.Response) reply).getText();
  }

  @Override
  public Model.Body body(Object reply) {
    if (reply instanceof Model.Body) return (Model.Body) reply;
    final Model.Body out = new Model.Body();
    if (reply instanceof XmlBodies.Ints) out.ints = ((XmlBodies.Ints) reply).values;
    else if (reply instanceof XmlBodies.Strings) out.strings = ((XmlBodies.Strings) reply).values;
    else if (reply instanceof XmlBodies.Objects) {
      out.objects = new ArrayList<>();
      for (XmlBodies.Obj o : ((XmlBodies.Objects) reply).values)
        out.objects.add(Model.Obj.of(o.id, o.name, o.value, o.active));
    } else {
      final Wsbench.Response r = (Wsbench.Response) reply;
      switch (r.getPayloadCase()) {
        case INTS:
          out.ints = r.getInts().getValuesList();
          break;
        case STRINGS:
          out.strings = r.getStrings().getValuesList();
          break;
        case OBJECTS:
          out.objects = new ArrayList<>();
          for (Wsbench.Object o : r.getObjects().getValuesList())
            out.objects.add(Model.Obj.of(o.getId(), o.getName(), o.getValue(), o.getActive()));
          break;
        case MESSAGE:
          out.message = message(r.getMessage());
          break;
        case TEXT:
          out.text = r.getText();
          break;
        default:
          break;
      }
    }
    return out;
  }

  @Override
  public List<Model.Msg> messages(Object reply) {
    if (reply instanceof Model.Body) return ((Model.Body) reply).messages;
    final List<Model.Msg> out = new ArrayList<>();
    if (reply instanceof XmlBodies.Messages) {
      for (XmlBodies.Message m : ((XmlBodies.Messages) reply).values) out.add(message(m));
    } else {
      final Wsbench.Response r = (Wsbench.Response) reply;
      if (r.getPayloadCase() != Wsbench.Response.PayloadCase.MESSAGES)
        throw new IllegalStateException("GET /queues/{id} answered " + r.getPayloadCase());
      for (Wsbench.Message m : r.getMessages().getMessagesList()) out.add(message(m));
    }
    return out;
  }

  @Override
  public void close() {
    client.close();
  }

  // What get and ping read: the body's class for the format and payload kind.
  private Class<?> replyType(String label) {
    if (format == Format.JSON) return Model.Body.class;
    if (format == Format.PROTOBUF) return Wsbench.Response.class;
    final String kind = label == null ? "text" : label.substring(0, label.indexOf('/'));
    switch (kind) {
      case "text":
        return XmlBodies.Text.class;
      case "ints":
        return XmlBodies.Ints.class;
      case "strings":
        return XmlBodies.Strings.class;
      case "objects":
        return XmlBodies.Objects.class;
      case "message":
      case "message-a":
      case "message-b":
        return XmlBodies.Message.class;
      default:
        throw new IllegalArgumentException("the XML client does not bind " + kind);
    }
  }

  private static void expect(Response r, Response.Status status, String what) {
    if (r.getStatus() != status.getStatusCode())
      throw new IllegalStateException(
          what + ": HTTP " + r.getStatus() + ", want " + status.getStatusCode());
  }


  private static XmlBodies.Message xmlMessage(Model.Msg m) {
    final XmlBodies.Message out = new XmlBodies.Message();
    out.recipient = m.recipient;
    out.sender = m.sender;
    out.authToken = m.authToken;
    out.timestamp = m.timestamp;
    if (m.records != null && !m.records.isEmpty()) {
      out.records = new ArrayList<>();
      for (Model.Rec r : m.records) {
        final XmlBodies.Rec rec = new XmlBodies.Rec();
        rec.title = r.title;
        rec.author = r.author;
        rec.body = r.body;
        rec.sequence = r.sequence;
        rec.created = r.created;
        rec.priority = r.priority;
        rec.category = r.category;
        rec.flags = r.flags;
        rec.ttl = r.ttl;
        out.records.add(rec);
      }
    }
    if (m.attachment != null && m.attachment.length > 0) out.attachment = m.attachment;
    return out;
  }

  private static Model.Msg message(XmlBodies.Message m) {
    final Model.Msg out = new Model.Msg();
    out.recipient = m.recipient;
    out.sender = m.sender;
    out.authToken = m.authToken;
    out.timestamp = m.timestamp;
    out.records = new ArrayList<>();
    if (m.records != null) {
      for (XmlBodies.Rec r : m.records)
        out.records.add(
            Model.Rec.of(
                r.title, r.author, r.body, r.sequence, r.created, r.priority, r.category,
                r.flags, r.ttl));
    }
    out.attachment = m.attachment;
    return out;
  }

  private static Wsbench.Message protobufMessage(Model.Msg m) {
    final Wsbench.Message.Builder out =
        Wsbench.Message.newBuilder()
            .setRecipient(m.recipient)
            .setSender(m.sender)
            .setAuthToken(m.authToken)
            .setTimestamp(m.timestamp);
    if (m.records != null) {
      for (Model.Rec r : m.records)
        out.addRecords(
            Wsbench.Record.newBuilder()
                .setTitle(r.title)
                .setAuthor(r.author)
                .setBody(r.body)
                .setSequence(r.sequence)
                .setCreated(r.created)
                .setPriority(r.priority)
                .setCategory(r.category)
                .setFlags(r.flags)
                .setTtl(r.ttl));
    }
    if (m.attachment != null) out.setAttachment(ByteString.copyFrom(m.attachment));
    return out.build();
  }

  private static Model.Msg message(Wsbench.Message m) {
    final Model.Msg out = new Model.Msg();
    out.recipient = m.getRecipient();
    out.sender = m.getSender();
    out.authToken = m.getAuthToken();
    out.timestamp = m.getTimestamp();
    out.records = new ArrayList<>();
    for (Wsbench.Record r : m.getRecordsList()) {
      if (r.getTtl() != (short) r.getTtl())
        throw new IllegalStateException("record ttl " + r.getTtl() + " is not a 16-bit value");
      out.records.add(
          Model.Rec.of(
              r.getTitle(), r.getAuthor(), r.getBody(), r.getSequence(), r.getCreated(),
              r.getPriority(), r.getCategory(), r.getFlags(), (short) r.getTtl()));
    }
    out.attachment = m.getAttachment().toByteArray();
    return out;
  }

}
