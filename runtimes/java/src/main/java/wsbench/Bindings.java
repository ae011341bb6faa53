package wsbench;

import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.List;
import wsbench.rest.XmlBodies;
import wsbench.soap.GetResponse;
import wsbench.soap.IntList;
import wsbench.soap.ObjectList;
import wsbench.soap.Record;
import wsbench.soap.StringList;

/**
 * Conversions between the json codec's shape (Model) and each binding's own types: the SOAP
 * stubs CXF generated, the REST XML classes (JAXB) and the protobuf messages. The clients use
 * them to build arguments and to compare replies; the Java server to answer.
 */
final class Bindings {
  private Bindings() {}

  // SOAP (CXF's JAXB classes from the WSDL).

  static wsbench.soap.Message soapMessage(Model.Msg m) {
    final wsbench.soap.Message out = new wsbench.soap.Message();
    out.setRecipient(m.recipient);
    out.setSender(m.sender);
    out.setAuthToken(m.authToken);
    out.setTimestamp(m.timestamp);
    if (m.records != null) {
      for (Model.Rec r : m.records) {
        final Record rec = new Record();
        rec.setTitle(r.title);
        rec.setAuthor(r.author);
        rec.setBody(r.body);
        rec.setSequence(r.sequence);
        rec.setCreated(r.created);
        rec.setPriority(r.priority);
        rec.setCategory(r.category);
        rec.setFlags(r.flags);
        rec.setTtl(r.ttl);
        out.getRecord().add(rec);
      }
    }
    if (m.attachment != null && m.attachment.length > 0)
      out.setAttachment(m.attachment);
    return out;
  }

  static Model.Msg fromSoap(wsbench.soap.Message m) {
    final Model.Msg out = new Model.Msg();
    out.recipient = m.getRecipient();
    out.sender = m.getSender();
    out.authToken = m.getAuthToken();
    out.timestamp = m.getTimestamp();
    out.records = new ArrayList<>();
    for (Record r : m.getRecord())
      out.records.add(Model.Rec.of(r.getTitle(), r.getAuthor(), r.getBody(), r.getSequence(),
          r.getCreated(), r.getPriority(), r.getCategory(), r.getFlags(), r.getTtl()));
    out.attachment = m.getAttachment();
    return out;
  }

  static Model.Body fromSoap(GetResponse r) {
    final Model.Body out = new Model.Body();
    if (r.getInts() != null)
      out.ints = r.getInts().getItem();
    if (r.getStrings() != null)
      out.strings = r.getStrings().getItem();
    if (r.getObjects() != null) {
      out.objects = new ArrayList<>();
      for (wsbench.soap.Object o : r.getObjects().getObject())
        out.objects.add(Model.Obj.of(o.getId(), o.getName(), o.getValue(), o.isActive()));
    }
    if (r.getMessage() != null)
      out.message = fromSoap(r.getMessage());
    if (r.getText() != null)
      out.text = r.getText();
    return out;
  }

  static GetResponse soapResponse(Model.Body body) {
    final GetResponse out = new GetResponse();
    if (body.ints != null) {
      out.setInts(new IntList());
      out.getInts().getItem().addAll(body.ints);
    }
    if (body.strings != null) {
      out.setStrings(new StringList());
      out.getStrings().getItem().addAll(body.strings);
    }
    if (body.objects != null) {
      out.setObjects(new ObjectList());
      for (Model.Obj o : body.objects) {
        final wsbench.soap.Object obj = new wsbench.soap.Object();
        obj.setId(o.id);
        obj.setName(o.name);
        obj.setValue(o.value);
        obj.setActive(o.active);
        out.getObjects().getObject().add(obj);
      }
    }
    if (body.message != null)
      out.setMessage(soapMessage(body.message));
    if (body.text != null)
      out.setText(body.text);
    return out;
  }

  // REST XML (JAXB, src/rest/xml_codec.cpp's shapes).

  static XmlBodies.Message xmlMessage(Model.Msg m) {
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
    if (m.attachment != null && m.attachment.length > 0)
      out.attachment = m.attachment;
    return out;
  }

  static Model.Msg fromXml(XmlBodies.Message m) {
    final Model.Msg out = new Model.Msg();
    out.recipient = m.recipient;
    out.sender = m.sender;
    out.authToken = m.authToken;
    out.timestamp = m.timestamp;
    out.records = new ArrayList<>();
    if (m.records != null) {
      for (XmlBodies.Rec r : m.records)
        out.records.add(Model.Rec.of(r.title, r.author, r.body, r.sequence, r.created, r.priority,
            r.category, r.flags, r.ttl));
    }
    out.attachment = m.attachment;
    return out;
  }

