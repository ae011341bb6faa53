// Plain-XML bodies via libxml2: `xml` streams both ways, `xml-dom` reads
// the same bytes through a tree.
//
// Encode drives an xmlTextWriter whose xmlOutputBuffer hands each flushed
// chunk straight to the caller's std::string (no xmlBuffer in between);
// `xml` decodes by pulling nodes from an xmlTextReader straight into the
// model. Neither direction builds a tree, so there is no representation to
// time apart and its stages() is null. `xml-dom` encodes the same way and
// decodes as a DOM user does (the paper's E2 parsed with PHP's simplexml):
// xmlCtxtReadMemory builds the document tree (its `read` stage), then the
// same decoder walks the tree into the model (`unbind`), with the same
// checks and the same parser options.
//
// Body shapes, all elements in the default namespace kNamespace below (the
// root carries the declaration); names follow the JSON codec's members:
//   <text>...</text>              <ints><i>1</i>...</ints>
//   <strings><s>...</s>...</strings>
//   <objects><object><id/><name/><value/><active/></object>...</objects>
//   <message><recipient/><sender/><authToken/><timestamp/>
//            <records><record><title/><author/><body/><sequence/><created/>
//                     <priority/><category/><flags/><ttl/></record>...</records>
//            <attachment>base64</attachment></message>
//   <messages><message>...</message>...</messages>
//   <binary>base64</binary>
//   <buildings xmlns:gml="http://www.opengis.net/gml">   (GML 3, common/gml.h)
//     <gml:featureMember><Building gml:id="..."><gml:name/><height/><floors/>
//       <footprint><gml:Polygon srsName="..."><gml:exterior><gml:LinearRing>
//         <gml:posList srsDimension="2">x1 y1 x2 y2 ...</gml:posList>
//       </gml:LinearRing></gml:exterior></gml:Polygon></footprint>
//     </Building></gml:featureMember>...</buildings>
// <records> and <attachment> are omitted when empty; every other element is
// required, in this order. Numbers are std::to_chars output (shortest form
// that round-trips), booleans "true"/"false". The decoder rejects unknown,
// missing, repeated or misplaced elements, attributes other than namespace
// declarations and the GML ones above, DTDs and entity references; it skips
// comments, processing instructions and whitespace between elements, as an
// XML consumer should.
#include <libxml/parser.h>
#include <libxml/xmlIO.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlwriter.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/base64.h"
#include "common/gml.h"
#include "rest/rest_codecs.h"

