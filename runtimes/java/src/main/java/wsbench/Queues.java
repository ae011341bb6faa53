package wsbench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** The Java server's message queues (E5), in memory, as wsb::Service keeps them natively. */
final class Queues {
  /** A queue id nobody registered (or that was unregistered). */
  static final class UnknownQueue extends RuntimeException {
    UnknownQueue(String id) {
      super("no queue " + id);
    }
  }

  private final Map<String, List<Model.Msg>> queues = new ConcurrentHashMap<>();
  private final AtomicLong next = new AtomicLong(1);

  String register() {
    final String id = Long.toString(next.getAndIncrement());
    queues.put(id, new ArrayList<>());
    return id;
  }

  void send(String id, Model.Msg message) {
    final List<Model.Msg> queue = queue(id);
    synchronized (queue) {
      queue.add(message);
    }
  }

  /** Every message queued, removed from the queue. */
  List<Model.Msg> receive(String id) {
    final List<Model.Msg> queue = queue(id);
    synchronized (queue) {
      final List<Model.Msg> out = new ArrayList<>(queue);
      queue.clear();
      return out;
    }
  }

  void unregister(String id) {
    if (queues.remove(id) == null)
      throw new UnknownQueue(id);
  }

  private List<Model.Msg> queue(String id) {
    final List<Model.Msg> queue = queues.get(id);
    if (queue == null)
      throw new UnknownQueue(id);
    return queue;
  }
}
