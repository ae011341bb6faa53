package wsbench;

import java.net.URL;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.xmlrpc.client.XmlRpcClientConfigImpl;

/**
 * Apache XML-RPC's client against xmlrpc-c. It speaks plain XML-RPC (no i8), so it calls
 * /RPC2?int64=string, where 64-bit fields travel as decimal strings both ways.
 */
final class XmlrpcClient implements Client {
  private final org.apache.xmlrpc.client.XmlRpcClient client;

  XmlrpcClient(String address) throws Exception {
    final XmlRpcClientConfigImpl config = new XmlRpcClientConfigImpl();
    config.setServerURL(new URL("http://" + address + "/RPC2?int64=string"));
    client = new org.apache.xmlrpc.client.XmlRpcClient();
    client.setConfig(config);
  }

  @Override
  public Object ping() throws Exception {
    return client.execute("wsbench.ping", new Object[0]);
  }

  @Override
  public Object get(String label) throws Exception {
    return client.execute("wsbench.get", new Object[] {label});
  }

  @Override
  public String register() throws Exception {
    return (String) client.execute("wsbench.registerClient", new Object[0]);
  }

  @Override
  public Object message(Model.Msg m) {
    final Map<String, Object> out = new HashMap<>();
    out.put("recipient", m.recipient);
    out.put("sender", m.sender);
    out.put("authToken", m.authToken);
    out.put("timestamp", Long.toString(m.timestamp));
    if (m.records != null && !m.records.isEmpty()) {
      final List<Object> records = new ArrayList<>();
      for (Model.Rec r : m.records) {
        final Map<String, Object> rec = new HashMap<>();
        rec.put("title", r.title);
        rec.put("author", r.author);
        rec.put("body", r.body);
        rec.put("sequence", Long.toString(r.sequence));
        rec.put("created", Long.toString(r.created));
        rec.put("priority", r.priority);
        rec.put("category", r.category);
        rec.put("flags", r.flags);
        rec.put("ttl", (int) r.ttl);
        records.add(rec);
      }
      out.put("records", records.toArray());
    }
    if (m.attachment != null && m.attachment.length > 0)
      out.put("attachment", m.attachment);
    return out;
  }

  @Override
  public void send(String queue, Object message) throws Exception {
    expectTrue(client.execute("wsbench.sendMessage", new Object[] {queue, message}), "sendMessage");
  }

  @Override
  public Object receive(String queue) throws Exception {
    return client.execute("wsbench.receiveMessages", new Object[] {queue});
  }

  @Override
  public void unregister(String queue) throws Exception {
    expectTrue(
        client.execute("wsbench.unregisterClient", new Object[] {queue}), "unregisterClient");
  }

  @Override
  public String text(Object reply) {
    return (String) reply;
  }

  @Override
  public Model.Body body(Object reply) {
    final Map<?, ?> struct = (Map<?, ?>) reply;
    if (struct.size() != 1)
      throw new IllegalStateException("payload members " + struct.keySet());
    final Model.Body out = new Model.Body();
    final Object value = struct.values().iterator().next();
    switch ((String) struct.keySet().iterator().next()) {
      case "ints":
        out.ints = new ArrayList<>();
        for (Object v : (Object[]) value) out.ints.add((Integer) v);
        break;
      case "strings":
        out.strings = new ArrayList<>();
        for (Object v : (Object[]) value) out.strings.add((String) v);
        break;
      case "objects":
        out.objects = new ArrayList<>();
        for (Object v : (Object[]) value) {
          final Map<?, ?> o = (Map<?, ?>) v;
          final Model.Obj obj = new Model.Obj();
          obj.id = (Integer) o.get("id");
          obj.name = (String) o.get("name");
          obj.value = (Double) o.get("value");
          obj.active = (Boolean) o.get("active");
          out.objects.add(obj);
        }
        break;
      case "message":
        out.message = message((Map<?, ?>) value);
        break;
      case "text":
        out.text = (String) value;
        break;
      default:
        throw new IllegalStateException("the driver does not compare " + struct.keySet());
    }
    return out;
  }

  @Override
  public List<Model.Msg> messages(Object reply) {
    final Object list = ((Map<?, ?>) reply).get("messages");
    if (!(list instanceof Object[]))
      throw new IllegalStateException("receiveMessages did not return a message list");
    final List<Model.Msg> out = new ArrayList<>();
    for (Object m : (Object[]) list) out.add(message((Map<?, ?>) m));
    return out;
  }

  private static void expectTrue(Object reply, String method) {
    if (!Boolean.TRUE.equals(reply))
      throw new IllegalStateException(method + " returned " + reply + ", not true");
  }

  private static Model.Msg message(Map<?, ?> m) {
    final Model.Msg out = new Model.Msg();
    out.recipient = (String) m.get("recipient");
    out.sender = (String) m.get("sender");
    out.authToken = (String) m.get("authToken");
    out.timestamp = Long.parseLong((String) m.get("timestamp"));
    out.records = new ArrayList<>();
    if (m.get("records") != null) {
      for (Object v : (Object[]) m.get("records")) {
        final Map<?, ?> r = (Map<?, ?>) v;
        final Model.Rec rec = new Model.Rec();
        rec.title = (String) r.get("title");
        rec.author = (String) r.get("author");
        rec.body = (String) r.get("body");
        rec.sequence = Long.parseLong((String) r.get("sequence"));
        rec.created = Long.parseLong((String) r.get("created"));
        rec.priority = (Integer) r.get("priority");
        rec.category = (Integer) r.get("category");
        rec.flags = (Integer) r.get("flags");
        final int ttl = (Integer) r.get("ttl");
        if (ttl != (short) ttl)
          throw new IllegalStateException("record ttl " + ttl + " is not a 16-bit value");
        rec.ttl = (short) ttl;
        out.records.add(rec);
      }
    }
    out.attachment = (byte[]) m.get("attachment");
    return out;
  }
}