namespace wsb::rest {
namespace {

constexpr const char* kNamespace = "urn:wsbench:rest";

// Parser options. No XML_PARSE_NOENT and no DTD loading (libxml2's defaults):
// external entities are never loaded and entities are never substituted
// into text; the decoder also refuses any DTD or entity reference it meets.
// NONET forbids network access outright. HUGE lifts libxml2's
// 10,000,000-byte cap on one text node, which a 64 MiB binary (about 92 MB of
// base64) exceeds; the other limits it relaxes (element depth, entity
// amplification) do not apply to documents the decoder accepts.
constexpr int kReaderOptions = XML_PARSE_NONET | XML_PARSE_HUGE;

const xmlChar* x(const char* s) { return reinterpret_cast<const xmlChar*>(s); }

// ---- encoding: model -> xmlTextWriter ----

// One xmlTextWriter kept for the codec's lifetime: once the root element is
// closed its element stack is empty and it accepts the next StartDocument,
// so a timed loop does not pay for creating it.
class Writer {
 public:
  Writer() {
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
    // libxml2's own base64; it breaks lines every 72 characters, which the
    // decoder skips as whitespace. It rejects a null pointer, so an empty
    // binary is just an empty element.
    if (!bytes.empty())
      check(xmlTextWriterWriteBase64(writer_, reinterpret_cast<const char*>(bytes.data()), 0,
                                     static_cast<int>(bytes.size())));
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
  int depth_ = 0;
};

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

// ---- decoding: xmlTextReader -> model, every node checked ----

[[noreturn]] void fail(std::string_view what) { throw DecodeError("xml: " + std::string(what)); }

std::string_view view(const xmlChar* s) {
  return s == nullptr ? std::string_view() : std::string_view(reinterpret_cast<const char*>(s));
}

// An attribute an element must carry: `ns` is its namespace URI (nullptr:
// none), its value goes to `value`.
struct Attribute {
  const char* ns;
  const char* name;
  std::string* value;
};
using Attributes = std::initializer_list<Attribute>;

// A pull cursor over the document. `type_` is the current node: after
// advance() it is a start tag, an end tag or XML_READER_TYPE_NONE (end of
// document), since whitespace, comments and processing instructions between
// elements are skipped. One reader is reused across decodes
// (xmlReaderNewMemory), keeping its parser context and name dictionary.
class Reader {
 public:
  Reader() = default;
  ~Reader() {
    if (reader_ != nullptr) xmlFreeTextReader(reader_);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Starts reading `wire` (which must outlive the decode) and moves to the
  // root element. `fresh`: a new xmlTextReader rather than the reset one.
  void start(std::string_view wire, bool fresh) {
    if (wire.empty()) fail("empty body");
    if (wire.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      fail("body exceeds libxml2's 2 GiB limit");
    const int size = static_cast<int>(wire.size());
    if (fresh && reader_ != nullptr) {
      xmlFreeTextReader(reader_);
      reader_ = nullptr;
    }
    if (reader_ == nullptr) {
      reader_ = xmlReaderForMemory(wire.data(), size, nullptr, nullptr, kReaderOptions);
      if (reader_ == nullptr) throw std::bad_alloc();
    } else if (xmlReaderNewMemory(reader_, wire.data(), size, nullptr, nullptr, kReaderOptions) !=
               0) {
      throw std::runtime_error("xml: cannot reset the xmlTextReader");
    }
    // Set per document: errors come here instead of libxml2's default
    // handler, which prints to stderr.
    xmlTextReaderSetStructuredErrorHandler(reader_, &Reader::on_error, this);
    error_[0] = '\0';
    advance();
    if (type_ != XML_READER_TYPE_ELEMENT) fail("no root element");
  }

  // The document must end after the root element.
  void finish() {
    if (type_ != XML_READER_TYPE_NONE) fail("content after the root element");
  }

  // Local name of the current start tag (the root element, for dispatch).
  std::string_view local_name() const { return view(xmlTextReaderConstLocalName(reader_)); }

  bool at(const char* name) const {
    return type_ == XML_READER_TYPE_ELEMENT && local_name() == name;
  }
  bool at_element() const { return type_ == XML_READER_TYPE_ELEMENT; }

  // Consumes the start tag <name> in namespace `ns`, which must carry
  // exactly `attributes` (besides namespace declarations). Returns false for
  // an empty element (<name/>), which has no end tag to close().
  bool open(const char* name, const char* ns = kNamespace, Attributes attributes = {}) {
    expect(name, ns, attributes);
    const bool has_content = xmlTextReaderIsEmptyElement(reader_) != 1;
    advance();
    return has_content;
  }
  // Consumes the end tag of the element last opened.
  void close() {
    if (type_ == XML_READER_TYPE_ELEMENT)
      fail("unexpected element <" + std::string(local_name()) + ">");
    if (type_ != XML_READER_TYPE_END_ELEMENT) fail("document ends inside an element");
    advance();
  }

  // Consumes <name>text</name> (or <name/>), which must hold no element,
  // replacing `out` with the text; `ns` and `attributes` as in open().
  void text(const char* name, std::string& out, const char* ns = kNamespace,
            Attributes attributes = {}) {
    expect(name, ns, attributes);
    out.clear();
    if (xmlTextReaderIsEmptyElement(reader_) != 1) {
      for (;;) {
        const int type = read();
        if (type == XML_READER_TYPE_TEXT || type == XML_READER_TYPE_CDATA ||
            type == XML_READER_TYPE_WHITESPACE || type == XML_READER_TYPE_SIGNIFICANT_WHITESPACE) {
          out += view(xmlTextReaderConstValue(reader_));
        } else if (type == XML_READER_TYPE_END_ELEMENT) {
          break;
        } else if (type == XML_READER_TYPE_ELEMENT) {
          fail(std::string("<") + name + "> must hold text, found element <" +
               std::string(local_name()) + ">");
        } else if (type != XML_READER_TYPE_COMMENT &&
                   type != XML_READER_TYPE_PROCESSING_INSTRUCTION) {
          unexpected(type);
        }
      }
    }
    advance();
  }

 private:
  // Reads the next node of any kind; XML_READER_TYPE_NONE at the end.
  int read() {
    const int rc = xmlTextReaderRead(reader_);
    if (error_[0] != '\0') fail(error_.data());
    if (rc < 0) fail("malformed document");
    return rc == 0 ? XML_READER_TYPE_NONE : xmlTextReaderNodeType(reader_);
  }

  void advance() {
    for (;;) {
      type_ = read();
      switch (type_) {
        case XML_READER_TYPE_NONE:
        case XML_READER_TYPE_ELEMENT:
        case XML_READER_TYPE_END_ELEMENT:
          return;
        case XML_READER_TYPE_WHITESPACE:
        case XML_READER_TYPE_SIGNIFICANT_WHITESPACE:
        case XML_READER_TYPE_COMMENT:
        case XML_READER_TYPE_PROCESSING_INSTRUCTION:
          continue;
        case XML_READER_TYPE_TEXT:
        case XML_READER_TYPE_CDATA:
          fail("unexpected text between elements");
        default:
          unexpected(type_);
      }
    }
  }

  [[noreturn]] void unexpected(int type) const {
    if (type == XML_READER_TYPE_DOCUMENT_TYPE) fail("DTDs are not accepted");
    if (type == XML_READER_TYPE_ENTITY_REFERENCE)
      fail("entity reference &" + std::string(local_name()) + "; is not accepted");
    fail("unexpected node of type " + std::to_string(type));
  }

  // The current node must be the start tag <name> in namespace `ns`, with
  // exactly `attributes` besides namespace declarations.
  void expect(const char* name, const char* ns, Attributes attributes) const {
    if (type_ != XML_READER_TYPE_ELEMENT)
      fail(std::string("expected <") + name + ">, found " +
           (type_ == XML_READER_TYPE_END_ELEMENT ? "</" + std::string(local_name()) + ">"
                                                 : std::string("the end of the document")));
    if (local_name() != name)
      fail(std::string("expected <") + name + ">, found <" + std::string(local_name()) + ">");
    if (view(xmlTextReaderConstNamespaceUri(reader_)) != ns)
      fail(std::string("<") + name + "> is not in namespace " + ns);
    std::size_t found = 0;
    if (xmlTextReaderHasAttributes(reader_) == 1) {
      for (int rc = xmlTextReaderMoveToFirstAttribute(reader_); rc == 1;
           rc = xmlTextReaderMoveToNextAttribute(reader_)) {
        if (xmlTextReaderIsNamespaceDecl(reader_) == 1) continue;
        const auto wanted = std::find_if(attributes.begin(), attributes.end(), [&](const auto& a) {
          return local_name() == a.name &&
                 view(xmlTextReaderConstNamespaceUri(reader_)) == view(x(a.ns));
        });
        if (wanted == attributes.end())
          fail("unexpected attribute " + std::string(view(xmlTextReaderConstName(reader_))) +
               " on <" + name + ">");
        wanted->value->assign(view(xmlTextReaderConstValue(reader_)));
        ++found;  // a repeated attribute is not well-formed: libxml2 rejects it
      }
      xmlTextReaderMoveToElement(reader_);
    }
    if (found != attributes.size())
      fail(std::string("<") + name + "> lacks a required attribute (" +
           std::to_string(attributes.size()) + " required, " + std::to_string(found) + " found)");
  }

  // Keeps the first error. Called from C, so it must not throw: it only
  // formats into a fixed buffer.
  static void on_error(void* self, xmlErrorPtr error) {
    auto& reader = *static_cast<Reader*>(self);
    if (error == nullptr || error->level < XML_ERR_ERROR || reader.error_[0] != '\0') return;
    std::snprintf(reader.error_.data(), reader.error_.size(), "line %d column %d: %s", error->line,
                  error->int2, error->message != nullptr ? error->message : "parse error");
    // libxml2's messages end with a newline.
    const std::size_t len = std::strlen(reader.error_.data());
    if (len > 0 && reader.error_[len - 1] == '\n') reader.error_[len - 1] = '\0';
  }

  xmlTextReaderPtr reader_ = nullptr;
  int type_ = XML_READER_TYPE_NONE;
  std::array<char, 512> error_{};
};

template <class T>
T number_of(std::string_view s, const char* what) {
  T value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
    const char* type = std::is_floating_point_v<T> ? "a number"
                       : sizeof(T) == 2            ? "a 16-bit integer"
                       : sizeof(T) == 4            ? "a 32-bit integer"
                                                   : "a 64-bit integer";
    fail(std::string("<") + what + "> '" + std::string(s.substr(0, 40)) + "' is not " + type);
  }
  return value;
}

// The shape of each payload, over either cursor: Reader (streaming) or
// DomCursor (a parsed tree), which offer the same calls.
template <class Cursor>
class Decoder {
 public:
  Decoder(Cursor& r, std::string& scratch) : r_(r), scratch_(scratch) {}

