// The gsoap stack's client: gSOAP's generated wsbenchProxy, one per Client,
// on one keep-alive connection (SOAP_IO_KEEPALIVE) opened when the client
// is made and reused by every call.
//
// No silent reconnects: gSOAP's proxy opens a new connection by itself
// whenever the old one is gone (the server closed it, a call failed). The
// connection is opened here, through soap::fopen, and from then on that
// callback refuses, so the call that would reconnect fails with a CallError
// saying the connection was lost.
//
// soap-mtom: every request goes out as an MTOM package (multipart/related,
// application/xop+xml), with or without binaries, as MTOM-enabled SOAP
// clients send them; that is how the server knows to answer in MTOM too.
// soap-swa likewise sends every request as a SOAP with Attachments package
// (multipart/related, text/xml root). Binaries travel as attachments both
// ways; replies are decoded whichever form they come in.
//
// Timeline: kInvoke when the call starts; kRequestWritten on entry to the
// last soap::fsend of the request (all of it encoded, its final block about
// to be handed to the kernel: marked before the send, as the server marks
// kMarshalled, because with both ends on one vCPU the server can run, and
// mark its points, inside the client's send); kResponseReceived when the
// last soap::frecv of the reply returns (its final bytes in hand); kDecoded
// when the call returns, its request and reply structs released and
// destroyed. All four are marked. gSOAP encodes while it writes and parses
// while it reads, so for a message over its 64 KiB buffer, encoding of later
// blocks overlaps the transfer of earlier ones (counted in client_marshal)
// and parsing of earlier blocks the arrival of later ones (counted in
// response_transfer).
//
// Errors: a SOAP Fault is a CallError "SOAP Fault <faultcode>: <faultstring>",
// an HTTP error status without one "HTTP <status>: <gSOAP's description>",
// anything else (transport failure, a reply that does not parse)
// "gsoap/<codec>: <gSOAP's description>".
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "common/clock.h"
#include "common/codec.h"
#include "common/phases.h"
#include "common/service.h"
#include "soap/soap_binding.h"
#include "soap/soap_socket_io.h"
#include "soap/soap_stack.h"
#include "soap/soap_tls.h"
#include "soapwsbenchProxy.h"

namespace wsb::soap {
namespace {

// Largest reply accepted (soap::recv_maxlength). The largest catalogue
// reply, a 64 MiB binary as base64 in an envelope, is about 90 MB; this
// only stops a runaway peer.
constexpr ULONG64 kMaxResponseBytes = ULONG64{256} << 20;
// A read or write that makes no progress for this long fails the call
// (primes(1'000'000) takes seconds; a stuck server must not hang a
// benchmark), and so does a connect.
constexpr int kIdleTimeoutSeconds = 120;
constexpr int kConnectTimeoutSeconds = 10;
// SOAPAction of every request (the WSDL's soapAction=""). SOAP 1.1 wants
// the header present (WS-I BP R2744); with no action gSOAP leaves it out.
constexpr char kAction[] = "";

using OpenFn = SOAP_SOCKET (*)(Context*, const char*, const char*, int);
using ParseHeaderFn = int (*)(Context*, const char*, const char*);
// The request header that asks for the server's phases (phases.h).
const std::string kTimingRequest = std::string(kServerTimingRequestHeader) + ": 1";

class GsoapClient final : public Client {
 public:
  GsoapClient(const Endpoint& server, const std::string& codec, bool tls)
      : attachments_(codec == "soap-mtom"  ? Attachments::mtom
                     : codec == "soap-swa" ? Attachments::swa
                                           : Attachments::inline_base64),
        name_((tls ? "gsoap-tls/" : "gsoap/") + codec),
        url_((tls ? "https://" : "http://") + server.to_string() + "/"),
        proxy_(SOAP_IO_KEEPALIVE | SOAP_C_UTFSTRING | SOAP_XML_STRICT,
               SOAP_IO_KEEPALIVE | SOAP_C_UTFSTRING |
                   (attachments_ == Attachments::mtom ? SOAP_ENC_MTOM : 0)) {
    if (codec != "soap" && codec != "soap-mtom" && codec != "soap-swa")
      throw std::invalid_argument("gsoap carries the soap, soap-mtom and soap-swa codecs, not '" +
                                  codec + "'");
    Context* ctx = proxy_.soap;
    ctx->user = this;
    // A peer that closes first must not SIGPIPE the process.
    ctx->socket_flags = MSG_NOSIGNAL;
    // The idle timeout is the kernel's, on the socket (open_once): gSOAP's
    // would cost a select() before every recv and send (soap_socket_io.h).
    ctx->recv_timeout = 0;
    ctx->send_timeout = 0;
    ctx->connect_timeout = kConnectTimeoutSeconds;
    apply_input_limits(ctx, kMaxResponseBytes);
    proxy_.soap_endpoint = url_.c_str();
    if (tls) {
      try {
        use_tls_client_context(ctx);
      } catch (const std::runtime_error& e) {
        throw CallError(name_ + ": " + e.what());
      }
    }

    open_ = ctx->fopen;
    parse_header_ = ctx->fparsehdr;
    ctx->fparsehdr = &GsoapClient::header_callback;
    ctx->fsend = &GsoapClient::timed_send;
    ctx->frecv = &GsoapClient::timed_recv;
    ctx->fopen = &GsoapClient::open_once;

    // Connect now, as gSOAP's own connect would (soap_connect_command):
    // host and port from the endpoint, then fopen. The first call finds the
    // socket open and keeps it.
    soap_set_endpoint(ctx, url_.c_str());
    ctx->socket = ctx->fopen(ctx, url_.c_str(), ctx->host, ctx->port);
    if (!soap_valid_socket(ctx->socket))
      throw CallError(name_ + ": cannot connect to " + server.to_string() + ": " + gsoap_text());
    ctx->keep_alive = -1;  // what gSOAP sets after opening a keep-alive connection
  }

