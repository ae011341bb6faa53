package wsbench.rest;

import jakarta.xml.bind.annotation.XmlAccessType;
import jakarta.xml.bind.annotation.XmlAccessorType;
import jakarta.xml.bind.annotation.XmlElement;
import jakarta.xml.bind.annotation.XmlElementWrapper;
import jakarta.xml.bind.annotation.XmlRootElement;
import jakarta.xml.bind.annotation.XmlType;
import jakarta.xml.bind.annotation.XmlValue;
import java.util.ArrayList;
import java.util.List;

/**
 * One class per root element of the REST XML bodies the driver sends or reads: text, ints,
 * strings, objects, message and messages (element order as the xml codec requires).
 */
public final class XmlBodies {
  private XmlBodies() {}

  @XmlRootElement(name = "text")
  @XmlAccessorType(XmlAccessType.FIELD)
  public static final class Text {
    @XmlValue public String value;
  }

  @XmlRootElement(name = "ints")
  @XmlAccessorType(XmlAccessType.FIELD)
  public static final class Ints {
    @XmlElement(name = "i") public List<Integer> values = new ArrayList<>();
  }

  @XmlRootElement(name = "strings")
  @XmlAccessorType(XmlAccessType.FIELD)
  public static final class Strings {
    @XmlElement(name = "s") public List<String> values = new ArrayList<>();
  }

  @XmlAccessorType(XmlAccessType.FIELD)
  @XmlType(propOrder = {"id", "name", "value", "active"})
  public static final class Obj {
    public int id;
    public String name;
    public double value;
    public boolean active;
  }

  @XmlRootElement(name = "objects")
  @XmlAccessorType(XmlAccessType.FIELD)
  public static final class Objects {
    @XmlElement(name = "object") public List<Obj> values = new ArrayList<>();
  }

  @XmlAccessorType(XmlAccessType.FIELD)
  @XmlType(propOrder = {"title", "author", "body", "sequence", "created", "priority", "category",
               "flags", "ttl"})
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
  }

  @XmlRootElement(name = "message")
  @XmlAccessorType(XmlAccessType.FIELD)
  @XmlType(propOrder = {"recipient", "sender", "authToken", "timestamp", "records", "attachment"})
  public static final class Message {
    public String recipient;
    public String sender;
    public String authToken;
    public long timestamp;

    // Null, not empty, when there are none: the codec wants no <records/> then.
    @XmlElementWrapper(name = "records") @XmlElement(name = "record") public List<Rec> records;

    public byte[] attachment;
  }

  @XmlRootElement(name = "messages")
  @XmlAccessorType(XmlAccessType.FIELD)
  public static final class Messages {
    @XmlElement(name = "message") public List<Message> values = new ArrayList<>();
  }
}
