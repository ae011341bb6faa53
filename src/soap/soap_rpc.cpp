// The SOAP RPC binding (common/rpc_binding.h): the call and reply envelopes
// of wsbench_service.h's operations, written and read by the gSOAP engine
// exactly as the generated wsbenchProxy (calls) and wsbenchService
// (replies, faults) do, with the socket replaced by in-memory callbacks as
// in soap_codec.cpp. soap-mtom sends every call as an MTOM package, as the
// gsoap stack's client does, and MTOM-encodes its replies (as plain SOAP
// when they carry no binary, as gSOAP's server does); soap-swa does the same
// with SOAP with Attachments packages.
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/codec.h"
#include "common/input_checks.h"
#include "common/rpc_binding.h"
#include "common/transport.h"
#include "soap/soap_binding.h"
#include "soap/soap_codecs.h"
#include "soap/soap_documents.h"

namespace wsb::soap {
namespace {

// Whole-message size a binding reads: the server's request limit and the
// clients' reply limit are both below it.
constexpr ULONG64 kMaxRpcMessageBytes = ULONG64{256} << 20;
constexpr char kServerName[] = "soap";

class SoapRpcBinding final : public RpcBinding {
 public:
  explicit SoapRpcBinding(Attachments attachments)
      : attachments_(attachments),
        name_(attachments == Attachments::mtom  ? "soap-mtom"
              : attachments == Attachments::swa ? "soap-swa"
                                                : "soap"),
        out_(new_context()),
        in_(new_context()) {
    // The gsoap stack's client and server modes (soap_client.cpp,
    // soap_server.cpp): UTF-8 strings as they are, strict input.
    soap_set_omode(out_.get(), SOAP_C_UTFSTRING | SOAP_IO_BUFFER);
    out_->fsend = &SoapRpcBinding::send_to_sink;
    out_->user = this;
    soap_set_imode(in_.get(), SOAP_C_UTFSTRING | SOAP_XML_STRICT);
    in_->frecv = &SoapRpcBinding::recv_from_input;
    in_->user = this;
    apply_input_limits(in_.get(), kMaxRpcMessageBytes);
  }

  std::string_view path() const override { return "/"; }

  std::optional<std::string> document(std::string_view target, std::string_view host) override {
    if (host.empty() && (target == "/?wsdl" || target == "/wsbench.wsdl"))
      throw DecodeError("soap: the WSDL names the server as the Host header does: send one");
    return published_document(target, "http://" + std::string(host) + "/");
  }

  // What the gsoap client sends: the WSDL's soapAction="" (WS-I BP R2744
  // wants the header present).
  std::pair<std::string_view, std::string_view> call_header() const override {
    return {"SOAPAction", "\"\""};
  }