  void payload(Payload& out) {
    const std::string_view kind = r_.local_name();
    if (kind == "text") {
      Text p;
      r_.text("text", p.value);
      out = std::move(p);
    } else if (kind == "ints") {
      IntArray p;
      if (r_.open("ints")) {
        while (r_.at_element()) p.values.push_back(number<std::int32_t>("i"));
        r_.close();
      }
      out = std::move(p);
    } else if (kind == "strings") {
      StringArray p;
      if (r_.open("strings")) {
        while (r_.at_element()) r_.text("s", p.values.emplace_back());
        r_.close();
      }
      out = std::move(p);
    } else if (kind == "objects") {
      ObjectArray p;
      if (r_.open("objects")) {
        while (r_.at_element()) p.values.push_back(object());
        r_.close();
      }
      out = std::move(p);
    } else if (kind == "message") {
      out = message();
    } else if (kind == "messages") {
      MessageList p;
      if (r_.open("messages")) {
        while (r_.at_element()) p.messages.push_back(message());
        r_.close();
      }
      out = std::move(p);
    } else if (kind == "binary") {
      Binary p;
      bytes("binary", p.data);
      out = std::move(p);
    } else if (kind == "buildings") {
      BuildingCollection p;
      if (r_.open("buildings")) {
        while (r_.at_element()) building(p.buildings.emplace_back());
        r_.close();
      }
      out = std::move(p);
    } else {
      fail("unknown root element <" + std::string(kind) + ">");
    }
    r_.finish();
  }