  std::string ping() override {
    const Call call(*this);
    wsb__pingResponse response;
    send(proxy_.send_ping(nullptr, kAction));
    check(proxy_.recv_ping(response));
    std::string reply = std::move(response.reply);
    return reply;
  }

  void get(const PayloadSpec& spec, Payload& out) override {
    const Call call(*this);
    if (spec.kind != kind_ || kind_name_.empty()) {
      kind_ = spec.kind;
      kind_name_ = kind_name(spec.kind);
    }
    wsb__getResponse response;
    send(proxy_.send_get(nullptr, kAction, kind_name_, static_cast<LONG64>(spec.n)));
    check(proxy_.recv_get(response));
    out = unbind(response.__union_payload, response.payload, "getResponse");
  }

  void echo(const Payload& in, Payload& out) override {
    const Call call(*this);
    wsb__Payload request;
    const Binder binder(proxy_.soap, attachments_);
    binder.payload(in, request.__union_payload, request.payload);
    declare_used(proxy_.soap, binder.used());
    wsb__echoResponse response;
    send(proxy_.send_echo(nullptr, kAction, &request));
    check(proxy_.recv_echo(response));
    out = unbind(response.__union_payload, response.payload, "echoResponse");
  }

  std::string register_client() override {
    const Call call(*this);
    wsb__RegisterClientResponse response;
    send(proxy_.send_RegisterClient(nullptr, kAction));
    check(proxy_.recv_RegisterClient(response));
    std::string queue = std::move(response.queue);
    return queue;
  }

  void send_message(const std::string& queue, const Message& message) override {
    const Call call(*this);
    wsb__Message request;
    const Binder binder(proxy_.soap, attachments_);
    binder.message(message, request);
    declare_used(proxy_.soap, binder.used());
    wsb__SendMessageResponse response;
    send(proxy_.send_SendMessage(nullptr, kAction, queue, &request));
    check(proxy_.recv_SendMessage(response));
  }

  void receive_messages(const std::string& queue, std::vector<Message>& out) override {
    const Call call(*this);
    wsb__ReceiveMessageResponse response;
    send(proxy_.send_ReceiveMessage(nullptr, kAction, queue));
    check(proxy_.recv_ReceiveMessage(response));
    out.clear();
    out.reserve(response.message.size());
    try {
      for (wsb__Message& m : response.message) out.push_back(unbinder_.message(m));
    } catch (const DecodeError& e) {
      fail(e.what());
    }
  }

  void unregister_client(const std::string& queue) override {
    const Call call(*this);
    wsb__UnregisterClientResponse response;
    send(proxy_.send_UnregisterClient(nullptr, kAction, queue));
    check(proxy_.recv_UnregisterClient(response));
  }

