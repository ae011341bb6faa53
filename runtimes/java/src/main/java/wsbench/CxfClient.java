package wsbench;

import jakarta.xml.ws.BindingProvider;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import wsbench.soap.Get;
import wsbench.soap.GetResponse;
import wsbench.soap.Message;
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
    return Bindings.soapMessage(m);
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
    return Bindings.fromSoap((GetResponse) reply);
  }

  @Override
  public List<Model.Msg> messages(Object reply) {
    final List<Model.Msg> out = new ArrayList<>();
    for (java.lang.Object m : (List<?>) reply) out.add(Bindings.fromSoap((Message) m));
    return out;
  }
}