 private:
  template <class T>
  T number(const char* name) {
    r_.text(name, scratch_);
    return number_of<T>(scratch_, name);
  }

  bool boolean(const char* name) {
    r_.text(name, scratch_);
    if (scratch_ == "true") return true;
    if (scratch_ == "false") return false;
    fail(std::string("<") + name + "> '" + scratch_.substr(0, 40) + "' is not true or false");
  }

  void bytes(const char* name, Bytes& out) {
    r_.text(name, scratch_);
    try {
      base64_decode(scratch_, out);
    } catch (const DecodeError& e) {
      fail(std::string("<") + name + ">: " + e.what());
    }
  }

  Object object() {
    Object o;
    r_.open("object");
    o.id = number<std::int32_t>("id");
    r_.text("name", o.name);
    o.value = number<double>("value");
    o.active = boolean("active");
    r_.close();
    return o;
  }

  Record record() {
    Record r;
    r_.open("record");
    r_.text("title", r.title);
    r_.text("author", r.author);
    r_.text("body", r.body);
    r.sequence = number<std::int64_t>("sequence");
    r.created = number<std::int64_t>("created");
    r.priority = number<std::int32_t>("priority");
    r.category = number<std::int32_t>("category");
    r.flags = number<std::int32_t>("flags");
    r.ttl = number<std::int16_t>("ttl");
    r_.close();
    return r;
  }