  std::string primes(std::uint32_t n) override {
    const Call call(*this);
    std::string result;
    send(proxy_.send_primes(nullptr, kAction, n));
    check(proxy_.recv_primes(result));
    return result;
  }

  std::string define(const std::string& word) override {
    const Call call(*this);
    std::string definition;
    send(proxy_.send_define(nullptr, kAction, word));
    check(proxy_.recv_define(definition));
    return definition;
  }

  void put(const std::string& word, const std::string& definition) override {
    const Call call(*this);
    wsb__putResponse response;
    send(proxy_.send_put(nullptr, kAction, word, definition));
    check(proxy_.recv_put(response));
  }

  std::string upload(const Payload& payload) override {
    const Call call(*this);
    wsb__Payload request;
    const Binder binder(proxy_.soap, attachments_);
    binder.payload(payload, request.__union_payload, request.payload);
    declare_used(proxy_.soap, binder.used());
    std::string receipt;
    send(proxy_.send_upload(nullptr, kAction, &request));
    check(proxy_.recv_upload(receipt));
    return receipt;
  }

  const Timeline& last_timeline() const override { return timeline_; }

  bool request_server_timing() override {
    timing_asked_ = true;
    return true;
  }
  std::optional<ServerDurations> last_server_timing() const override { return server_timing_; }

  std::uint16_t local_port() const override { return socket_port(proxy_.soap->socket); }

 private:
  void begin() {
    timeline_ = {};
    mark(timeline_, kInvoke);
    declare_used(proxy_.soap);  // echo and send_message declare what they bind
    // MTOM mode alone sends a message without binaries as plain SOAP; with
    // a MIME package requested it is always multipart/related (a fresh
    // boundary each message, as gSOAP picks one when none is given). SwA
    // requests are packages too; the binder queues their parts.
    if (attachments_ != Attachments::inline_base64) soap_set_mime(proxy_.soap, nullptr, nullptr);
    // gSOAP sends the extra header once and forgets it: set per call.
    server_timing_.reset();
    io_stop_ = IoStop::none;
    if (timing_asked_) proxy_.soap->http_extra_header = kTimingRequest.c_str();
  }

  // After the reply is in the model: the call's structs are released (as
  // part of the call: their allocation was too).
  void end() {
    release_message(proxy_.soap);
    mark(timeline_, kDecoded);
  }

  // One call, from begin() to end(). Declared first in an operation, it
  // ends the call after the request and reply structs declared after it
  // are destroyed: that is part of the call too (the round-trip check
  // found a send of message-a/100 destroying its request 4 us after
  // kDecoded).
  class Call {
   public:
    explicit Call(GsoapClient& client) : client_(client) { client_.begin(); }
    ~Call() { client_.end(); }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;

   private:
    GsoapClient& client_;
  };

  Payload unbind(int choice, wsb__PayloadChoice& payload, const char* element) {
    try {
      return unbinder_.payload(choice, payload, element);
    } catch (const DecodeError& e) {
      fail(e.what());
    }
  }

  void check(int rc) {
    if (rc != SOAP_OK) fail(describe());
  }

  // The request sent (generated send_<op>: the request declares the
  // namespaces it uses), the reply is read with all of them (recv_<op>).
  void send(int rc) {
    check(rc);
    read_all_namespaces(proxy_.soap);
  }

  [[noreturn]] void fail(const std::string& what) {
    release_message(proxy_.soap);
    throw CallError(what);
  }

  // gSOAP's account of the last error: the sender's faultcode and
  // faultstring for a SOAP Fault, else its own description (with the HTTP
  // status for an HTTP error).
  std::string describe() {
    Context* ctx = proxy_.soap;
    if (reconnect_refused_) {
      reconnect_refused_ = false;
      return name_ + ": the connection to " + url_ +
             " was closed; not reconnecting (a client keeps one connection)";
    }
    if (io_stop_ != IoStop::none)
      return name_ + ": no byte moved to or from " + url_ + " for " +
             std::to_string(kIdleTimeoutSeconds) + " s (the client's idle timeout)";
    const int error = ctx->error;
    std::string what;
    if (error == SOAP_FAULT || error == SOAP_CLI_FAULT || error == SOAP_SVR_FAULT) {
      const char* code = *soap_faultcode(ctx);
      what = "SOAP Fault " + std::string(code != nullptr ? code : "?") + ": ";
    } else if (error >= 100 && error < 600) {
      what = "HTTP " + std::to_string(error) + ": ";
    } else {
      what = name_ + ": ";
    }
    return what + gsoap_text();
  }

