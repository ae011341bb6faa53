package wsbench;

import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.ext.MessageBodyReader;
import jakarta.ws.rs.ext.MessageBodyWriter;
import jakarta.ws.rs.ext.Provider;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.annotation.Annotation;
import java.lang.reflect.Type;

/** Jersey reads and writes wsbench.Response bodies as application/x-protobuf with this. */
@Provider
@Consumes("application/x-protobuf")
@Produces("application/x-protobuf")
public final class ProtobufProvider
    implements MessageBodyReader<Wsbench.Response>, MessageBodyWriter<Wsbench.Response> {
  static final MediaType TYPE = new MediaType("application", "x-protobuf");

  @Override
  public boolean isReadable(
      Class<?> type, Type generic, Annotation[] annotations, MediaType mediaType) {
    return type == Wsbench.Response.class && TYPE.isCompatible(mediaType);
  }

  @Override
  public Wsbench.Response readFrom(Class<Wsbench.Response> type, Type generic,
      Annotation[] annotations, MediaType mediaType, MultivaluedMap<String, String> headers,
      InputStream body) throws IOException {
    return Wsbench.Response.parseFrom(body);
  }

  @Override
  public boolean isWriteable(
      Class<?> type, Type generic, Annotation[] annotations, MediaType mediaType) {
    return type == Wsbench.Response.class && TYPE.isCompatible(mediaType);
  }

  @Override
  public void writeTo(Wsbench.Response message, Class<?> type, Type generic,
      Annotation[] annotations, MediaType mediaType,
      MultivaluedMap<String, java.lang.Object> headers, OutputStream out) throws IOException {
    message.writeTo(out);
  }
}
