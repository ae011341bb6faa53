// Plain-XML bodies via libxml2: `xml` streams both ways, `xml-dom` reads
// the same bytes through a tree, `xml-unwrapped` is `xml` writing base64 on
// one line (XmlBase64::one_line) instead of libxml2's 72-character lines:
// the same document but for the line breaks, which every decoder skips.
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
//
// Files: xml_encoder.cpp (the encoder), this file (`xml`: the streaming
// decoder), xml_dom_codec.cpp (`xml-dom`: the tree), xml_codec_internal.h
// (what they share: the decoder of every shape, over either cursor).
#include <libxml/xmlreader.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>

#include "rest/rest_codecs.h"
#include "rest/xml_codec_internal.h"

namespace wsb::rest {
namespace xml {
namespace {

// ---- decoding: xmlTextReader -> model, every node checked ----

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

class XmlCodec final : public XmlWritingCodec {
 public:
  explicit XmlCodec(XmlBase64 base64) : XmlWritingCodec(base64) {}
  void decode(std::string_view wire, Payload& out) override {
    if (fresh()) decode_scratch_ = std::string();
    reader_.start(wire, fresh());
    Decoder<Reader>(reader_, decode_scratch_).payload(out);
  }

 private:
  Reader reader_;
  std::string decode_scratch_;  // element text (up to a whole base64 binary), reused
};

}  // namespace
}  // namespace xml

std::unique_ptr<Codec> make_xml_codec(XmlBase64 base64) {
  return std::make_unique<xml::XmlCodec>(base64);
}

}  // namespace wsb::rest
