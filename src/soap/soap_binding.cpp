#include "soap/soap_binding.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <variant>

#include "common/codec.h"
#include "common/gml.h"

namespace wsb::soap {

ContextPtr new_context() {
  ContextPtr ctx(soap_new());
  if (!ctx) throw std::bad_alloc();
  soap_set_namespaces(ctx.get(), namespaces);
  return ctx;
}

const Namespace* written_namespaces(UsedNamespaces used) {
  // Eight copies of the generated table, by (wsb, gml, xop): an entry a
  // message does not use keeps its name and loses its URI (gSOAP declares
  // only entries with one, and finds SOAP-ENV and SOAP-ENC by position).
  using Table = std::vector<Namespace>;
  static const std::array<Table, 8> tables = [] {
    std::array<Table, 8> made;
    for (std::size_t i = 0; i < made.size(); ++i) {
      const auto uses = [i](std::string_view id) {
        return id == "SOAP-ENV" || (id == "wsb" && (i & 1) != 0) || (id == "gml" && (i & 2) != 0) ||
               (id == "xop" && (i & 4) != 0);
      };
      for (const Namespace* n = namespaces; n->id != nullptr; ++n)
        made[i].push_back(uses(n->id) ? *n : Namespace{n->id, nullptr, nullptr, nullptr});
      made[i].push_back(Namespace{nullptr, nullptr, nullptr, nullptr});
    }
    return made;
  }();
  return tables[(used.wsb ? 1 : 0) | (used.gml ? 2 : 0) | (used.xop ? 4 : 0)].data();
}

std::size_t take_input(std::string_view& input, char* buf, std::size_t size) {
  const std::size_t n = std::min(size, input.size());
  // An empty attachment has no data pointer, and memcpy's may not be null.
  if (n == 0) return 0;
  std::memcpy(buf, input.data(), n);
  input.remove_prefix(n);
  return n;
}

bool only_space_left(const Context* ctx, std::string_view unread) {
  const auto is_xml_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  const std::string_view buffered(ctx->buf + ctx->bufidx, ctx->buflen - ctx->bufidx);
  return std::all_of(buffered.begin(), buffered.end(), is_xml_space) &&
         std::all_of(unread.begin(), unread.end(), is_xml_space);
}

void check_no_trailing_content(const Context* ctx, std::string_view unread,
                               const std::string& who) {
  if (!only_space_left(ctx, unread))
    throw DecodeError(who + ": content after the end of the message");
}

namespace {

void attach_swa_part(Context* ctx, const SwaPart& part) {
  // gSOAP only reads through the pointer; it copies the id and type.
  if (soap_set_mime_attachment(ctx, static_cast<char*>(const_cast<void*>(part.data)), part.size,
                               SOAP_MIME_BINARY, part.type, part.content_id.c_str(), nullptr,
                               nullptr) != SOAP_OK)
    throw std::bad_alloc();
}

}  // namespace

void attach_swa_parts(Context* ctx, const std::vector<SwaPart>& parts) {
  soap_set_mime(ctx, nullptr, nullptr);
  for (const SwaPart& part : parts) attach_swa_part(ctx, part);
}

namespace {

template <class T>
T* checked(T* p) {
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// Largest GML document read back (soap::recv_maxlength): gml/10000 is about
// 11 MB; 1 GiB bounds what a runaway input can make us buffer, as the
// codec's own limit does.
constexpr ULONG64 kMaxGmlDocumentBytes = ULONG64{1} << 30;

// The namespaces a GML document uses, so its root declares only those
// (gSOAP declares every entry of its table there), not SOAP's.
Namespace gml_document_namespaces[] = {{"wsb", "urn:wsbench", nullptr, nullptr},
                                       {"gml", gml::kNamespace, nullptr, nullptr},
                                       {nullptr, nullptr, nullptr, nullptr}};

// Writes and reads the standalone GML documents soap-mtom and soap-swa attach
// (<wsb:buildings> as the root), with gSOAP's generated serializers. One
// per thread, kept like the codecs' own contexts: a context per message
// would add its set-up to every bind and unbind.
class GmlDocuments {
 public:
  GmlDocuments() : write_(soap_new()), read_(soap_new()) {
    if (write_ == nullptr || read_ == nullptr) throw std::bad_alloc();
    soap_set_namespaces(write_, gml_document_namespaces);
    soap_set_namespaces(read_, gml_document_namespaces);
    soap_set_omode(write_, SOAP_C_UTFSTRING | SOAP_IO_BUFFER);
    write_->fsend = &GmlDocuments::append;
    write_->user = this;
    soap_set_imode(read_, SOAP_C_UTFSTRING | SOAP_XML_STRICT);
    read_->frecv = &GmlDocuments::consume;
    read_->user = this;
    apply_input_limits(read_, kMaxGmlDocumentBytes);
  }
  ~GmlDocuments() {
    for (Context* ctx : {write_, read_}) {
      soap_destroy(ctx);
      soap_end(ctx);
      soap_free(ctx);
    }
  }
  GmlDocuments(const GmlDocuments&) = delete;
  GmlDocuments& operator=(const GmlDocuments&) = delete;

  void write(const wsb__BuildingList& buildings, std::string& out) {
    out_ = &out;
    soap_begin(write_);
    write_->encodingStyle = nullptr;  // literal
    soap_serialize_wsb__BuildingList(write_, &buildings);
    const bool failed = soap_begin_send(write_) ||
                        soap_put_wsb__BuildingList(write_, &buildings, "wsb:buildings", nullptr) ||
                        soap_end_send(write_);
    out_ = nullptr;
    if (failed) throw std::runtime_error("soap: cannot write the GML document: " + error(write_));
  }

  // The structs live until the next read on this thread.
  wsb__BuildingList& read(std::string_view document, const Unbinder& unbinder) {
    release_message(read_);
    in_ = document;
    if (soap_begin_recv(read_)) unbinder.fail("attached GML document: " + error(read_));
    wsb__BuildingList* buildings =
        soap_get_wsb__BuildingList(read_, nullptr, "wsb:buildings", nullptr);
    if (buildings == nullptr || read_->error != SOAP_OK)
      unbinder.fail("attached GML document: " + error(read_));
    // As in the codec: gSOAP's structs can carry on past an unclosed element.
    if (read_->level != 0) unbinder.fail("attached GML document: an element is not closed");
    if (soap_end_recv(read_)) unbinder.fail("attached GML document: " + error(read_));
    if (!only_space_left(read_, in_))
      unbinder.fail("attached GML document: content after the root element");
    return *buildings;
  }

 private:
  static std::string error(Context* ctx) {
    soap_set_fault(ctx);
    const char* text = soap_fault_string(ctx);
    return text != nullptr && *text != '\0' ? text : "gSOAP error " + std::to_string(ctx->error);
  }
  static int append(Context* ctx, const char* data, std::size_t size) {
    static_cast<GmlDocuments*>(ctx->user)->out_->append(data, size);
    return SOAP_OK;
  }
  static std::size_t consume(Context* ctx, char* buf, std::size_t size) {
    return take_input(static_cast<GmlDocuments*>(ctx->user)->in_, buf, size);
  }

  Context* write_;
  Context* read_;
  std::string* out_ = nullptr;
  std::string_view in_;
};

GmlDocuments& gml_documents() {
  thread_local GmlDocuments documents;
  return documents;
}

}  // namespace

// ---- bind: model -> generated structs ----

struct Binder::Visitor {
  const Binder& b;
  int& choice;
  wsb__PayloadChoice& out;