  Message message() {
    Message m;
    r_.open("message");
    r_.text("recipient", m.meta.recipient);
    r_.text("sender", m.meta.sender);
    r_.text("authToken", m.meta.auth_token);
    m.meta.timestamp = number<std::int64_t>("timestamp");
    if (r_.at("records") && r_.open("records")) {
      while (r_.at_element()) m.records.push_back(record());
      r_.close();
    }
    if (r_.at("attachment")) bytes("attachment", m.attachment);
    r_.close();
    return m;
  }

  // One gml:featureMember (layout at the top of this file).
  void building(Building& b) {
    r_.open("featureMember", gml::kNamespace);
    r_.open("Building", kNamespace, {{gml::kNamespace, "id", &b.id}});
    r_.text("name", b.name, gml::kNamespace);
    b.height = number<double>("height");
    b.floors = number<std::int32_t>("floors");
    r_.open("footprint");
    r_.open("Polygon", gml::kNamespace, {{nullptr, "srsName", &attribute_}});
    if (attribute_ != gml::kSrsName)
      fail("gml:Polygon srsName '" + attribute_.substr(0, 60) + "' is not " + gml::kSrsName);
    r_.open("exterior", gml::kNamespace);
    r_.open("LinearRing", gml::kNamespace);
    r_.text("posList", scratch_, gml::kNamespace, {{nullptr, "srsDimension", &attribute_}});
    if (attribute_ != gml::kSrsDimension) fail("gml:posList srsDimension must be 2");
    if (const std::string why = gml::parse_pos_list(scratch_, b.footprint); !why.empty())
      fail("gml:" + why);
    for (int i = 0; i < 6; ++i) r_.close();  // LinearRing ... featureMember
    if (const std::string why = gml::problem(b); !why.empty()) fail(why);
  }

