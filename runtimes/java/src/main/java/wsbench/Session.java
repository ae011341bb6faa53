package wsbench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;

/**
 * One client calling one operation again and again, as bench/rtt_bench.cpp does natively: each
 * call's set-up (a queue to send to, a message to receive, a queue to unregister) and clean-up
 * (unregistering a registered queue, receiving a sent message) are untimed calls around it, and
 * every reply is checked against the catalogue after the timed region.
 */
final class Session implements AutoCloseable {
  /** A reply that differs from the catalogue. */
  static final class VerificationError extends Exception {
    VerificationError(String difference) {
      super("verification failed: " + difference);
    }
  }

  private final Client client;
  private final Operation op;
  private final JsonNode want;
  private final Object message; // send and receive: the message in the client's type
  private String queue;
  private Object reply;

  Session(Client client, Operation op, Catalogue catalogue) throws Exception {
    this.client = client;
    this.op = op;
    if (op.kind == Operation.Kind.GET) {
      want = catalogue.body(op.label);
      message = null;
    } else if (op.kind == Operation.Kind.SEND || op.kind == Operation.Kind.RECEIVE) {
      final ArrayNode one = Catalogue.MAPPER.createArrayNode();
      one.add(catalogue.body(op.label).get("message"));
      want = one;
      message = client.message(catalogue.message(op.label));
    } else {
      want = null;
      message = null;
    }
  }

  /** One call, verified; returns the nanoseconds of the call alone. */
  long timedCall() throws Exception {
    setUp();
    final long start = System.nanoTime();
    call();
    final long elapsed = System.nanoTime() - start;
    checkAndCleanUp();
    return elapsed;
  }

  /** For the cold call, whose timed region also covers the client's construction. */
  void setUp() throws Exception {
    switch (op.kind) {
      case SEND:
      case RECEIVE:
      case UNREGISTER:
        if (queue == null)
          queue = client.register();
        if (op.kind == Operation.Kind.RECEIVE)
          client.send(queue, message);
        break;
      default:
        break;
    }
  }

  void call() throws Exception {
    switch (op.kind) {
      case PING:
        reply = client.ping();
        break;
      case GET:
        reply = client.get(op.label);
        break;
      case REGISTER:
        reply = client.register();
        break;
      case SEND:
        client.send(queue, message);
        break;
      case RECEIVE:
        reply = client.receive(queue);
        break;
      case UNREGISTER:
        client.unregister(queue);
        queue = null;
        break;
    }
  }

  void checkAndCleanUp() throws Exception {
    switch (op.kind) {
      case PING:
        final String text = client.text(reply);
        if (!"pong".equals(text))
          throw new VerificationError("ping returned '" + text + "'");
        break;
      case GET:
        compare(Catalogue.MAPPER.valueToTree(client.body(reply)), "reply");
        break;
      case REGISTER:
        final String id = (String) reply;
        if (id == null || id.isEmpty())
          throw new VerificationError("empty queue id");
        client.unregister(id);
        break;
      case SEND:
        // What was sent comes back (untimed) and must be the catalogue's message.
        compare(Catalogue.MAPPER.valueToTree(client.messages(client.receive(queue))), "queued");
        break;
      case RECEIVE:
        compare(Catalogue.MAPPER.valueToTree(client.messages(reply)), "received");
        break;
      case UNREGISTER:
        break;
    }
    reply = null;
  }

  private void compare(JsonNode got, String where) throws VerificationError {
    final String found = Catalogue.difference(got, want, where);
    if (found != null)
      throw new VerificationError(found);
  }

  @Override
  public void close() throws Exception {
    if (queue != null)
      client.unregister(queue);
    queue = null;
  }
}