  void encode_call(const CallArgs& call, std::string& out) override {
    Context* ctx = begin_write();
    // As the gsoap client's begin(): every MTOM or SwA call is a MIME
    // package.
    if (attachments_ == Attachments::mtom) {
      soap_set_omode(ctx, SOAP_ENC_MTOM);
      soap_set_mime(ctx, nullptr, nullptr);
    }
    always_package_ = true;
    const Binder binder(ctx, attachments_, &swa_parts_);
    switch (call.op) {
      case Operation::ping: {
        wsb__ping req;
        return write(binder, &req, soap_serialize_wsb__ping, soap_put_wsb__ping, "wsb:ping", out);
      }
      case Operation::get: {
        wsb__get req;
        req.kind = kind_name(call.spec.kind);
        req.n = static_cast<LONG64>(call.spec.n);
        return write(binder, &req, soap_serialize_wsb__get, soap_put_wsb__get, "wsb:get", out);
      }
      case Operation::echo: {
        wsb__Payload payload;
        binder.payload(*call.payload, payload.__union_payload, payload.payload);
        wsb__echo req;
        req.payload = &payload;
        return write(binder, &req, soap_serialize_wsb__echo, soap_put_wsb__echo, "wsb:echo", out);
      }
      case Operation::register_client: {
        wsb__RegisterClient req;
        return write(binder, &req, soap_serialize_wsb__RegisterClient, soap_put_wsb__RegisterClient,
                     "wsb:RegisterClient", out);
      }
      case Operation::send_message: {
        wsb__Message message;
        binder.message(*call.message, message);
        wsb__SendMessage req;
        req.queue = call.queue;
        req.message = &message;
        return write(binder, &req, soap_serialize_wsb__SendMessage, soap_put_wsb__SendMessage,
                     "wsb:SendMessage", out);
      }
      case Operation::receive_messages: {
        wsb__ReceiveMessage req;
        req.queue = call.queue;
        return write(binder, &req, soap_serialize_wsb__ReceiveMessage, soap_put_wsb__ReceiveMessage,
                     "wsb:ReceiveMessage", out);
      }
      case Operation::unregister_client: {
        wsb__UnregisterClient req;
        req.queue = call.queue;
        return write(binder, &req, soap_serialize_wsb__UnregisterClient,
                     soap_put_wsb__UnregisterClient, "wsb:UnregisterClient", out);
      }
      case Operation::primes: {
        wsb__primes req;
        req.n = call.n;
        return write(binder, &req, soap_serialize_wsb__primes, soap_put_wsb__primes, "wsb:primes",
                     out);
      }
      case Operation::define: {
        wsb__define req;
        req.word = call.word;
        return write(binder, &req, soap_serialize_wsb__define, soap_put_wsb__define, "wsb:define",
                     out);
      }
      case Operation::put: {
        wsb__put req;
        req.word = call.word;
        req.definition = call.definition;
        return write(binder, &req, soap_serialize_wsb__put, soap_put_wsb__put, "wsb:put", out);
      }
    }
    throw std::logic_error(name_ + ": unknown operation");
  }

  std::string call_content_type() const override { return content_type_; }

  void decode_reply(Operation op, std::string_view wire, Payload& out) override {
    Context* ctx = begin_read(wire);
    const Unbinder unbinder(name_);
    switch (op) {
      case Operation::ping: {
        wsb__pingResponse r;
        read_reply(&r, soap_default_wsb__pingResponse, soap_get_wsb__pingResponse,
                   "wsb:pingResponse");
        out = Text{std::move(r.reply)};
        break;
      }
      case Operation::get: {
        wsb__getResponse r;
        read_reply(&r, soap_default_wsb__getResponse, soap_get_wsb__getResponse, "wsb:getResponse");
        out = unbinder.payload(r.__union_payload, r.payload, "getResponse");
        break;
      }
      case Operation::echo: {
        wsb__echoResponse r;
        read_reply(&r, soap_default_wsb__echoResponse, soap_get_wsb__echoResponse,
                   "wsb:echoResponse");
        out = unbinder.payload(r.__union_payload, r.payload, "echoResponse");
        break;
      }
      case Operation::register_client: {
        wsb__RegisterClientResponse r;
        read_reply(&r, soap_default_wsb__RegisterClientResponse,
                   soap_get_wsb__RegisterClientResponse, "wsb:RegisterClientResponse");
        out = Text{std::move(r.queue)};
        break;
      }
      case Operation::send_message: {
        wsb__SendMessageResponse r;
        read_reply(&r, soap_default_wsb__SendMessageResponse, soap_get_wsb__SendMessageResponse,
                   "wsb:SendMessageResponse");
        break;
      }
      case Operation::receive_messages: {
        wsb__ReceiveMessageResponse r;
        read_reply(&r, soap_default_wsb__ReceiveMessageResponse,
                   soap_get_wsb__ReceiveMessageResponse, "wsb:ReceiveMessageResponse");
        MessageList list;
        list.messages.reserve(r.message.size());
        for (wsb__Message& m : r.message) list.messages.push_back(unbinder.message(m));
        out = std::move(list);
        break;
      }
      case Operation::unregister_client: {
        wsb__UnregisterClientResponse r;
        read_reply(&r, soap_default_wsb__UnregisterClientResponse,
                   soap_get_wsb__UnregisterClientResponse, "wsb:UnregisterClientResponse");
        break;
      }
      case Operation::primes: {
        wsb__primesResponse r;
        read_reply(&r, soap_default_wsb__primesResponse, soap_get_wsb__primesResponse,
                   "wsb:primesResponse");
        out = Text{std::move(r.result)};
        break;
      }
      case Operation::define: {
        wsb__defineResponse r;
        read_reply(&r, soap_default_wsb__defineResponse, soap_get_wsb__defineResponse,
                   "wsb:defineResponse");
        out = Text{std::move(r.definition)};
        break;
      }
      case Operation::put: {
        wsb__putResponse r;
        read_reply(&r, soap_default_wsb__putResponse, soap_get_wsb__putResponse, "wsb:putResponse");
        break;
      }
    }
    release_message(ctx);
  }