  Cursor& r_;
  std::string& scratch_;
  std::string attribute_;
};

// ---- xml-dom: a libxml2 document tree, walked by the same decoder ----

bool is_xml_space(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

[[noreturn]] void unexpected_node(const xmlNode* n) {
  if (n->type == XML_ENTITY_REF_NODE)
    fail("entity reference &" + std::string(view(n->name)) + "; is not accepted");
  fail("unexpected node of type " + std::to_string(n->type));
}

// The first element from `n` on among its siblings, skipping what the
// streaming reader skips between elements (white space, comments,
// processing instructions) and refusing what it refuses.
const xmlNode* element_from(const xmlNode* n) {
  for (; n != nullptr; n = n->next) {
    switch (n->type) {
      case XML_ELEMENT_NODE:
        return n;
      case XML_TEXT_NODE:
        if (!is_xml_space(view(n->content))) fail("unexpected text between elements");
        continue;
      case XML_COMMENT_NODE:
      case XML_PI_NODE:
        continue;
      case XML_CDATA_SECTION_NODE:
        fail("unexpected text between elements");
      default:
        unexpected_node(n);
    }
  }
  return nullptr;
}

// Reader's calls over a parsed tree: the current node is an element, or
// null at the end of its parent's children (where Reader is at an end tag).
class DomCursor {
 public:
  explicit DomCursor(const xmlDoc* doc) {
    if (doc->intSubset != nullptr) fail("DTDs are not accepted");
    current_ = element_from(doc->children);
    if (current_ == nullptr) fail("no root element");
  }

  void finish() {
    if (!open_.empty() || current_ != nullptr) fail("content after the root element");
  }

  std::string_view local_name() const { return view(current_->name); }
  bool at(const char* name) const { return current_ != nullptr && local_name() == name; }
  bool at_element() const { return current_ != nullptr; }

  // A tree does not tell <a/> from <a></a>: both have content to close().
  bool open(const char* name, const char* ns = kNamespace, Attributes attributes = {}) {
    expect(name, ns, attributes);
    open_.push_back(current_);
    current_ = element_from(current_->children);
    return true;
  }
  void close() {
    if (current_ != nullptr) fail("unexpected element <" + std::string(local_name()) + ">");
    current_ = element_from(open_.back()->next);
    open_.pop_back();
  }

  void text(const char* name, std::string& out, const char* ns = kNamespace,
            Attributes attributes = {}) {
    expect(name, ns, attributes);
    out.clear();
    append_text(current_->children, name, out);
    current_ = element_from(current_->next);
  }

 private:
  static void append_text(const xmlNode* n, const char* name, std::string& out) {
    for (; n != nullptr; n = n->next) {
      if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE)
        out += view(n->content);
      else if (n->type == XML_ELEMENT_NODE)
        fail(std::string("<") + name + "> must hold text, found element <" +
             std::string(view(n->name)) + ">");
      else if (n->type != XML_COMMENT_NODE && n->type != XML_PI_NODE)
        unexpected_node(n);
    }
  }

  void expect(const char* name, const char* ns, Attributes attributes) {
    if (current_ == nullptr)
      fail(std::string("expected <") + name + ">, found " +
           (open_.empty() ? std::string("the end of the document")
                          : "</" + std::string(view(open_.back()->name)) + ">"));
    if (local_name() != name)
      fail(std::string("expected <") + name + ">, found <" + std::string(local_name()) + ">");
    if (view(current_->ns == nullptr ? nullptr : current_->ns->href) != ns)
      fail(std::string("<") + name + "> is not in namespace " + ns);
    // Namespace declarations are nsDef, not attributes, in a tree.
    std::size_t found = 0;
    for (const xmlAttr* a = current_->properties; a != nullptr; a = a->next) {
      const std::string_view a_ns = view(a->ns == nullptr ? nullptr : a->ns->href);
      const auto wanted = std::find_if(attributes.begin(), attributes.end(), [&](const auto& w) {
        return view(a->name) == w.name && a_ns == view(x(w.ns));
      });
      if (wanted == attributes.end())
        fail("unexpected attribute " + std::string(view(a->name)) + " on <" + name + ">");
      wanted->value->clear();
      append_text(a->children, name, *wanted->value);
      ++found;
    }
    if (found != attributes.size())
      fail(std::string("<") + name + "> lacks a required attribute (" +
           std::to_string(attributes.size()) + " required, " + std::to_string(found) + " found)");
  }

  const xmlNode* current_ = nullptr;
  std::vector<const xmlNode*> open_;  // the elements opened and not closed, innermost last
};

// The parser context xmlCtxtReadMemory reuses (its name dictionary and
// buffers) from one document to the next, and the tree it last built.
class DomParser {
 public:
  DomParser() = default;
  ~DomParser() { reset(true); }
  DomParser(const DomParser&) = delete;
  DomParser& operator=(const DomParser&) = delete;

