// `xml-dom`: the same XML as `xml` (xml_codec.cpp), decoded as a DOM user
// does: xmlCtxtReadMemory builds the document tree (the `read` stage), then
// the shared decoder (xml_codec_internal.h) walks it into the model
// (`unbind`), with the same checks and the same parser options. It encodes
// as `xml` does.
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include "rest/rest_codecs.h"
#include "rest/xml_codec_internal.h"

namespace wsb::rest {
namespace xml {
namespace {

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
}  // namespace xml

std::unique_ptr<Codec> make_xml_dom_codec() { return std::make_unique<xml::XmlDomCodec>(); }

}  // namespace wsb::rest
