package wsbench;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * The json codec's bodies (src/rest/json_codec.cpp) as Jackson binds them: what the Jersey JSON
 * client sends and reads, and the shape every client's reply is converted to before it is
 * compared with the catalogue (tests/payload_json prints the same shape).
 */
public final class Model {
  private Model() {}

  /** One body: exactly one member is set. Kinds the driver does not call are left out. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static final class Body {
    public String text;
    public List<Integer> ints;
    public List<String> strings;
    public List<Obj> objects;
    public Msg message;
    public List<Msg> messages;
  }

  public static final class Obj {
    public int id;
    public String name;
    public double value;
    public boolean active;

    static Obj of(int id, String name, double value, boolean active) {
      final Obj out = new Obj();
      out.id = id;
      out.name = name;
      out.value = value;
      out.active = active;
      return out;
    }
  }

  /** records and attachment are absent when empty, as the json codec writes them. */
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public static final class Msg {
    public String recipient;
    public String sender;
    public String authToken;
    public long timestamp;
    public List<Rec> records;
    public byte[] attachment;
  }

  public static final class Rec {
    public String title;
    public String author;
    public String body;
    public long sequence;
    public long created;
    public int priority;
    public int category;
    public int flags;
    public short ttl;

    static Rec of(String title, String author, String body, long sequence, long created,
        int priority, int category, int flags, short ttl) {
      final Rec out = new Rec();
      out.title = title;
      out.author = author;
      out.body = body;
      out.sequence = sequence;
      out.created = created;
      out.priority = priority;
      out.category = category;
      out.flags = flags;
      out.ttl = ttl;
      return out;
    }
  }
}
