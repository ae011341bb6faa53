package wsbench;

import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.xml.bind.JAXBContext;
import jakarta.xml.bind.JAXBException;
import java.io.InputStream;
import java.net.URI;
import wsbench.rest.XmlBodies;

/**
 * The Java server's REST side (Jersey): beast's routes for ping, get, echo and the queues, with
 * JSON (Jackson), XML (JAXB) and Protocol Buffers bodies chosen by Content-Type and Accept.
 */
@Path("/")
public final class RestService {
  static final String PROTOBUF = "application/x-protobuf";
  private static final JAXBContext XML;

  static {
    try {
      XML = JAXBContext.newInstance(XmlBodies.Text.class, XmlBodies.Ints.class,
          XmlBodies.Strings.class, XmlBodies.Objects.class, XmlBodies.Message.class,
          XmlBodies.Messages.class);
    } catch (JAXBException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Unknown queues and payloads are 404s, bad bodies 400s, as on beast. */
  public static final class Errors implements ExceptionMapper<RuntimeException> {
    @Override
    public Response toResponse(RuntimeException e) {
      if (e instanceof jakarta.ws.rs.WebApplicationException)
        return ((jakarta.ws.rs.WebApplicationException) e).getResponse();
      final int status = e instanceof Queues.UnknownQueue || e instanceof NotHeld ? 404 : 400;
      return Response.status(status).type(MediaType.TEXT_PLAIN).entity(e.getMessage()).build();
    }
  }

  static final class NotHeld extends RuntimeException {
    NotHeld(String label) {
      super("the Java server does not hold " + label);
    }
  }

  private final Catalogue catalogue;
  private final Queues queues;

  RestService(Catalogue catalogue, Queues queues) {
    this.catalogue = catalogue;
    this.queues = queues;
  }

  @GET
  @Path("ping")
  public Response ping(@HeaderParam("Accept") String accept) {
    final Model.Body body = new Model.Body();
    body.text = "pong";
    return reply(body, accept, MediaType.APPLICATION_JSON);
  }

  @GET
  @Path("payloads/{kind}/{n}")
  public Response get(@PathParam("kind") String kind, @PathParam("n") String n,
      @HeaderParam("Accept") String accept) {
    final Model.Body body = catalogue.model(kind + "/" + n);
    if (body == null)
      throw new NotHeld(kind + "/" + n);
    return reply(body, accept, MediaType.APPLICATION_JSON);
  }

  @POST
  @Path("echo")
  @Consumes(MediaType.APPLICATION_JSON)
  public Response echoJson(Model.Body body, @HeaderParam("Accept") String accept) {
    return reply(body, accept, MediaType.APPLICATION_JSON);
  }

  @POST
  @Path("echo")
  @Consumes(MediaType.APPLICATION_XML)
  public Response echoXml(InputStream body, @HeaderParam("Accept") String accept)
      throws JAXBException {
    return reply(Bindings.fromXml(XML.createUnmarshaller().unmarshal(body)), accept,
        MediaType.APPLICATION_XML);
  }

  @POST
  @Path("echo")
  @Consumes(PROTOBUF)
  public Response echoProtobuf(Wsbench.Response body, @HeaderParam("Accept") String accept) {
    return reply(Bindings.fromProtobuf(body), accept, PROTOBUF);
  }

  @POST
  @Path("queues")
  public Response register() {
    return Response.created(URI.create("/queues/" + queues.register())).build();
  }

  @PUT
  @Path("queues/{id}")
  @Consumes(MediaType.APPLICATION_JSON)
  public Response sendJson(@PathParam("id") String id, Model.Body body) {
    return send(id, body.message);
  }

  @PUT
  @Path("queues/{id}")
  @Consumes(MediaType.APPLICATION_XML)
  public Response sendXml(@PathParam("id") String id, XmlBodies.Message message) {
    return send(id, Bindings.fromXml(message));
  }

  @PUT
  @Path("queues/{id}")
  @Consumes(PROTOBUF)
  public Response sendProtobuf(@PathParam("id") String id, Wsbench.Response body) {
    return send(id, Bindings.fromProtobuf(body).message);
  }

  @GET
  @Path("queues/{id}")
  public Response receive(@PathParam("id") String id, @HeaderParam("Accept") String accept) {
    final Model.Body body = new Model.Body();
    body.messages = queues.receive(id);
    return reply(body, accept, MediaType.APPLICATION_JSON);
  }

  @DELETE
  @Path("queues/{id}")
  public Response unregister(@PathParam("id") String id) {
    queues.unregister(id);
    return Response.noContent().build();
  }

  private Response send(String id, Model.Msg message) {
    if (message == null)
      throw new IllegalArgumentException("PUT /queues/{id} takes a message");
    queues.send(id, message);
    return Response.noContent().build();
  }

  // The body in the format Accept names, else `fallback` (the request's own).
  private static Response reply(Model.Body body, String accept, String fallback) {
    final String type = accept == null || accept.isEmpty() || accept.contains("*/*") ? fallback
        : accept.contains(PROTOBUF)                                                  ? PROTOBUF
        : accept.contains("xml") ? MediaType.APPLICATION_XML
                                 : MediaType.APPLICATION_JSON;
    final Object entity = type.equals(PROTOBUF)  ? Bindings.protobufBody(body)
        : type.equals(MediaType.APPLICATION_XML) ? Bindings.xmlBody(body)
                                                 : body;
    return Response.ok(entity, type).build();
  }
}