  wsb__PayloadChoice& set(int c) const {
    choice = c;
    return out;
  }

  void operator()(const Text& p) const {
    std::string* s = checked(soap_new_std__string(b.ctx_));
    *s = p.value;
    set(SOAP_UNION_wsb__PayloadChoice_text).text = s;
  }
  void operator()(const IntArray& p) const {
    wsb__IntList* l = checked(soap_new_wsb__IntList(b.ctx_));
    l->item.assign(p.values.begin(), p.values.end());
    set(SOAP_UNION_wsb__PayloadChoice_ints).ints = l;
  }
  void operator()(const StringArray& p) const {
    wsb__StringList* l = checked(soap_new_wsb__StringList(b.ctx_));
    l->item.assign(p.values.begin(), p.values.end());
    set(SOAP_UNION_wsb__PayloadChoice_strings).strings = l;
  }
  void operator()(const ObjectArray& p) const {
    wsb__ObjectList* l = checked(soap_new_wsb__ObjectList(b.ctx_));
    l->object.resize(p.values.size());
    for (std::size_t i = 0; i < p.values.size(); ++i) {
      const Object& o = p.values[i];
      wsb__Object& w = l->object[i];
      w.id = o.id;
      w.name = o.name;
      w.value = o.value;
      w.active = o.active;
    }
    set(SOAP_UNION_wsb__PayloadChoice_objects).objects = l;
  }
  void operator()(const Message& m) const {
    set(SOAP_UNION_wsb__PayloadChoice_message).message = b.new_message(m);
  }
  void operator()(const MessageList& p) const {
    wsb__MessageList* l = checked(soap_new_wsb__MessageList(b.ctx_));
    l->message.resize(p.messages.size());
    for (std::size_t i = 0; i < p.messages.size(); ++i) b.message(p.messages[i], l->message[i]);
    set(SOAP_UNION_wsb__PayloadChoice_messages).messages = l;
  }
  void operator()(const Binary& p) const {
    set(SOAP_UNION_wsb__PayloadChoice_binary).binary =
        b.binary(p.data.data(), p.data.size(), kAttachmentType);
  }
  void operator()(const BuildingCollection& p) const {
    wsb__BuildingList* l = checked(soap_new_wsb__BuildingList(b.ctx_));
    l->gml__featureMember.resize(p.buildings.size());
    for (std::size_t i = 0; i < p.buildings.size(); ++i) {
      const Building& m = p.buildings[i];
      if (const std::string why = gml::problem(m); !why.empty())
        throw std::invalid_argument("soap: " + why);
      wsb__Building& w = l->gml__featureMember[i].Building;
      w.gml__id = m.id;
      w.gml__name = m.name;
      w.height = m.height;
      w.floors = m.floors;
      gml__PolygonType& polygon = w.footprint.gml__Polygon;
      polygon.srsName = gml::kSrsName;
      gml__DirectPositionListType& pos_list = polygon.gml__exterior.gml__LinearRing.gml__posList;
      pos_list.srsDimension = gml::kSrsDimension;
      gml::append_pos_list(m.footprint, pos_list.__item);
    }
    if (b.attachments_ != Attachments::inline_base64) {
      set(SOAP_UNION_wsb__PayloadChoice_buildingsDocument).buildingsDocument = b.gml_document(*l);
    } else {
      set(SOAP_UNION_wsb__PayloadChoice_buildings).buildings = l;
      if (!p.buildings.empty()) b.used_.gml = true;
    }
  }
};

void Binder::payload(const Payload& in, int& choice, wsb__PayloadChoice& out) const {
  std::visit(Visitor{*this, choice, out}, in);
}

void Binder::message(const Message& m, wsb__Message& w) const {
  w.recipient = m.meta.recipient;
  w.sender = m.meta.sender;
  w.authToken = m.meta.auth_token;
  w.timestamp = m.meta.timestamp;
  w.record.resize(m.records.size());
  for (std::size_t i = 0; i < m.records.size(); ++i) {
    const Record& r = m.records[i];
    wsb__Record& x = w.record[i];
    x.title = r.title;
    x.author = r.author;
    x.body = r.body;
    x.sequence = r.sequence;
    x.created = r.created;
    x.priority = r.priority;
    x.category = r.category;
    x.flags = r.flags;
    x.ttl = r.ttl;
  }
  // Optional element: omitted when empty, decoded back to empty.
  w.attachment = m.attachment.empty()
                     ? nullptr
                     : binary(m.attachment.data(), m.attachment.size(), kAttachmentType);
}

wsb__Message* Binder::new_message(const Message& m) const {
  wsb__Message* w = checked(soap_new_wsb__Message(ctx_));
  message(m, *w);
  return w;
}

xsd__base64Binary* Binder::binary(const void* data, std::size_t size, const char* type) const {
  if (size > static_cast<std::size_t>(INT_MAX))
    throw std::length_error("soap: gSOAP binaries are limited to 2 GiB (int __size)");
  xsd__base64Binary* b = checked(soap_new_xsd__base64Binary(ctx_));
  switch (attachments_) {
    case Attachments::inline_base64:
      // id/type/options stay NULL: with a type set gSOAP would switch the
      // message to DIME.
      b->__ptr = static_cast<unsigned char*>(const_cast<void*>(data));
      b->__size = static_cast<int>(size);
      break;
    case Attachments::mtom:
      b->__ptr = static_cast<unsigned char*>(const_cast<void*>(data));
      b->__size = static_cast<int>(size);
      b->type = const_cast<char*>(type);
      used_.xop = true;
      break;
    case Attachments::swa: {
      // The element stays empty and names its part; numbered in the order
      // the parts go out, so every writer of one message makes the same ids.
      std::size_t number = 1;
      if (parts_ != nullptr)
        number += parts_->size();
      else
        for (const soap_multipart* p = ctx_->mime.first; p != nullptr; p = p->next) ++number;
      const std::string name = "attachment-" + std::to_string(number);
      b->href = checked(soap_strdup(ctx_, ("cid:" + name).c_str()));
      SwaPart part{data, size, type, "<" + name + ">"};
      if (parts_ != nullptr)
        parts_->push_back(std::move(part));
      else
        attach_swa_part(ctx_, part);
      break;
    }
  }
  return b;
}

xsd__base64Binary* Binder::gml_document(const wsb__BuildingList& buildings) const {
  std::string* document = checked(soap_new_std__string(ctx_));  // released with the message
  gml_documents().write(buildings, *document);
  return binary(document->data(), document->size(), kGmlDocumentType);
}

// ---- unbind: generated structs -> model ----

void Unbinder::fail(const std::string& what) const { throw DecodeError(who_ + ": " + what); }

template <class T>
T& Unbinder::present(T* p, const char* element) const {
  if (p == nullptr) fail(std::string("<wsb:") + element + "> is nil");
  return *p;
}

void Unbinder::bytes_of(const xsd__base64Binary& b, Bytes& out) const {
  if (b.__size < 0 || (b.__size > 0 && b.__ptr == nullptr)) fail("invalid binary");
  out.assign(b.__ptr, b.__ptr + b.__size);
}

Payload Unbinder::payload(int choice, wsb__PayloadChoice& c, const char* element) const {
  switch (choice) {
    case SOAP_UNION_wsb__PayloadChoice_text:
      return Text{take(present(c.text, "text"))};
    case SOAP_UNION_wsb__PayloadChoice_ints: {
      auto& items = present(c.ints, "ints").item;
      return IntArray{{items.begin(), items.end()}};
    }
    case SOAP_UNION_wsb__PayloadChoice_strings:
      return StringArray{take(present(c.strings, "strings").item)};
    case SOAP_UNION_wsb__PayloadChoice_objects: {
      ObjectArray p;
      auto& objects = present(c.objects, "objects").object;
      p.values.reserve(objects.size());
      for (wsb__Object& o : objects) p.values.push_back({o.id, take(o.name), o.value, o.active});
      return p;
    }
    case SOAP_UNION_wsb__PayloadChoice_message:
      return message(present(c.message, "message"));
    case SOAP_UNION_wsb__PayloadChoice_messages: {
      MessageList p;
      auto& messages = present(c.messages, "messages").message;
      p.messages.reserve(messages.size());
      for (wsb__Message& m : messages) p.messages.push_back(message(m));
      return p;
    }
    case SOAP_UNION_wsb__PayloadChoice_binary: {
      Binary p;
      bytes_of(present(c.binary, "binary"), p.data);
      return p;
    }
    case SOAP_UNION_wsb__PayloadChoice_buildings:
      return buildings(present(c.buildings, "buildings"));
    case SOAP_UNION_wsb__PayloadChoice_buildingsDocument:
      return buildings_document(present(c.buildingsDocument, "buildingsDocument"));
    default:
      fail(std::string("<wsb:") + element + "> carries no payload element");
  }
}

Message Unbinder::message(wsb__Message& w) const {
  Message m;
  m.meta = {take(w.recipient), take(w.sender), take(w.authToken), w.timestamp};
  m.records.reserve(w.record.size());
  for (wsb__Record& x : w.record)
    m.records.push_back({take(x.title), take(x.author), take(x.body), x.sequence, x.created,
                         x.priority, x.category, x.flags, x.ttl});
  // Absent (or nil) attachment: message A's empty attachment.
  if (w.attachment != nullptr) bytes_of(*w.attachment, m.attachment);
  return m;
}

BuildingCollection Unbinder::buildings_document(const xsd__base64Binary& document) const {
  if (document.__size < 0 || (document.__size > 0 && document.__ptr == nullptr))
    fail("invalid GML document attachment");
  return buildings(
      gml_documents().read(std::string_view(reinterpret_cast<const char*>(document.__ptr),
                                            static_cast<std::size_t>(document.__size)),
                           *this));
}

BuildingCollection Unbinder::buildings(wsb__BuildingList& l) const {
  BuildingCollection p;
  p.buildings.reserve(l.gml__featureMember.size());
  for (wsb__BuildingMember& member : l.gml__featureMember) {
    wsb__Building& w = member.Building;
    const gml__PolygonType& polygon = w.footprint.gml__Polygon;
    if (polygon.srsName != gml::kSrsName)
      fail("gml:Polygon srsName '" + polygon.srsName.substr(0, 60) + "' is not " + gml::kSrsName);
    const gml__DirectPositionListType& pos_list =
        polygon.gml__exterior.gml__LinearRing.gml__posList;
    if (pos_list.srsDimension != gml::kSrsDimension) fail("gml:posList srsDimension must be 2");
    Building& b = p.buildings.emplace_back(
        Building{take(w.gml__id), take(w.gml__name), w.height, w.floors, {}});
    if (const std::string why = gml::parse_pos_list(pos_list.__item, b.footprint); !why.empty())
      fail("gml:" + why);
    if (const std::string why = gml::problem(b); !why.empty()) fail(why);
  }
  return p;
}

}  // namespace wsb::soap
