package wsbench;

import jakarta.xml.ws.BindingProvider;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import wsbench.soap.Get;
import wsbench.soap.GetResponse;
import wsbench.soap.Message;
import wsbench.soap.Record;
import wsbench.soap.WsbenchPortType;

/** Apache CXF's JAX-WS proxy from the WSDL the gsoap server publishes, against gsoap. */
final class CxfClient implements Client {
  private final WsbenchPortType port;

  CxfClient(String address) throws Exception {
    // As a JAX-WS user does: the service from the server's WSDL, one port.
    port = new wsbench.soap.Wsbench(new URL("http://" + address + "/?wsdl")).getWsbench();
    ((BindingProvider) port)
        .getRequestContext()
        .put(BindingProvider.ENDPOINT_ADDRESS_PROPERTY, "http://" + address + "/");
  }

  @Override
  public Object ping() {
    return port.ping();
  }

  @Override
  public Object get(String label) {
    final Get request = new Get();
    final int slash = label.indexOf('/');
    request.setKind(label.substring(0, slash));
    request.setN(Long.parseLong(label.substring(slash + 1)));
    return port.get(request);
  }

  @Override
  public String register() {
    return port.registerClient();
  }

  @Override
  public Object message(Model.Msg m) {
    final Message out = new Message();
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
    if (m.attachment != null && m.attachment.length > 0) out.setAttachment(m.attachment);
    return out;
  }

  @Override
  public void send(String queue, Object message) {
    port.sendMessage(queue, (Message) message);
  }

  @Override
  public Object receive(String queue) {
    return port.receiveMessage(queue);
  }

  @Override
  public void unregister(String queue) {
    port.unregisterClient(queue);
  }

  @Override
  public String text(Object reply) {
    return (String) reply;
  }

  @Override
  public Model.Body body(Object reply) {
    final GetResponse r = (GetResponse) reply;
    final Model.Body out = new Model.Body();
    if (r.getInts() != null) out.ints = r.getInts().getItem();
    if (r.getStrings() != null) out.strings = r.getStrings().getItem();
    if (r.getObjects() != null) {
      out.objects = new ArrayList<>();
      for (wsbench.soap.Object o : r.getObjects().getObject()) {
        out.objects.add(Model.Obj.of(o.getId(), o.getName(), o.getValue(), o.isActive()));
      }
    }
    if (r.getMessage() != null) out.message = message(r.getMessage());
    if (r.getText() != null) out.text = r.getText();
    return out;
  }

  @Override
  public List<Model.Msg> messages(Object reply) {
    final List<Model.Msg> out = new ArrayList<>();
    for (java.lang.Object m : (List<?>) reply) out.add(message((Message) m));
    return out;
  }

  private static Model.Msg message(Message m) {
    final Model.Msg out = new Model.Msg();
    out.recipient = m.getRecipient();
    out.sender = m.getSender();
    out.authToken = m.getAuthToken();
    out.timestamp = m.getTimestamp();
    out.records = new ArrayList<>();
    for (Record r : m.getRecord()) {
      out.records.add(
          Model.Rec.of(
              r.getTitle(), r.getAuthor(), r.getBody(), r.getSequence(), r.getCreated(),
              r.getPriority(), r.getCategory(), r.getFlags(), r.getTtl()));
    }
    out.attachment = m.getAttachment();
    return out;
  }
}
