package wsbench;

import java.util.ArrayList;
import java.util.List;

/** An operation of the runtime contract, named as the native rtt rows name it. */
final class Operation {
  enum Kind {
    PING("ping"),
    GET("get"),
    REGISTER("register"),
    SEND("send"),
    RECEIVE("receive"),
    UNREGISTER("unregister");

    final String name;

    Kind(String name) {
      this.name = name;
    }

    static Kind of(String name) {
      for (Kind k : values())
        if (k.name.equals(name))
          return k;
      throw new IllegalArgumentException("no operation " + name);
    }
  }

  static final String MESSAGE = "message-a/100";

  final Kind kind;
  final String label; // null for ping, register, unregister

  Operation(Kind kind, String label) {
    this.kind = kind;
    this.label = label;
  }

  /** E1 ping, E3 get (quick: 200 and 3200 items only), E5 register, send, receive, unregister. */
  static List<Operation> all(boolean quick) {
    final List<Operation> out = new ArrayList<>();
    out.add(new Operation(Kind.PING, null));
    final int[] sizes = quick ? new int[] {200, 3200} : new int[] {200, 400, 800, 1600, 3200};
    for (String kind : new String[] {"ints", "strings", "objects"})
      for (int n : sizes) out.add(new Operation(Kind.GET, kind + "/" + n));
    out.add(new Operation(Kind.REGISTER, null));
    out.add(new Operation(Kind.SEND, MESSAGE));
    out.add(new Operation(Kind.RECEIVE, MESSAGE));
    out.add(new Operation(Kind.UNREGISTER, null));
    return out;
  }

  /** e.g. "get/ints/3200", "ping". */
  String path() {
    return label == null ? kind.name : kind.name + "/" + label;
  }
}