  // gSOAP's fault string for the last error (the sender's, for a SOAP
  // Fault) and its detail, if any.
  std::string gsoap_text() {
    Context* ctx = proxy_.soap;
    const int error = ctx->error;
    soap_set_fault(ctx);
    const char* text = soap_fault_string(ctx);
    const char* detail = soap_fault_detail(ctx);
    std::string what =
        (text != nullptr && *text != '\0') ? text : "gSOAP error " + std::to_string(error);
    if (detail != nullptr && *detail != '\0') what += std::string(" (") + detail + ")";
    return what;
  }

  static GsoapClient& self(Context* ctx) { return *static_cast<GsoapClient*>(ctx->user); }

  static int timed_send(Context* ctx, const char* data, std::size_t size) {
    // Marked on entry, each block overwriting the last: the point stays
    // ahead of the server's, which on one vCPU can run inside the send.
    GsoapClient& c = self(ctx);
    mark(c.timeline_, kRequestWritten);
    return socket_send(ctx, data, size, c.io_stop_);
  }

  static std::size_t timed_recv(Context* ctx, char* buf, std::size_t size) {
    GsoapClient& c = self(ctx);
    const std::size_t n = socket_recv(ctx, buf, size, c.io_stop_);
    if (n > 0) mark(c.timeline_, kResponseReceived);
    return n;
  }

  static int header_callback(Context* ctx, const char* key, const char* value) {
    GsoapClient& c = self(ctx);
    if (c.timing_asked_ && soap_tag_cmp(key, "Server-Timing") == 0)
      c.server_timing_ = parse_server_timing(value);
    return c.parse_header_(ctx, key, value);
  }

  static SOAP_SOCKET open_once(Context* ctx, const char* endpoint, const char* host, int port) {
    GsoapClient& c = self(ctx);
    if (c.opened_) {
      c.reconnect_refused_ = true;
      soap_set_receiver_error(ctx, "connection lost", "not reconnecting", SOAP_TCP_ERROR);
      return SOAP_INVALID_SOCKET;
    }
    c.opened_ = true;
    // https: gSOAP connects and makes the TLS handshake, verifying the
    // server, within soap::connect_timeout.
    const SOAP_SOCKET socket = c.open_(ctx, endpoint, host, port);
    if (!soap_valid_socket(socket)) return socket;
    try {
      if (ctx->ssl != nullptr) use_nosignal_bio(ctx->ssl, socket);
      set_socket_timeouts(socket, kIdleTimeoutSeconds);
    } catch (const std::exception& e) {
      ::close(socket);
      soap_set_receiver_error(ctx, "cannot set the connection's timeouts", e.what(),
                              SOAP_TCP_ERROR);
      return SOAP_INVALID_SOCKET;
    }
    return socket;
  }

  const Attachments attachments_;
  const std::string name_;
  const std::string url_;
  wsbenchProxy proxy_;
  // The reply's structs are released after the call: move out of them.
  const Unbinder unbinder_{name_};
  ParseHeaderFn parse_header_ = nullptr;
  bool timing_asked_ = false;
  std::optional<ServerDurations> server_timing_;  // of the last reply, if asked
  OpenFn open_ = nullptr;
  IoStop io_stop_ = IoStop::none;  // a timeout ended the last call's read or write
  bool opened_ = false;
  bool reconnect_refused_ = false;
  Kind kind_ = Kind::text;
  std::string kind_name_;
  Timeline timeline_{};
};

}  // namespace

std::unique_ptr<Client> connect_gsoap_client(const Endpoint& server, const std::string& codec) {
  return std::make_unique<GsoapClient>(server, codec, false);
}

std::unique_ptr<Client> connect_gsoap_tls_client(const Endpoint& server, const std::string& codec) {
  if (codec != "soap")
    throw std::invalid_argument("gsoap-tls carries the soap codec, not '" + codec + "'");
  return std::make_unique<GsoapClient>(server, codec, true);
}

}  // namespace wsb::soap
