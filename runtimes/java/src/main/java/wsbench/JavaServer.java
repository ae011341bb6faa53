package wsbench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.Arrays;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.cxf.jaxws.JaxWsServerFactoryBean;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.jersey.grizzly2.httpserver.GrizzlyHttpServerFactory;
import org.glassfish.jersey.jackson.JacksonFeature;
import org.glassfish.jersey.server.ResourceConfig;

/**
 * The Java server: CXF JAX-WS on its embedded Jetty and Jersey on Grizzly, both on 127.0.0.1,
 * serving ping, get (the catalogue's payloads named on the command line), echo and the queues.
 * Prints "java-soap HOST:PORT" and "java-rest HOST:PORT", then serves until stdin closes.
 *
 * <p>Usage: JavaServer PAYLOAD_JSON LABEL...
 */
public final class JavaServer {
  private JavaServer() {}

  public static void main(String[] args) throws Exception {
    Logger.getLogger("").setLevel(Level.WARNING);
    if (args.length < 1) {
      System.err.println("usage: JavaServer PAYLOAD_JSON LABEL...");
      System.exit(2);
    }
    final List<String> labels = Arrays.asList(args).subList(1, args.length);
    final Catalogue catalogue = new Catalogue(args[0], labels);
    final Queues queues = new Queues();

    // CXF's Jetty transport takes a port, not 0: ask the kernel for a free one.
    final String soapAddress = "127.0.0.1:" + freePort();
    final JaxWsServerFactoryBean soap = new JaxWsServerFactoryBean();
    soap.setServiceBean(new SoapService(catalogue, queues));
    soap.setAddress("http://" + soapAddress + "/");
    final org.apache.cxf.endpoint.Server soapServer = soap.create();

    final ResourceConfig rest = new ResourceConfig()
                                    .register(new RestService(catalogue, queues))
                                    .register(RestService.Errors.class)
                                    .register(JacksonFeature.class)
                                    .register(ProtobufProvider.class);
    final HttpServer restServer =
        GrizzlyHttpServerFactory.createHttpServer(URI.create("http://127.0.0.1:0/"), rest);
    final int restPort = restServer.getListeners().iterator().next().getPort();

    System.out.println("java-soap " + soapAddress);
    System.out.println("java-rest 127.0.0.1:" + restPort);
    System.out.flush();
    // Until the driver closes our stdin (or dies).
    while (System.in.read() >= 0) continue;
    restServer.shutdownNow();
    soapServer.destroy();
    System.exit(0);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress("127.0.0.1", 0));
      return socket.getLocalPort();
    }
  }
}