  void decode_call(std::string_view wire, DecodedCall& out) override {
    Context* ctx = begin_read(wire);
    const Unbinder unbinder(kServerName);
    // What wsbenchService::dispatch does: the Body's first element names
    // the operation.
    soap_peek_element(ctx);
    const auto is = [&](const char* tag) { return soap_match_tag(ctx, ctx->tag, tag) == SOAP_OK; };
    if (is("wsb:ping")) {
      wsb__ping req;
      read_call(&req, soap_default_wsb__ping, soap_get_wsb__ping, "wsb:ping");
      out.op = Operation::ping;
    } else if (is("wsb:get")) {
      wsb__get req;
      read_call(&req, soap_default_wsb__get, soap_get_wsb__get, "wsb:get");
      if (req.n < 0) throw DecodeError(name_ + ": get of a negative size");
      out.op = Operation::get;
      try {
        out.spec = PayloadSpec{kind_from_name(req.kind), static_cast<std::size_t>(req.n)};
      } catch (const std::invalid_argument& e) {
        throw DecodeError(name_ + ": " + e.what());
      }
    } else if (is("wsb:echo")) {
      wsb__echo req;
      read_call(&req, soap_default_wsb__echo, soap_get_wsb__echo, "wsb:echo");
      if (req.payload == nullptr) throw DecodeError(name_ + ": echo without a payload");
      out.op = Operation::echo;
      out.payload = unbinder.payload(req.payload->__union_payload, req.payload->payload, "payload");
    } else if (is("wsb:RegisterClient")) {
      wsb__RegisterClient req;
      read_call(&req, soap_default_wsb__RegisterClient, soap_get_wsb__RegisterClient,
                "wsb:RegisterClient");
      out.op = Operation::register_client;
    } else if (is("wsb:SendMessage")) {
      wsb__SendMessage req;
      read_call(&req, soap_default_wsb__SendMessage, soap_get_wsb__SendMessage, "wsb:SendMessage");
      if (req.message == nullptr) throw DecodeError(name_ + ": SendMessage without a message");
      out.op = Operation::send_message;
      out.queue = std::move(req.queue);
      out.payload = unbinder.message(*req.message);
    } else if (is("wsb:ReceiveMessage")) {
      wsb__ReceiveMessage req;
      read_call(&req, soap_default_wsb__ReceiveMessage, soap_get_wsb__ReceiveMessage,
                "wsb:ReceiveMessage");
      out.op = Operation::receive_messages;
      out.queue = std::move(req.queue);
    } else if (is("wsb:UnregisterClient")) {
      wsb__UnregisterClient req;
      read_call(&req, soap_default_wsb__UnregisterClient, soap_get_wsb__UnregisterClient,
                "wsb:UnregisterClient");
      out.op = Operation::unregister_client;
      out.queue = std::move(req.queue);
    } else if (is("wsb:primes")) {
      wsb__primes req;
      read_call(&req, soap_default_wsb__primes, soap_get_wsb__primes, "wsb:primes");
      out.op = Operation::primes;
      out.n = req.n;
    } else if (is("wsb:define")) {
      wsb__define req;
      read_call(&req, soap_default_wsb__define, soap_get_wsb__define, "wsb:define");
      out.op = Operation::define;
      out.word = std::move(req.word);
    } else if (is("wsb:put")) {
      wsb__put req;
      read_call(&req, soap_default_wsb__put, soap_get_wsb__put, "wsb:put");
      out.op = Operation::put;
      out.word = std::move(req.word);
      out.definition = std::move(req.definition);
    } else {
      throw DecodeError(name_ + ": no operation " + std::string(ctx->tag));
    }
    release_message(ctx);
  }

