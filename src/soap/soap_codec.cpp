// SOAP 1.1 document/literal via gSOAP: `soap` (binaries inline as base64)
// and `soap-mtom` (binaries as MTOM/XOP attachments).
//
// The wire bytes are the body of the response to the `get` operation of
// wsbench_service.h, written and read by the gSOAP engine exactly as the
// generated wsbenchService / wsbenchProxy do, with the socket replaced by
// in-memory callbacks (soap::fsend, soap::frecv):
//   <SOAP-ENV:Envelope xmlns:wsb="urn:wsbench" ...><SOAP-ENV:Body>
//     <wsb:getResponse><wsb:ints><wsb:item>1</wsb:item>...</wsb:ints></wsb:getResponse>
//   </SOAP-ENV:Body></SOAP-ENV:Envelope>
// For soap-mtom that envelope is the root part of a multipart/related
// package and each non-empty binary is a raw MIME part referenced by
// <xop:Include href="cid:..."/>.
//
// Stages: bind = model -> generated structs (wsb__getResponse and its
// members, allocated in a gSOAP context); write = structs -> bytes (the
// engine's counting pass, then the send pass); read = bytes -> structs (the
// engine's parser, MIME included); unbind = structs -> model.
//
// Decoding is as strict as gSOAP in SOAP_XML_STRICT mode (every schema
// element required, unknown elements, out-of-range numbers and characters
// outside the base64 alphabet rejected; 17-digit doubles round-trip), plus
// checks of ours where gSOAP lets malformed input through: balanced element
// nesting (read()), nothing but whitespace after the message, no nil payload.
// gSOAP leniencies kept, as they are the library's behaviour and checking
// them would mean parsing twice: elements of a sequence in any order; unknown
// attributes, undeclared entities, non-UTF-8 bytes, control characters and
// a DOCTYPE pass through; and its base64 decoder stops at the first '=' or
// '<', so missing or surplus padding and a dangling last character are not
// errors. Strict base64 would need a deserializer of our own in place of
// gSOAP's (soap_string_in, check, soap_base642s): measured about 1.7x
// slower decoding of binary/64MiB (1.25 s vs 0.74 s), and that decode cost
// is what the soap vs soap-mtom comparison is about.
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

#include "soap/soap_codecs.h"
#include "soapH.h"

