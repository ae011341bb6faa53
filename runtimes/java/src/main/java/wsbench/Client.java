package wsbench;

import java.util.List;

/**
 * One client library against one native server. The calls are what is timed; building their
 * arguments and converting their replies to the json codec's shape (for comparison with the
 * catalogue) are not.
 */
interface Client extends AutoCloseable {
  Object ping() throws Exception;

  /** GET of a catalogue payload, e.g. "ints/3200". */
  Object get(String label) throws Exception;

  String register() throws Exception;

  /** The message in the client's own type, built once before the timed calls. */
  Object message(Model.Msg message);

  void send(String queue, Object message) throws Exception;

  Object receive(String queue) throws Exception;

  void unregister(String queue) throws Exception;

  /** ping's reply as a string. */
  String text(Object pingReply);

  /** get's reply in the json codec's shape. */
  Model.Body body(Object getReply);

  /** receive's reply in the json codec's shape. */
  List<Model.Msg> messages(Object receiveReply);

  @Override
  default void close() {}
}