  void encode_reply(Operation op, const Payload& result, std::string& out) override {
    Context* ctx = begin_write();
    if (attachments_ == Attachments::mtom) soap_set_omode(ctx, SOAP_ENC_MTOM);
    // SwA: a package only if the reply has parts, as the gsoap server
    // answers.
    always_package_ = false;
    const Binder binder(ctx, attachments_, &swa_parts_);
    switch (op) {
      case Operation::ping: {
        wsb__pingResponse r;
        r.reply = std::get<Text>(result).value;
        return write(binder, &r, soap_serialize_wsb__pingResponse, soap_put_wsb__pingResponse,
                     "wsb:pingResponse", out);
      }
      case Operation::get: {
        wsb__getResponse r;
        binder.payload(result, r.__union_payload, r.payload);
        return write(binder, &r, soap_serialize_wsb__getResponse, soap_put_wsb__getResponse,
                     "wsb:getResponse", out);
      }
      case Operation::echo: {
        wsb__echoResponse r;
        binder.payload(result, r.__union_payload, r.payload);
        return write(binder, &r, soap_serialize_wsb__echoResponse, soap_put_wsb__echoResponse,
                     "wsb:echoResponse", out);
      }
      case Operation::register_client: {
        wsb__RegisterClientResponse r;
        r.queue = std::get<Text>(result).value;
        return write(binder, &r, soap_serialize_wsb__RegisterClientResponse,
                     soap_put_wsb__RegisterClientResponse, "wsb:RegisterClientResponse", out);
      }
      case Operation::send_message: {
        wsb__SendMessageResponse r;
        return write(binder, &r, soap_serialize_wsb__SendMessageResponse,
                     soap_put_wsb__SendMessageResponse, "wsb:SendMessageResponse", out);
      }
      case Operation::receive_messages: {
        const auto& messages = std::get<MessageList>(result).messages;
        wsb__ReceiveMessageResponse r;
        r.message.resize(messages.size());
        for (std::size_t i = 0; i < messages.size(); ++i) binder.message(messages[i], r.message[i]);
        return write(binder, &r, soap_serialize_wsb__ReceiveMessageResponse,
                     soap_put_wsb__ReceiveMessageResponse, "wsb:ReceiveMessageResponse", out);
      }
      case Operation::unregister_client: {
        wsb__UnregisterClientResponse r;
        return write(binder, &r, soap_serialize_wsb__UnregisterClientResponse,
                     soap_put_wsb__UnregisterClientResponse, "wsb:UnregisterClientResponse", out);
      }
      case Operation::primes: {
        wsb__primesResponse r;
        r.result = std::get<Text>(result).value;
        return write(binder, &r, soap_serialize_wsb__primesResponse, soap_put_wsb__primesResponse,
                     "wsb:primesResponse", out);
      }
      case Operation::define: {
        wsb__defineResponse r;
        r.definition = std::get<Text>(result).value;
        return write(binder, &r, soap_serialize_wsb__defineResponse, soap_put_wsb__defineResponse,
                     "wsb:defineResponse", out);
      }
      case Operation::put: {
        wsb__putResponse r;
        return write(binder, &r, soap_serialize_wsb__putResponse, soap_put_wsb__putResponse,
                     "wsb:putResponse", out);
      }
    }
    throw std::logic_error(name_ + ": unknown operation");
  }

