package wsbench;

import jakarta.jws.WebService;
import java.util.ArrayList;
import java.util.List;
import wsbench.soap.EchoResponse;
import wsbench.soap.Get;
import wsbench.soap.GetResponse;
import wsbench.soap.Message;
import wsbench.soap.Payload;
import wsbench.soap.WsbenchPortType;

/**
 * The Java server's SOAP side: CXF serves the port type generated from the gsoap server's WSDL.
 * ping, get (from the catalogue), echo and the queues; primes, the dictionary (E7, E8) and the
 * upload (E9) are not served and answer a fault saying so.
 */
@WebService(endpointInterface = "wsbench.soap.WsbenchPortType", serviceName = "wsbench",
    portName = "wsbench", targetNamespace = "urn:wsbench")
final class SoapService implements WsbenchPortType {
  private final Catalogue catalogue;
  private final Queues queues;

  SoapService(Catalogue catalogue, Queues queues) {
    this.catalogue = catalogue;
    this.queues = queues;
  }

  @Override
  public String ping() {
    return "pong";
  }

  @Override
  public GetResponse get(Get request) {
    final String label = request.getKind() + "/" + request.getN();
    final Model.Body body = catalogue.model(label);
    if (body == null)
      throw new IllegalArgumentException("the Java server does not hold " + label);
    return Bindings.soapResponse(body);
  }

  @Override
  public EchoResponse echo(wsbench.soap.Echo request) {
    final Payload in = request.getPayload();
    final EchoResponse out = new EchoResponse();
    if (in == null)
      return out;
    out.setText(in.getText());
    out.setInts(in.getInts());
    out.setStrings(in.getStrings());
    out.setObjects(in.getObjects());
    out.setMessage(in.getMessage());
    out.setBinary(in.getBinary());
    out.setBuildings(in.getBuildings());
    out.setMessages(in.getMessages());
    out.setBuildingsDocument(in.getBuildingsDocument());
    return out;
  }

  @Override
  public String registerClient() {
    return queues.register();
  }

  @Override
  public void sendMessage(String queue, Message message) {
    if (message == null)
      throw new IllegalArgumentException("SendMessage without a message");
    queues.send(queue, Bindings.fromSoap(message));
  }

  @Override
  public List<Message> receiveMessage(String queue) {
    final List<Message> out = new ArrayList<>();
    for (Model.Msg m : queues.receive(queue)) out.add(Bindings.soapMessage(m));
    return out;
  }

  @Override
  public void unregisterClient(String queue) {
    queues.unregister(queue);
  }

  @Override
  public String primes(long n) {
    throw new UnsupportedOperationException("the Java server does not serve primes (E7)");
  }

  @Override
  public void put(String word, String definition) {
    throw new UnsupportedOperationException("the Java server does not serve the dictionary (E8)");
  }

  @Override
  public String define(String word) {
    throw new UnsupportedOperationException("the Java server does not serve the dictionary (E8)");
  }

  @Override
  public String upload(Payload payload) {
    throw new UnsupportedOperationException("the Java server does not serve E9's upload");
  }
}
