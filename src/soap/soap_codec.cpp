// SOAP 1.1 document/literal via gSOAP: `soap` (binaries inline as base64),
// `soap-mtom` (binaries as MTOM/XOP attachments) and `soap-swa` (binaries
// as SOAP with Attachments MIME parts).
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
// <xop:Include href="cid:..."/>; buildings are such a part too, as a GML
// document (soap_binding.h). soap-swa writes the same envelope as the root
// part of a multipart/related package (type text/xml), each such element
// empty and naming its part, <wsb:binary href="cid:attachment-1"/>; gSOAP
// resolves the references when it reads the package.
//
// bind/write and read/unbind go through gSOAP's generated structs. How
// strict decoding is, and which gSOAP leniencies are kept and why, is in
// docs/reference/codecs.md.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/input_checks.h"
#include "soap/soap_binding.h"
#include "soap/soap_codecs.h"

namespace wsb::soap {
namespace {

// Whole-message size the codec reads (soap::recv_maxlength). The largest
// catalogue message, binary/64MiB as inline base64, is about 86 MiB; 1 GiB
// is ample headroom and still bounds what a runaway input can make us
// buffer. (gSOAP's binaries have int sizes, so 2 GiB is a hard ceiling
// anyway.)
constexpr ULONG64 kMaxCodecMessageBytes = ULONG64{1} << 30;

// gSOAP's two ways of sending a message over HTTP: a counting pass over it,
// then the Content-Length and the message (its default), or chunked
// transfer coding (SOAP_IO_CHUNK), which needs no counting pass.
enum class OutputFraming : std::uint8_t { content_length, chunked };

template <class T>
T* checked(T* p) {
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

bool has_attachment(const Payload& payload) {
  if (const auto* m = std::get_if<Message>(&payload)) return !m->attachment.empty();
  if (const auto* l = std::get_if<MessageList>(&payload))
    return std::any_of(l->messages.begin(), l->messages.end(),
                       [](const Message& m) { return !m.attachment.empty(); });
  if (const auto* b = std::get_if<Binary>(&payload)) return !b->data.empty();
  // Buildings go as an attached GML document in MTOM and SwA.
  return std::holds_alternative<BuildingCollection>(payload);
}

class SoapCodec final : public StagedCodec {
 public:
  explicit SoapCodec(Attachments attachments, OutputFraming framing = OutputFraming::content_length)
      : attachments_(attachments),
        framing_(framing),
        name_(codec_name(attachments)),
        bind_ctx_(new_context()),
        write_ctx_(new_write_context()),
        read_ctx_(new_read_context()) {}

  std::string not_applicable(const Payload& payload) const override {
    if (attachments_ != Attachments::inline_base64 && !has_attachment(payload))
      return "no binary: " + std::string(attachments_ == Attachments::mtom ? "MTOM" : "SwA") +
             " output identical to soap";
    return {};
  }

  std::string content_type() const override { return content_type_; }

  void bind(const Payload& in) override {
    bound_ = nullptr;
    // Fresh: a new context per call, as a gSOAP application that makes one
    // per message does; reuse releases the previous message's structs.
    if (fresh()) bind_ctx_ = new_context();
    Context* ctx = bind_ctx_.get();
    release_message(ctx);
    wsb__getResponse* r = checked(soap_new_wsb__getResponse(ctx));
    bound_parts_.clear();
    const Binder binder(ctx, attachments_, &bound_parts_);
    binder.payload(in, r->__union_payload, r->payload);
    bound_used_ = binder.used();
    bound_ = r;
  }

  void write(std::string& out) override {
    if (bound_ == nullptr) throw std::logic_error(name_ + ": write() before bind()");
    if (fresh()) write_ctx_ = new_write_context();
    Context* ctx = write_ctx_.get();
    // The bound structs live in bind_ctx_, so releasing this context's
    // per-message state (MIME boundary, attachment list) keeps repeated
    // writes of one binding from growing.
    release_message(ctx);
    out.clear();
    sink_ = &out;
    // What wsbenchService's serve_wsb__get does after the operation returns,
    // with soap_begin_send in place of soap_response (which would prepend
    // the HTTP header).
    declare_used(ctx, bound_used_);
    soap_begin(ctx);
    // SwA: the parts follow the envelope in one MIME package; without any
    // the message is plain SOAP, as MTOM's is.
    if (!bound_parts_.empty())
      attach_swa_parts(ctx, bound_parts_);
    else
      soap_clr_mime(ctx);
    ctx->encodingStyle = nullptr;  // literal
    soap_serializeheader(ctx);
    soap_serialize_wsb__getResponse(ctx, bound_);
    // Counting pass: the Content-Length a server sends, and for MTOM the
    // pass that selects the MIME boundary and queues the attachments. None
    // with chunked output (soap_begin_count leaves SOAP_IO_LENGTH unset).
    if (soap_begin_count(ctx)) fail_write();
    if (ctx->mode & SOAP_IO_LENGTH) {
      if (soap_envelope_begin_out(ctx) || soap_putheader(ctx) || soap_body_begin_out(ctx) ||
          soap_put_wsb__getResponse(ctx, bound_, "wsb:getResponse", "") || soap_body_end_out(ctx) ||
          soap_envelope_end_out(ctx))
        fail_write();
    }
    if (soap_end_count(ctx)) fail_write();
    // Chunked, there was no counting pass and the count is not the size.
    if (framing_ == OutputFraming::content_length)
      out.reserve(static_cast<std::size_t>(ctx->count));
    if (soap_begin_send(ctx) || soap_envelope_begin_out(ctx) || soap_putheader(ctx) ||
        soap_body_begin_out(ctx) || soap_put_wsb__getResponse(ctx, bound_, "wsb:getResponse", "") ||
        soap_body_end_out(ctx) || soap_envelope_end_out(ctx) || soap_end_send(ctx))
      fail_write();
    sink_ = nullptr;
    // The Content-Type gSOAP's HTTP header would carry: text/xml, or for
    // MTOM and SwA multipart/related with this message's boundary and start
    // part.
    content_type_ = soap_http_content_type(ctx, SOAP_OK);
  }

  void read(std::string_view wire) override {
    received_ = nullptr;
    input_ = framing_ == OutputFraming::chunked ? dechunk(wire) : wire;
    // gSOAP's base64 reader takes malformed padding; that alone is checked
    // before it reads, on the message (chunk framing would split its text;
    // docs/reference/codecs.md says which leniencies stay).
    if (const std::string why =
            XmlTextCheck::base64_elements(attachments_ != Attachments::inline_base64,
                                          base64_element_names(), is_base64_element, input_);
        !why.empty())
      fail(why);
    if (fresh()) read_ctx_ = new_read_context();
    Context* ctx = read_ctx_.get();
    release_message(ctx);
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
    check_no_trailing_content(ctx, input_, name_);
    received_ = r;
  }

  void unbind(Payload& out) override {
    if (received_ == nullptr) throw std::logic_error(name_ + ": unbind() without a good read()");
    // Moves strings and arrays out of the structs, as the gsoap client
    // does: the next read releases them anyway. So one read, one unbind.
    wsb__getResponse* r = std::exchange(received_, nullptr);
    out = Unbinder(name_).payload(r->__union_payload, r->payload, "getResponse");
  }

  bool unbind_consumes() const override { return true; }

 private:
  ContextPtr new_write_context() {
    ContextPtr ctx = new_context();
    // UTF-8 strings pass through unchanged (the default treats bytes >= 0x80
    // as Latin-1). Buffered output (SOAP_IO_BUFFER) is what gSOAP itself
    // picks on a socket: fsend sees 64 KiB blocks, not every tag.
    // Chunked output (SOAP_IO_CHUNK) skips the counting pass: gSOAP writes
    // each buffer's worth as a chunk.
    soap_set_omode(
        ctx.get(),
        SOAP_C_UTFSTRING | (framing_ == OutputFraming::chunked ? SOAP_IO_CHUNK : SOAP_IO_BUFFER));
    if (attachments_ == Attachments::mtom) soap_set_omode(ctx.get(), SOAP_ENC_MTOM);
    ctx->fsend = &SoapCodec::send_to_sink;
    ctx->user = this;
    return ctx;
  }

  ContextPtr new_read_context() {
    ContextPtr ctx = new_context();
    // Strict validation: required elements must be present, unknown
    // elements are errors rather than skipped.
    soap_set_imode(ctx.get(), SOAP_C_UTFSTRING | SOAP_XML_STRICT);
    ctx->frecv = &SoapCodec::recv_from_input;
    ctx->user = this;
    apply_input_limits(ctx.get(), kMaxCodecMessageBytes);
    return ctx;
  }

  static int send_to_sink(Context* ctx, const char* data, std::size_t size) {
    static_cast<SoapCodec*>(ctx->user)->sink_->append(data, size);
    return SOAP_OK;
  }

  static std::size_t recv_from_input(Context* ctx, char* buf, std::size_t size) {
    return take_input(static_cast<SoapCodec*>(ctx->user)->input_, buf, size);
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

  // The chunked body's data, for the reader (the framing is HTTP's, which
  // the codec's reader does not parse).
  std::string_view dechunk(std::string_view wire) {
    dechunked_.clear();
    ChunkedCheck framing;
    const std::string error =
        framing.feed(wire, [this](std::string_view data) { dechunked_.append(data); });
    if (!error.empty()) throw DecodeError(name_ + ": chunked body: " + error);
    if (!framing.done()) throw DecodeError(name_ + ": chunked body: no last chunk");
    return dechunked_;
  }

  [[noreturn]] void fail_write() {
    sink_ = nullptr;
    throw std::runtime_error(describe(write_ctx_.get()));
  }

  static const char* codec_name(Attachments attachments) {
    switch (attachments) {
      case Attachments::mtom:
        return "soap-mtom";
      case Attachments::swa:
        return "soap-swa";
      case Attachments::inline_base64:
        break;
    }
    return "soap";
  }

  const Attachments attachments_;
  const OutputFraming framing_;
  const std::string name_;
  ContextPtr bind_ctx_;   // owns the bound structs
  ContextPtr write_ctx_;  // the engine state of one write
  ContextPtr read_ctx_;   // the engine state of one read, and the structs it made
  wsb__getResponse* bound_ = nullptr;
  std::vector<SwaPart> bound_parts_;  // soap-swa: the bound message's MIME parts
  UsedNamespaces bound_used_;         // the namespaces the bound message uses
  wsb__getResponse* received_ = nullptr;
  std::string* sink_ = nullptr;                           // write()'s output while it runs
  std::string_view input_;                                // read()'s unread input
  std::string dechunked_;                                 // a chunked read's data
  std::string content_type_ = "text/xml; charset=utf-8";  // until the first write
};

}  // namespace

std::unique_ptr<Codec> make_soap_codec() {
  return std::make_unique<SoapCodec>(Attachments::inline_base64);
}
std::unique_ptr<Codec> make_soap_chunked_codec() {
  return std::make_unique<SoapCodec>(Attachments::inline_base64, OutputFraming::chunked);
}
std::unique_ptr<Codec> make_soap_mtom_codec() {
  return std::make_unique<SoapCodec>(Attachments::mtom);
}
std::unique_ptr<Codec> make_soap_swa_codec() {
  return std::make_unique<SoapCodec>(Attachments::swa);
}

}  // namespace wsb::soap