  // What soap_send_fault writes after the operation set the fault (the
  // gsoap stack's server: a sender fault for what the client got wrong, a
  // receiver fault for our own failures).
  void encode_fault(const Fault& fault, std::string& out) override {
    Context* ctx = begin_write();
    const std::string message(fault.message);
    if (fault.status < 500)
      soap_sender_fault(ctx, message.c_str(), nullptr);
    else
      soap_receiver_fault(ctx, message.c_str(), nullptr);
    ctx->error = SOAP_OK;
    ctx->encodingStyle = nullptr;  // no encodingStyle in Faults
    soap_serializeheader(ctx);
    soap_serializefault(ctx);
    const auto body = [](Context* c) {
      return soap_envelope_begin_out(c) || soap_putheader(c) || soap_body_begin_out(c) ||
             soap_putfault(c) || soap_body_end_out(c) || soap_envelope_end_out(c);
    };
    emit(body, out, SOAP_FAULT);
  }

  std::string reply_content_type() const override { return content_type_; }
  unsigned fault_status() const override { return 500; }

 private:
  Context* begin_write() {
    Context* ctx = out_.get();
    declare_used(ctx, kFaultNamespaces);  // write() declares a message's
    release_message(ctx);
    soap_clr_omode(ctx, SOAP_ENC_MTOM | SOAP_ENC_MIME);
    swa_parts_.clear();
    return ctx;
  }

  // What the generated send_<op> (client) and serve_<op> (server) do
  // around the element, with soap_begin_send in place of soap_connect or
  // soap_response (which would write the HTTP header).
  template <class T>
  void write(const Binder& binder, const T* element, void (*serialize)(Context*, const T*),
             int (*put)(Context*, const T*, const char*, const char*), const char* tag,
             std::string& out) {
    Context* ctx = out_.get();
    declare_used(ctx, binder.used());
    soap_begin(ctx);
    if (attachments_ == Attachments::swa && (always_package_ || !swa_parts_.empty()))
      attach_swa_parts(ctx, swa_parts_);
    ctx->encodingStyle = nullptr;  // literal
    soap_serializeheader(ctx);
    serialize(ctx, element);
    const auto body = [&](Context* c) {
      return soap_envelope_begin_out(c) || soap_putheader(c) || soap_body_begin_out(c) ||
             put(c, element, tag, "") || soap_body_end_out(c) || soap_envelope_end_out(c);
    };
    emit(body, out, SOAP_OK);
  }

  template <class Body>
  void emit(const Body& body, std::string& out, int status) {
    Context* ctx = out_.get();
    out.clear();
    sink_ = &out;
    // Counting pass: the Content-Length, and for MTOM the MIME boundary
    // and the attachment list.
    if (soap_begin_count(ctx)) fail_write();
    if ((ctx->mode & SOAP_IO_LENGTH) && body(ctx)) fail_write();
    if (soap_end_count(ctx)) fail_write();
    out.reserve(static_cast<std::size_t>(ctx->count));
    if (soap_begin_send(ctx) || body(ctx) || soap_end_send(ctx)) fail_write();
    sink_ = nullptr;
    content_type_ = soap_http_content_type(ctx, status);
  }

  Context* begin_read(std::string_view wire) {
    // gSOAP decodes overlong UTF-8 ("\xc0\xaf" becomes "/"), skips a DTD
    // and reads markup inside a string as its text.
    if (const std::string why = XmlTextCheck(attachments_ != Attachments::inline_base64,
                                             is_simple_element, is_base64_element)
                                    .feed(wire);
        !why.empty())
      throw DecodeError(name_ + ": " + why);
    Context* ctx = in_.get();
    release_message(ctx);
    input_ = wire;
    if (soap_begin_recv(ctx) || soap_envelope_begin_in(ctx) || soap_recv_header(ctx) ||
        soap_body_begin_in(ctx))
      fail_read();
    return ctx;
  }

