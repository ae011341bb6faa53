package wsbench;

import jakarta.ws.rs.client.ClientBuilder;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.client.WebTarget;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
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
    client = ClientBuilder.newBuilder()
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
      // Relative (beast) or absolute (JAX-RS servers): the path names the queue.
      final URI location = r.getLocation();
      final String path = location == null ? null : location.getPath();
      if (path == null || !path.startsWith("/queues/") || path.length() == "/queues/".length())
        throw new IllegalStateException("POST /queues: Location " + location);
      return path.substring("/queues/".length());
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
        return Bindings.xmlMessage(m);
      default:
        return Wsbench.Response.newBuilder().setMessage(Bindings.protobufMessage(m)).build();
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
    final Class<?> type = format == Format.JSON ? Model.Body.class
        : format == Format.XML                  ? XmlBodies.Messages.class
                                                : Wsbench.Response.class;
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
    return body(reply).text;
  }

  @Override
  public Model.Body body(Object reply) {
    if (reply instanceof Model.Body)
      return (Model.Body) reply;
    if (reply instanceof Wsbench.Response)
      return Bindings.fromProtobuf((Wsbench.Response) reply);
    return Bindings.fromXml(reply);
  }

  @Override
  public List<Model.Msg> messages(Object reply) {
    final Model.Body body = body(reply);
    if (body.messages == null)
      throw new IllegalStateException("GET /queues/{id}: no message list");
    return body.messages;
  }

  @Override
  public void close() {
    client.close();
  }

  // What get and ping read: the body's class for the format and payload kind.
  private Class<?> replyType(String label) {
    if (format == Format.JSON)
      return Model.Body.class;
    if (format == Format.PROTOBUF)
      return Wsbench.Response.class;
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
}