  /** A REST XML body (any root class of XmlBodies) in the json codec's shape. */
  static Model.Body fromXml(Object reply) {
    final Model.Body out = new Model.Body();
    if (reply instanceof XmlBodies.Text)
      out.text = ((XmlBodies.Text) reply).value;
    else if (reply instanceof XmlBodies.Ints)
      out.ints = ((XmlBodies.Ints) reply).values;
    else if (reply instanceof XmlBodies.Strings)
      out.strings = ((XmlBodies.Strings) reply).values;
    else if (reply instanceof XmlBodies.Objects) {
      out.objects = new ArrayList<>();
      for (XmlBodies.Obj o : ((XmlBodies.Objects) reply).values)
        out.objects.add(Model.Obj.of(o.id, o.name, o.value, o.active));
    } else if (reply instanceof XmlBodies.Message)
      out.message = fromXml((XmlBodies.Message) reply);
    else if (reply instanceof XmlBodies.Messages) {
      out.messages = new ArrayList<>();
      for (XmlBodies.Message m : ((XmlBodies.Messages) reply).values) out.messages.add(fromXml(m));
    } else
      throw new IllegalArgumentException("not a REST XML body: " + reply);
    return out;
  }

  /** The REST XML body (its root class) of a body in the json codec's shape. */
  static Object xmlBody(Model.Body body) {
    if (body.text != null) {
      final XmlBodies.Text out = new XmlBodies.Text();
      out.value = body.text;
      return out;
    }
    if (body.ints != null) {
      final XmlBodies.Ints out = new XmlBodies.Ints();
      out.values = body.ints;
      return out;
    }
    if (body.strings != null) {
      final XmlBodies.Strings out = new XmlBodies.Strings();
      out.values = body.strings;
      return out;
    }
    if (body.objects != null) {
      final XmlBodies.Objects out = new XmlBodies.Objects();
      for (Model.Obj o : body.objects) {
        final XmlBodies.Obj obj = new XmlBodies.Obj();
        obj.id = o.id;
        obj.name = o.name;
        obj.value = o.value;
        obj.active = o.active;
        out.values.add(obj);
      }
      return out;
    }
    if (body.message != null)
      return xmlMessage(body.message);
    if (body.messages != null) {
      final XmlBodies.Messages out = new XmlBodies.Messages();
      for (Model.Msg m : body.messages) out.values.add(xmlMessage(m));
      return out;
    }
    throw new IllegalArgumentException("an empty body");
  }

  // Protocol Buffers (src/rest/wsbench.proto).

  static Wsbench.Message protobufMessage(Model.Msg m) {
    final Wsbench.Message.Builder out = Wsbench.Message.newBuilder()
                                            .setRecipient(m.recipient)
                                            .setSender(m.sender)
                                            .setAuthToken(m.authToken)
                                            .setTimestamp(m.timestamp);
    if (m.records != null) {
      for (Model.Rec r : m.records)
        out.addRecords(Wsbench.Record.newBuilder()
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
    if (m.attachment != null)
      out.setAttachment(ByteString.copyFrom(m.attachment));
    return out.build();
  }

  static Model.Msg fromProtobuf(Wsbench.Message m) {
    final Model.Msg out = new Model.Msg();
    out.recipient = m.getRecipient();
    out.sender = m.getSender();
    out.authToken = m.getAuthToken();
    out.timestamp = m.getTimestamp();
    out.records = new ArrayList<>();
    for (Wsbench.Record r : m.getRecordsList()) {
      if (r.getTtl() != (short) r.getTtl())
        throw new IllegalArgumentException("record ttl " + r.getTtl() + " is not a 16-bit value");
      out.records.add(Model.Rec.of(r.getTitle(), r.getAuthor(), r.getBody(), r.getSequence(),
          r.getCreated(), r.getPriority(), r.getCategory(), r.getFlags(), (short) r.getTtl()));
    }
    out.attachment = m.getAttachment().toByteArray();
    return out;
  }

  static Model.Body fromProtobuf(Wsbench.Response r) {
    final Model.Body out = new Model.Body();
    switch (r.getPayloadCase()) {
      case TEXT:
        out.text = r.getText();
        break;
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
        out.message = fromProtobuf(r.getMessage());
        break;
      case MESSAGES:
        out.messages = new ArrayList<>();
        for (Wsbench.Message m : r.getMessages().getMessagesList())
          out.messages.add(fromProtobuf(m));
        break;
      default:
        throw new IllegalArgumentException("a protobuf body of " + r.getPayloadCase());
    }
    return out;
  }

  static Wsbench.Response protobufBody(Model.Body body) {
    final Wsbench.Response.Builder out = Wsbench.Response.newBuilder();
    if (body.text != null)
      out.setText(body.text);
    else if (body.ints != null)
      out.setInts(Wsbench.Ints.newBuilder().addAllValues(body.ints));
    else if (body.strings != null)
      out.setStrings(Wsbench.Strings.newBuilder().addAllValues(body.strings));
    else if (body.objects != null) {
      final Wsbench.Objects.Builder objects = Wsbench.Objects.newBuilder();
      for (Model.Obj o : body.objects)
        objects.addValues(
            Wsbench.Object.newBuilder().setId(o.id).setName(o.name).setValue(o.value).setActive(
                o.active));
      out.setObjects(objects);
    } else if (body.message != null)
      out.setMessage(protobufMessage(body.message));
    else if (body.messages != null) {
      final List<Wsbench.Message> messages = new ArrayList<>();
      for (Model.Msg m : body.messages) messages.add(protobufMessage(m));
      out.setMessages(Wsbench.MessageList.newBuilder().addAllMessages(messages));
    } else
      throw new IllegalArgumentException("an empty body");
    return out.build();
  }
}