  // After the element: MTOM attachments are resolved only here, at the end
  // of the package, so the structs are unbound after it.
  void end_read() {
    Context* ctx = in_.get();
    if (soap_body_end_in(ctx) || soap_envelope_end_in(ctx)) fail_read();
    // As soap_codec.cpp: gSOAP can drop an unclosed element silently.
    if (ctx->level != 0) throw DecodeError(name_ + ": an element is not closed");
    if (soap_end_recv(ctx)) fail_read();
    check_no_trailing_content(ctx, input_, name_);
  }

  template <class T>
  void read_call(T* element, void (*init)(Context*, T*),
                 T* (*get)(Context*, T*, const char*, const char*), const char* tag) {
    Context* ctx = in_.get();
    init(ctx, element);
    if (get(ctx, element, tag, nullptr) == nullptr || ctx->error) fail_read();
    end_read();
  }

  // As wsbenchProxy's recv_<op>: a Body without the reply is tried as a
  // SOAP Fault, which the call reports as the gsoap client does.
  template <class T>
  void read_reply(T* element, void (*init)(Context*, T*),
                  T* (*get)(Context*, T*, const char*, const char*), const char* tag) {
    Context* ctx = in_.get();
    init(ctx, element);
    if (get(ctx, element, tag, nullptr) != nullptr && !ctx->error) return end_read();
    if (soap_soap_error_check(soap_recv_fault(ctx, 0))) {
      const char* code = *soap_faultcode(ctx);
      const char* text = *soap_faultstring(ctx);
      const std::string what = "SOAP Fault " + std::string(code != nullptr ? code : "?") + ": " +
                               (text != nullptr ? text : "");
      release_message(ctx);
      throw CallError(what);
    }
    fail_read();
  }

  std::string describe(Context* ctx) const {
    soap_set_fault(ctx);
    const char* text = soap_fault_string(ctx);
    const char* detail = soap_fault_detail(ctx);
    std::string what = name_ + ": ";
    what += (text != nullptr && *text != '\0') ? text : "gSOAP error " + std::to_string(ctx->error);
    if (detail != nullptr && *detail != '\0') what += std::string(" (") + detail + ")";
    return what;
  }

  [[noreturn]] void fail_read() {
    const std::string what = describe(in_.get());
    release_message(in_.get());
    throw DecodeError(what);
  }

  [[noreturn]] void fail_write() {
    sink_ = nullptr;
    throw std::runtime_error(describe(out_.get()));
  }

  static int send_to_sink(Context* ctx, const char* data, std::size_t size) {
    static_cast<SoapRpcBinding*>(ctx->user)->sink_->append(data, size);
    return SOAP_OK;
  }

  static std::size_t recv_from_input(Context* ctx, char* buf, std::size_t size) {
    return take_input(static_cast<SoapRpcBinding*>(ctx->user)->input_, buf, size);
  }

  const Attachments attachments_;
  const std::string name_;
  ContextPtr out_;  // the engine state and structs of the message being written
  ContextPtr in_;   // the engine state and structs of the message being read
  std::string* sink_ = nullptr;
  std::string_view input_;
  std::string content_type_ = "text/xml; charset=utf-8";
  // soap-swa: the parts of the message being written, and whether it is a
  // MIME package even without any (calls are, replies are not).
  std::vector<SwaPart> swa_parts_;
  bool always_package_ = false;
};

}  // namespace

std::unique_ptr<RpcBinding> make_soap_rpc() {
  return std::make_unique<SoapRpcBinding>(Attachments::inline_base64);
}
std::unique_ptr<RpcBinding> make_soap_mtom_rpc() {
  return std::make_unique<SoapRpcBinding>(Attachments::mtom);
}
std::unique_ptr<RpcBinding> make_soap_swa_rpc() {
  return std::make_unique<SoapRpcBinding>(Attachments::swa);
}

}  // namespace wsb::soap
