// The encoder both XML codecs write with (XmlWritingCodec,
// xml_codec_internal.h): the model, through Encoder, into one xmlTextWriter
// whose output goes straight to the caller's string. Shapes: xml_codec.cpp.
#include <libxml/parser.h>
#include <libxml/xmlIO.h>
#include <libxml/xmlwriter.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "rest/xml_codec_internal.h"

namespace wsb::rest::xml {

// ---- encoding: model -> xmlTextWriter ----

// One xmlTextWriter kept for the codec's lifetime: once the root element is
// closed its element stack is empty and it accepts the next StartDocument,
// so a timed loop does not pay for creating it.
class Writer {
 public:
  explicit Writer(XmlBase64 base64) : base64_(base64) {
    xmlOutputBufferPtr buffer = xmlOutputBufferCreateIO(&Writer::append, nullptr, &sink_, nullptr);
    if (buffer == nullptr) throw std::bad_alloc();
    writer_ = xmlNewTextWriter(buffer);  // owns the buffer from here on
    if (writer_ == nullptr) {
      xmlOutputBufferClose(buffer);
      throw std::bad_alloc();
    }
  }
  ~Writer() {
    sink_ = nullptr;  // drop whatever a failed encode left unflushed
    xmlFreeTextWriter(writer_);
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Starts a document that is flushed into `out`.
  void begin(std::string& out) {
    out.clear();
    sink_ = &out;
    depth_ = 0;
    // No encoding argument: UTF-8 is XML's default, and naming it would make
    // libxml2 run every byte through a UTF-8 -> UTF-8 converter.
    check(xmlTextWriterStartDocument(writer_, nullptr, nullptr, nullptr));
  }
  // Flushes the finished document into `out`. The root element is closed
  // already; xmlTextWriterEndDocument would only add a newline after it, and
  // without one the body ends with the root's end tag, so a body cut short by
  // even one byte is not well-formed.
  void end() {
    if (depth_ != 0) throw std::logic_error("xml: document ended inside an element");
    check(xmlTextWriterFlush(writer_));
    sink_ = nullptr;
  }

  // The root element declares the default namespace; the others inherit it.
  // `prefix` names a namespace declared on the root (declare()).
  void open(const char* name, const char* prefix = nullptr) {
    check(depth_++ == 0 ? xmlTextWriterStartElementNS(writer_, nullptr, x(name), x(kNamespace))
          : prefix != nullptr ? xmlTextWriterStartElementNS(writer_, x(prefix), x(name), nullptr)
                              : xmlTextWriterStartElement(writer_, x(name)));
  }
  // xmlns:prefix="uri" on the element just opened.
  void declare(const char* prefix, const char* uri) {
    check(xmlTextWriterWriteAttributeNS(writer_, x("xmlns"), x(prefix), nullptr, x(uri)));
  }
  // An attribute of the element just opened (escaped); `prefix` as in open().
  void attribute(const char* name, const char* value, const char* prefix = nullptr) {
    check(prefix != nullptr
              ? xmlTextWriterWriteAttributeNS(writer_, x(prefix), x(name), nullptr, x(value))
              : xmlTextWriterWriteAttribute(writer_, x(name), x(value)));
  }
  void close() {
    --depth_;
    check(xmlTextWriterEndElement(writer_));
  }

  void string(const char* name, const std::string& s, const char* prefix = nullptr) {
    // libxml2 takes NUL-terminated text and would silently stop at a NUL,
    // which XML 1.0 cannot carry at all.
    if (std::memchr(s.data(), '\0', s.size()) != nullptr)
      throw std::invalid_argument("xml: string contains U+0000, which XML cannot carry");
    open(name, prefix);
    check(xmlTextWriterWriteString(writer_, x(s.c_str())));  // escapes < > & " and CR
    close();
  }
  template <class T>
  void number(const char* name, T value) {
    char buf[32];
    const char* end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    raw(name, buf, end - buf);
  }
  void boolean(const char* name, bool value) {
    if (value)
      raw(name, "true", 4);
    else
      raw(name, "false", 5);
  }
  void base64(const char* name, const Bytes& bytes) {
    if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw std::length_error("xml: binary exceeds libxml2's int length");
    open(name);
    if (bytes.empty()) {
      // Both writers' output for no bytes; libxml2's rejects a null pointer.
    } else if (base64_ == XmlBase64::wrapped) {
      // libxml2's own base64; it breaks lines every 72 characters, which the
      // decoder skips as whitespace.
      check(xmlTextWriterWriteBase64(writer_, reinterpret_cast<const char*>(bytes.data()), 0,
                                     static_cast<int>(bytes.size())));
    } else {
      // One line, as gSOAP writes it; the alphabet needs no escaping.
      base64_text_.clear();
      base64_append(bytes.data(), bytes.size(), base64_text_);
      if (base64_text_.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw std::length_error("xml: base64 text exceeds libxml2's int length");
      check(xmlTextWriterWriteRawLen(writer_, x(base64_text_.c_str()),
                                     static_cast<int>(base64_text_.size())));
    }
    close();
  }
  // Text that needs no escaping (numbers) as the content of the element
  // just opened.
  void raw_text(const std::string& text) {
    check(xmlTextWriterWriteRawLen(writer_, x(text.c_str()), static_cast<int>(text.size())));
  }

 private:
  static int append(void* context, const char* data, int len) {
    if (std::string* out = *static_cast<std::string**>(context))
      out->append(data, static_cast<std::size_t>(len));
    return len;
  }
  // Numbers and booleans never need escaping, so they skip
  // xmlTextWriterWriteString's xmlEncodeSpecialChars scan and allocation.
  void raw(const char* name, const char* text, std::ptrdiff_t len) {
    open(name);
    check(xmlTextWriterWriteRawLen(writer_, x(text), static_cast<int>(len)));
    close();
  }
  static void check(int rc) {
    if (rc < 0) throw std::runtime_error("xml: xmlTextWriter failed");
  }

  std::string* sink_ = nullptr;  // the write callback's target during an encode
  xmlTextWriterPtr writer_ = nullptr;
  XmlBase64 base64_;
  std::string base64_text_;  // a one-line binary's text, reused
  int depth_ = 0;
};

namespace {

class Encoder {
 public:
  Encoder(Writer& w, std::string& scratch) : w_(w), scratch_(scratch) {}

  void operator()(const Text& p) { w_.string("text", p.value); }
  void operator()(const IntArray& p) {
    w_.open("ints");
    for (const auto v : p.values) w_.number("i", v);
    w_.close();
  }
  void operator()(const StringArray& p) {
    w_.open("strings");
    for (const auto& v : p.values) w_.string("s", v);
    w_.close();
  }
  void operator()(const ObjectArray& p) {
    w_.open("objects");
    for (const auto& o : p.values) {
      w_.open("object");
      w_.number("id", o.id);
      w_.string("name", o.name);
      w_.number("value", o.value);
      w_.boolean("active", o.active);
      w_.close();
    }
    w_.close();
  }
  void operator()(const MessageList& p) {
    w_.open("messages");
    for (const auto& m : p.messages) (*this)(m);
    w_.close();
  }
  void operator()(const Message& m) {
    w_.open("message");
    w_.string("recipient", m.meta.recipient);
    w_.string("sender", m.meta.sender);
    w_.string("authToken", m.meta.auth_token);
    w_.number("timestamp", m.meta.timestamp);
    if (!m.records.empty()) {
      w_.open("records");
      for (const auto& r : m.records) {
        w_.open("record");
        w_.string("title", r.title);
        w_.string("author", r.author);
        w_.string("body", r.body);
        w_.number("sequence", r.sequence);
        w_.number("created", r.created);
        w_.number("priority", r.priority);
        w_.number("category", r.category);
        w_.number("flags", r.flags);
        w_.number("ttl", r.ttl);
        w_.close();
      }
      w_.close();
    }
    if (!m.attachment.empty()) w_.base64("attachment", m.attachment);
    w_.close();
  }
  void operator()(const Binary& p) { w_.base64("binary", p.data); }
  void operator()(const BuildingCollection& p) {
    w_.open("buildings");
    w_.declare("gml", gml::kNamespace);
    for (const auto& b : p.buildings) {
      if (const std::string why = gml::problem(b); !why.empty())
        throw std::invalid_argument("xml: " + why);
      w_.open("featureMember", "gml");
      w_.open("Building");
      w_.attribute("id", b.id.c_str(), "gml");
      w_.string("name", b.name, "gml");
      w_.number("height", b.height);
      w_.number("floors", b.floors);
      w_.open("footprint");
      w_.open("Polygon", "gml");
      w_.attribute("srsName", gml::kSrsName);
      w_.open("exterior", "gml");
      w_.open("LinearRing", "gml");
      w_.open("posList", "gml");
      w_.attribute("srsDimension", gml::kSrsDimension);
      scratch_.clear();
      gml::append_pos_list(b.footprint, scratch_);
      w_.raw_text(scratch_);
      for (int i = 0; i < 7; ++i) w_.close();  // posList ... featureMember
    }
    w_.close();
  }

 private:
  Writer& w_;
  std::string& scratch_;
};

}  // namespace

XmlWritingCodec::XmlWritingCodec(XmlBase64 base64) : base64_(base64) { xmlInitParser(); }
XmlWritingCodec::~XmlWritingCodec() = default;

template <class Model>
void XmlWritingCodec::encode_model(const Model& in, std::string& out) {
  if (fresh()) {
    // Nothing carried over from the previous call: a new writer and
    // empty scratch text.
    writer_ = std::make_unique<Writer>(base64_);
    encode_scratch_ = std::string();
  }
  if (!writer_) writer_ = std::make_unique<Writer>(base64_);
  try {
    writer_->begin(out);
    visit_model(Encoder(*writer_, encode_scratch_), in);
    writer_->end();
  } catch (...) {
    writer_.reset();  // its element stack is unknown now; start afresh next time
    throw;
  }
}

std::string XmlWritingCodec::not_applicable(const Payload& payload) const {
  if (base64_ == XmlBase64::wrapped) return {};
  const auto attached = [](const Message& m) { return !m.attachment.empty(); };
  const auto* one = std::get_if<Message>(&payload);
  const auto* list = std::get_if<MessageList>(&payload);
  const auto* binary = std::get_if<Binary>(&payload);
  if ((one != nullptr && attached(*one)) || (binary != nullptr && !binary->data.empty()) ||
      (list != nullptr && std::any_of(list->messages.begin(), list->messages.end(), attached)))
    return {};
  return "no binary: xml-unwrapped output identical to xml";
}

void XmlWritingCodec::encode(const Payload& in, std::string& out) { encode_model(in, out); }
void XmlWritingCodec::encode_message(const Message& in, std::string& out) { encode_model(in, out); }

}  // namespace wsb::rest::xml