namespace wsb::soap {
namespace {

using Context = ::soap;  // gSOAP's engine context (this namespace shadows the name)

// ---- input limits: every gSOAP limit this codec changes, in one place ----

// gSOAP 2.8.124's defaults, checked on this machine: recv_maxlength 2 GiB - 1,
// maxoccurs 100,000, maxlevel 10,000, maxlength 0 (unbounded); the library
// is built with SOAP_MAXALLOCSIZE 0 (no allocation cap).
//
// Whole-message size (soap::recv_maxlength). The largest catalogue message,
// binary/64MiB as inline base64, is about 86 MiB; 1 GiB is ample headroom
// and still bounds what a runaway input can make us buffer. (gSOAP's
// binaries have int sizes, so 2 GiB is a hard ceiling anyway.)
constexpr ULONG64 kMaxMessageBytes = ULONG64{1} << 30;
// Elements per array (soap::maxoccurs). The default would stop an array of
// 100,001 ints; set so the message size, not the count, is what binds (the
// smallest array element, <wsb:item>0</wsb:item>, is over 16 bytes).
constexpr std::size_t kMaxOccurs = kMaxMessageBytes / 16;
// XML nesting depth (soap::maxlevel). Our deepest element is 6 levels down
// (Envelope/Body/getResponse/message/record/title); 32 also admits a SOAP
// Fault's detail and stops deeply nested junk early.
constexpr unsigned kMaxLevel = 32;
// String length (soap::maxlength): unbounded, as by default; the message
// size limit bounds it.
constexpr long kMaxStringBytes = 0;

void apply_limits(Context* ctx) {
  ctx->recv_maxlength = kMaxMessageBytes;
  ctx->maxoccurs = kMaxOccurs;
  ctx->maxlevel = kMaxLevel;
  ctx->maxlength = kMaxStringBytes;
}

// MIME type of the MTOM parts. Setting it on an xsd__base64Binary is what
// tells gSOAP (in SOAP_ENC_MTOM mode) to send the binary as an attachment.
constexpr char kAttachmentType[] = "application/octet-stream";

struct ContextDeleter {
  void operator()(Context* ctx) const {
    soap_destroy(ctx);
    soap_end(ctx);
    soap_free(ctx);
  }
};
using ContextPtr = std::unique_ptr<Context, ContextDeleter>;

// Releases everything a context allocated (managed C++ objects first, then
// the rest), as the generated service does between requests.
void reset(Context* ctx) {
  soap_destroy(ctx);
  soap_end(ctx);
}

template <class T>
T* checked(T* p) {
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// ---- bind: model -> generated structs ----

class Binder {
 public:
  Binder(Context* ctx, bool mtom, wsb__getResponse& r) : ctx_(ctx), mtom_(mtom), r_(r) {}

  void operator()(const Text& p) {
    std::string* s = checked(soap_new_std__string(ctx_));
    *s = p.value;
    set(SOAP_UNION_wsb__PayloadChoice_text).text = s;
  }
  void operator()(const IntArray& p) {
    wsb__IntList* l = checked(soap_new_wsb__IntList(ctx_));
    l->item.assign(p.values.begin(), p.values.end());
    set(SOAP_UNION_wsb__PayloadChoice_ints).ints = l;
  }
  void operator()(const StringArray& p) {
    wsb__StringList* l = checked(soap_new_wsb__StringList(ctx_));
    l->item.assign(p.values.begin(), p.values.end());
    set(SOAP_UNION_wsb__PayloadChoice_strings).strings = l;
  }
  void operator()(const ObjectArray& p) {
    wsb__ObjectList* l = checked(soap_new_wsb__ObjectList(ctx_));
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
  void operator()(const Message& m) {
    wsb__Message* w = checked(soap_new_wsb__Message(ctx_));
    w->recipient = m.meta.recipient;
    w->sender = m.meta.sender;
    w->authToken = m.meta.auth_token;
    w->timestamp = m.meta.timestamp;
    w->record.resize(m.records.size());
    for (std::size_t i = 0; i < m.records.size(); ++i) {
      const Record& r = m.records[i];
      wsb__Record& x = w->record[i];
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
    if (!m.attachment.empty()) w->attachment = binary(m.attachment);
    set(SOAP_UNION_wsb__PayloadChoice_message).message = w;
  }
  void operator()(const Binary& p) {
    set(SOAP_UNION_wsb__PayloadChoice_binary).binary = binary(p.data);
  }
  void operator()(const BuildingCollection& p) {
    wsb__BuildingList* l = checked(soap_new_wsb__BuildingList(ctx_));
    l->building.resize(p.buildings.size());
    for (std::size_t i = 0; i < p.buildings.size(); ++i) {
      const Building& b = p.buildings[i];
      wsb__Building& w = l->building[i];
      w.id = b.id;
      w.name = b.name;
      w.height = b.height;
      w.floors = b.floors;
      w.point.resize(b.footprint.size());
      for (std::size_t j = 0; j < b.footprint.size(); ++j) {
        w.point[j].x = b.footprint[j].x;
        w.point[j].y = b.footprint[j].y;
      }
    }
    set(SOAP_UNION_wsb__PayloadChoice_buildings).buildings = l;
  }

 private:
  wsb__PayloadChoice& set(int choice) {
    r_.__union_payload = choice;
    return r_.payload;
  }

  // Points at the model's bytes rather than copying them, as a gSOAP
  // application hands over its buffer: the engine only reads through
  // __ptr. So the bound payload must outlive write().
  xsd__base64Binary* binary(const Bytes& bytes) {
    if (bytes.size() > static_cast<std::size_t>(INT_MAX))
      throw std::length_error("soap: gSOAP binaries are limited to 2 GiB (int __size)");
    xsd__base64Binary* b = checked(soap_new_xsd__base64Binary(ctx_));
    b->__ptr = const_cast<unsigned char*>(bytes.data());
    b->__size = static_cast<int>(bytes.size());
    // Outside MTOM mode id/type/options stay NULL: with a type set gSOAP
    // would switch the message to DIME.
    if (mtom_) b->type = const_cast<char*>(kAttachmentType);
    return b;
  }

  Context* ctx_;
  bool mtom_;
  wsb__getResponse& r_;
};

// ---- unbind: generated structs -> model, every choice and pointer checked ----

class Unbinder {
 public:
  explicit Unbinder(const std::string& codec) : codec_(codec) {}

  [[noreturn]] void fail(const std::string& what) const { throw DecodeError(codec_ + ": " + what); }

  template <class T>
  const T& present(const T* p, const char* element) const {
    if (p == nullptr) fail(std::string("<wsb:") + element + "> is nil");
    return *p;
  }

  void bytes_of(const xsd__base64Binary& b, Bytes& out) const {
    if (b.__size < 0 || (b.__size > 0 && b.__ptr == nullptr)) fail("invalid binary");
    out.assign(b.__ptr, b.__ptr + b.__size);
  }

  Payload payload_of(const wsb__getResponse& r) const {
    const wsb__PayloadChoice& c = r.payload;
    switch (r.__union_payload) {
      case SOAP_UNION_wsb__PayloadChoice_text:
        return Text{present(c.text, "text")};
      case SOAP_UNION_wsb__PayloadChoice_ints: {
        const auto& items = present(c.ints, "ints").item;
        return IntArray{{items.begin(), items.end()}};
      }
      case SOAP_UNION_wsb__PayloadChoice_strings:
        return StringArray{present(c.strings, "strings").item};
      case SOAP_UNION_wsb__PayloadChoice_objects: {
        ObjectArray p;
        const auto& objects = present(c.objects, "objects").object;
        p.values.reserve(objects.size());
        for (const wsb__Object& o : objects) p.values.push_back({o.id, o.name, o.value, o.active});
        return p;
      }
      case SOAP_UNION_wsb__PayloadChoice_message:
        return message_of(present(c.message, "message"));
      case SOAP_UNION_wsb__PayloadChoice_binary: {
        Binary p;
        bytes_of(present(c.binary, "binary"), p.data);
        return p;
      }
      case SOAP_UNION_wsb__PayloadChoice_buildings:
        return buildings_of(present(c.buildings, "buildings"));
      default:
        fail("<wsb:getResponse> carries no payload element");
    }
  }

 private:
  Message message_of(const wsb__Message& w) const {
    Message m;
    m.meta = {w.recipient, w.sender, w.authToken, w.timestamp};
    m.records.reserve(w.record.size());
    for (const wsb__Record& x : w.record)
      m.records.push_back({x.title, x.author, x.body, x.sequence, x.created, x.priority, x.category,
                           x.flags, x.ttl});
    // Absent (or nil) attachment: message A's empty attachment.
    if (w.attachment != nullptr) bytes_of(*w.attachment, m.attachment);
    return m;
  }

  BuildingCollection buildings_of(const wsb__BuildingList& l) const {
    BuildingCollection p;
    p.buildings.reserve(l.building.size());
    for (const wsb__Building& w : l.building) {
      Building b{w.id, w.name, w.height, w.floors, {}};
      b.footprint.reserve(w.point.size());
      for (const wsb__Point& pt : w.point) b.footprint.push_back({pt.x, pt.y});
      p.buildings.push_back(std::move(b));
    }
    return p;
  }

  const std::string& codec_;
};

bool has_binary(const Payload& payload) {
  if (const auto* m = std::get_if<Message>(&payload)) return !m->attachment.empty();
  if (const auto* b = std::get_if<Binary>(&payload)) return !b->data.empty();
  return false;
}

bool is_xml_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

class SoapCodec final : public Codec, public CodecStages {
 public:
  explicit SoapCodec(bool mtom)
      : mtom_(mtom),
        name_(mtom ? "soap-mtom" : "soap"),
        bind_ctx_(new_context()),
        write_ctx_(new_context()),
        read_ctx_(new_context()) {
    // UTF-8 strings pass through unchanged (the default treats bytes >= 0x80
    // as Latin-1). Buffered output (SOAP_IO_BUFFER) is what gSOAP itself
    // picks on a socket: fsend sees 64 KiB blocks, not every tag.
    soap_set_omode(write_ctx_.get(), SOAP_C_UTFSTRING | SOAP_IO_BUFFER);
    if (mtom_) soap_set_omode(write_ctx_.get(), SOAP_ENC_MTOM);
    write_ctx_->fsend = &SoapCodec::send_to_sink;
    write_ctx_->user = this;
    // Strict validation: required elements must be present, unknown
    // elements are errors rather than skipped.
    soap_set_imode(read_ctx_.get(), SOAP_C_UTFSTRING | SOAP_XML_STRICT);
    read_ctx_->frecv = &SoapCodec::recv_from_input;
    read_ctx_->user = this;
    apply_limits(read_ctx_.get());
  }

  std::string not_applicable(const Payload& payload) const override {
    if (mtom_ && !has_binary(payload)) return "no binary: MTOM output identical to soap";
    return {};
  }

  void encode(const Payload& in, std::string& out) override {
    bind(in);
    write(out);
  }

  void decode(std::string_view wire, Payload& out) override {
    read(wire);
    unbind(out);
  }

  std::string content_type() const override { return content_type_; }
  CodecStages* stages() override { return this; }

  bool splits_encode() const override { return true; }
  bool splits_decode() const override { return true; }

  void bind(const Payload& in) override {
    Context* ctx = bind_ctx_.get();
    bound_ = nullptr;
    reset(ctx);
    wsb__getResponse* r = checked(soap_new_wsb__getResponse(ctx));
    std::visit(Binder(ctx, mtom_, *r), in);
    bound_ = r;
  }

  void write(std::string& out) override {
    if (bound_ == nullptr) throw std::logic_error(name_ + ": write() before bind()");
    Context* ctx = write_ctx_.get();
    // The bound structs live in bind_ctx_, so releasing this context's
    // per-message state (MIME boundary, attachment list) keeps repeated
    // writes of one binding from growing.
    reset(ctx);
    out.clear();
    sink_ = &out;
    // What wsbenchService's serve_wsb__get does after the operation returns,
    // with soap_begin_send in place of soap_response (which would prepend
    // the HTTP header).
    soap_begin(ctx);
    ctx->encodingStyle = nullptr;  // literal
    soap_serializeheader(ctx);
    soap_serialize_wsb__getResponse(ctx, bound_);
    // Counting pass: the Content-Length a server sends, and for MTOM the
    // pass that selects the MIME boundary and queues the attachments.
    if (soap_begin_count(ctx)) fail_write();
    if (ctx->mode & SOAP_IO_LENGTH) {
      if (soap_envelope_begin_out(ctx) || soap_putheader(ctx) || soap_body_begin_out(ctx) ||
          soap_put_wsb__getResponse(ctx, bound_, "wsb:getResponse", "") || soap_body_end_out(ctx) ||
          soap_envelope_end_out(ctx))
        fail_write();
    }
    if (soap_end_count(ctx)) fail_write();
    out.reserve(static_cast<std::size_t>(ctx->count));
    if (soap_begin_send(ctx) || soap_envelope_begin_out(ctx) || soap_putheader(ctx) ||
        soap_body_begin_out(ctx) || soap_put_wsb__getResponse(ctx, bound_, "wsb:getResponse", "") ||
        soap_body_end_out(ctx) || soap_envelope_end_out(ctx) || soap_end_send(ctx))
      fail_write();
    sink_ = nullptr;
    // The Content-Type gSOAP's HTTP header would carry: text/xml, or for
    // MTOM multipart/related with this message's boundary and start part.
    content_type_ = soap_http_content_type(ctx, SOAP_OK);
  }

  void read(std::string_view wire) override {
    Context* ctx = read_ctx_.get();
    received_ = nullptr;
    reset(ctx);
    input_ = wire;
    // What wsbenchProxy::recv_get does (soap_begin_recv also recognises an
    // MTOM package by its leading MIME boundary and parses its parts).
    if (soap_begin_recv(ctx) || soap_envelope_begin_in(ctx) || soap_recv_header(ctx) ||
        soap_body_begin_in(ctx))
      fail_read();
    wsb__getResponse* r = soap_get_wsb__getResponse(ctx, nullptr, "wsb:getResponse", nullptr);
    if (ctx->error || r == nullptr) fail_body();
    if (soap_body_end_in(ctx) || soap_envelope_end_in(ctx)) fail_read();
    // gSOAP's parser is not a well-formedness checker: when a speculative
    // child parse fails after consuming a start tag (e.g. a <wsb:record>
    // missing its end tag), the surrounding structs carry on and the
    // message can "succeed" with that element silently dropped. Its depth
    // counter still shows the element left open.
    if (ctx->level != 0) fail("an element is not closed (unbalanced nesting)");
    if (soap_end_recv(ctx)) fail_read();
    check_no_trailing_content();
    received_ = r;
  }

  void unbind(Payload& out) override {
    if (received_ == nullptr) throw std::logic_error(name_ + ": unbind() without a good read()");
    // Copies rather than moves out of the structs: unbind may be repeated
    // on one read (the stage benchmark does).
    out = Unbinder(name_).payload_of(*received_);
  }

 private:
  static Context* new_context() {
    Context* ctx = soap_new();
    if (ctx == nullptr) throw std::bad_alloc();
    soap_set_namespaces(ctx, namespaces);
    return ctx;
  }

  static int send_to_sink(Context* ctx, const char* data, std::size_t size) {
    static_cast<SoapCodec*>(ctx->user)->sink_->append(data, size);
    return SOAP_OK;
  }

  static std::size_t recv_from_input(Context* ctx, char* buf, std::size_t size) {
    std::string_view& input = static_cast<SoapCodec*>(ctx->user)->input_;
    const std::size_t n = std::min(size, input.size());
    std::memcpy(buf, input.data(), n);
    input.remove_prefix(n);
    return n;
  }

  // gSOAP stops reading at </SOAP-ENV:Envelope> (or the closing MIME
  // boundary); like any XML parser we reject non-whitespace after it.
  void check_no_trailing_content() const {
    const Context* ctx = read_ctx_.get();
    const std::string_view buffered(ctx->buf + ctx->bufidx, ctx->buflen - ctx->bufidx);
    if (!std::all_of(buffered.begin(), buffered.end(), is_xml_space) ||
        !std::all_of(input_.begin(), input_.end(), is_xml_space))
      throw DecodeError(name_ + ": content after the end of the message");
  }

  // gSOAP's own description of the error: its fault string (for a received
  // SOAP Fault, the sender's), and the detail when there is one.
  std::string describe(Context* ctx, bool received_fault = false) const {
    soap_set_fault(ctx);
    const char* text = soap_fault_string(ctx);
    const char* detail = soap_fault_detail(ctx);
    std::string what = name_ + ": ";
    if (received_fault) {
      const char* code = soap_fault_subcode(ctx);
      what += "SOAP Fault";
      if (code == nullptr || *code == '\0') code = *soap_faultcode(ctx);
      if (code != nullptr && *code != '\0') what += std::string(" ") + code;
      what += ": ";
    }
    what += (text != nullptr && *text != '\0') ? text : "gSOAP error " + std::to_string(ctx->error);
    if (detail != nullptr && *detail != '\0') what += std::string(" (") + detail + ")";
    return what;
  }

  [[noreturn]] void fail(const std::string& what) const { throw DecodeError(name_ + ": " + what); }

  [[noreturn]] void fail_read() const { throw DecodeError(describe(read_ctx_.get())); }

  // The Body did not hold a getResponse. As wsbenchProxy does, try it as a
  // SOAP Fault (reported with the sender's faultcode and faultstring);
  // otherwise report what gSOAP found instead, not the "no data" that the
  // failed Fault attempt leaves behind.
  [[noreturn]] void fail_body() const {
    Context* ctx = read_ctx_.get();
    const int error = ctx->error != SOAP_OK ? ctx->error : SOAP_NO_TAG;
    const std::string tag = ctx->tag;
    if (soap_soap_error_check(soap_recv_fault(ctx, 0))) throw DecodeError(describe(ctx, true));
    // soap_recv_fault already filled in the fault for its own error: clear
    // it so soap_set_fault describes the original one.
    ctx->error = error;
    soap_strcpy(ctx->tag, sizeof ctx->tag, tag.c_str());
    *soap_faultcode(ctx) = nullptr;
    *soap_faultstring(ctx) = nullptr;
    fail_read();
  }

  [[noreturn]] void fail_write() {
    sink_ = nullptr;
    throw std::runtime_error(describe(write_ctx_.get()));
  }

  const bool mtom_;
  const std::string name_;
  ContextPtr bind_ctx_;   // owns the bound structs
  ContextPtr write_ctx_;  // the engine state of one write
  ContextPtr read_ctx_;   // the engine state of one read, and the structs it made
  wsb__getResponse* bound_ = nullptr;
  wsb__getResponse* received_ = nullptr;
  std::string* sink_ = nullptr;                           // write()'s output while it runs
  std::string_view input_;                                // read()'s unread input
  std::string content_type_ = "text/xml; charset=utf-8";  // until the first write
};

}  // namespace

std::unique_ptr<Codec> make_soap_codec() { return std::make_unique<SoapCodec>(false); }
std::unique_ptr<Codec> make_soap_mtom_codec() { return std::make_unique<SoapCodec>(true); }

}  // namespace wsb::soap