  // Replaces the tree with that of `wire`. `fresh`: a new parser context.
  void parse(std::string_view wire, bool fresh) {
    reset(fresh);
    if (wire.empty()) fail("empty body");
    if (wire.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      fail("body exceeds libxml2's 2 GiB limit");
    if (ctxt_ == nullptr) {
      ctxt_ = xmlNewParserCtxt();
      if (ctxt_ == nullptr) throw std::bad_alloc();
    }
    // NOERROR, NOWARNING: the error is reported from the context, not
    // printed to stderr.
    doc_ = xmlCtxtReadMemory(ctxt_, wire.data(), static_cast<int>(wire.size()), nullptr, nullptr,
                             kReaderOptions | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    const xmlError* error = xmlCtxtGetLastError(ctxt_);
    if (doc_ == nullptr || (error != nullptr && error->level >= XML_ERR_ERROR)) {
      std::string what = "malformed document";
      if (error != nullptr && error->message != nullptr) {
        what = "line " + std::to_string(error->line) + " column " + std::to_string(error->int2) +
               ": " + error->message;
        if (what.back() == '\n') what.pop_back();
      }
      reset(false);
      fail(what);
    }
  }

  const xmlDoc* doc() const { return doc_; }

 private:
  void reset(bool context_too) {
    if (doc_ != nullptr) xmlFreeDoc(doc_);
    doc_ = nullptr;
    if (context_too && ctxt_ != nullptr) {
      xmlFreeParserCtxt(ctxt_);
      ctxt_ = nullptr;
    }
  }

  xmlParserCtxtPtr ctxt_ = nullptr;
  xmlDocPtr doc_ = nullptr;
};

// What both XML codecs write: the streaming encoder.
class XmlWritingCodec : public Codec {
 public:
  XmlWritingCodec() { xmlInitParser(); }

  void encode(const Payload& in, std::string& out) final { encode_model(in, out); }
  void encode_message(const Message& in, std::string& out) final { encode_model(in, out); }

  std::string content_type() const final { return "application/xml"; }

 private:
  template <class Model>
  void encode_model(const Model& in, std::string& out) {
    if (fresh()) {
      // Nothing carried over from the previous call: a new writer and
      // empty scratch text.
      writer_ = std::make_unique<Writer>();
      encode_scratch_ = std::string();
    }
    if (!writer_) writer_ = std::make_unique<Writer>();
    try {
      writer_->begin(out);
      visit_model(Encoder(*writer_, encode_scratch_), in);
      writer_->end();
    } catch (...) {
      writer_.reset();  // its element stack is unknown now; start afresh next time
      throw;
    }
  }

  std::unique_ptr<Writer> writer_;
  std::string encode_scratch_;  // footprint text, reused across encodes
};

class XmlCodec final : public XmlWritingCodec {
 public:
  void decode(std::string_view wire, Payload& out) override {
    if (fresh()) decode_scratch_ = std::string();
    reader_.start(wire, fresh());
    Decoder<Reader>(reader_, decode_scratch_).payload(out);
  }

 private:
  Reader reader_;
  std::string decode_scratch_;  // element text (up to a whole base64 binary), reused
};

// decode == read (the tree) then unbind (the walk); encode is xml's.
class XmlDomCodec final : public XmlWritingCodec, public CodecStages {
 public:
  void decode(std::string_view wire, Payload& out) override {
    read(wire);
    unbind(out);
  }
  CodecStages* stages() override { return this; }
  bool splits_encode() const override { return false; }
  bool splits_decode() const override { return true; }
  void bind(const Payload&) override { throw std::logic_error("xml-dom: encoding has no stages"); }
  void write(std::string&) override { throw std::logic_error("xml-dom: encoding has no stages"); }

  void read(std::string_view wire) override { parser_.parse(wire, fresh()); }
  void unbind(Payload& out) override {
    if (parser_.doc() == nullptr) throw std::logic_error("xml-dom: unbind() without a good read()");
    if (fresh()) scratch_ = std::string();
    DomCursor cursor(parser_.doc());
    Decoder<DomCursor>(cursor, scratch_).payload(out);
  }

 private:
  DomParser parser_;
  std::string scratch_;  // element text, reused
};

}  // namespace

std::unique_ptr<Codec> make_xml_codec() { return std::make_unique<XmlCodec>(); }
std::unique_ptr<Codec> make_xml_dom_codec() { return std::make_unique<XmlDomCodec>(); }

}  // namespace wsb::rest
