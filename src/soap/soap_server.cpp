// The gsoap stack's server: gSOAP's generated wsbenchService on gSOAP's own
// HTTP engine.
//
// Threads: an accept thread polls soap_accept on the master context (a
// negative accept_timeout, so stop() ends it within kAcceptPollMicros); each
// accepted connection gets a soap_copy of the master and a thread of its own
// running the keep-alive serve loop, because the benchmark holds several
// connections open at once (its client and a counting relay's). Every thread
// pins itself to ServerOptions::cpu first.
//
// Phase points (server_probe()): gSOAP reads and parses a request as one
// stream, so the points come from its I/O callbacks: kRequestReceived is the
// last soap::frecv before the operation runs (the request's final bytes in
// hand), kParsed the operation's entry (the generated code has parsed the
// whole request), kServiced when the wsb::Service call returns, and
// kMarshalled the entry of the last soap::fsend of the response (all of it
// encoded, the final block about to be written). All four are marked. Where
// a message is larger than gSOAP's 64 KiB buffer the engine parses earlier
// blocks while later ones are still arriving, and writes earlier blocks
// while encoding later ones: that overlap falls in request_transfer and
// server_marshal respectively.
//
// Replies: a request that came in as MTOM (multipart/related with
// application/xop+xml, which the soap-mtom client always sends) is answered
// in MTOM, with every binary an attachment; anything else inline. A
// wsb::ServiceError (and a request the model rejects) is a SOAP 1.1 Fault
// with faultcode SOAP-ENV:Client and the error's message as faultstring;
// anything else a SOAP-ENV:Server fault. gSOAP sends every SOAP 1.1 fault
// with HTTP 500, as SOAP 1.1 (and WS-I Basic Profile R1126) prescribes, so
// the ServiceError's 400/404/413 is not visible in the HTTP status.
//
// Connections: kept alive (gSOAP's max_keep_alive, by default a forced
// close every 100 requests, is 0 = unlimited; its Keep-Alive header then
// reads "max=1", a hint clients ignore) and closed after
// ServerLimits::keepalive_timeout_s idle (recv/send timeouts). After a fault
// from the service the connection stays open (the request was read to its
// end); after a request gSOAP could not read or parse, it is closed, as the
// rest of a broken body may still be in the socket, and the server first
// drains what the peer still sends (kLingerMillis) so the close does not
// reset the connection under the fault. Pipelined requests are served in
// order: gSOAP alone loses a request that arrived with the previous one, as
// it writes the reply through the buffer holding it (Connection::pending
// keeps it), and it reads past a Content-Length when a body ends inside its
// XML, waiting for bytes that never come (timed_recv ends the body there).
//
// Bad requests: every request the server reads gets a reply. gSOAP alone
// leaves several unanswered (a body that is not a SOAP envelope, one that
// ends early, any fault to a peer that has shut down its sending side);
// serve() and answer_unreadable() answer them with a SOAP-ENV:Client fault.
//
// Limits: ServerLimits::max_body_bytes, enforced by this server rather than
// gSOAP's recv_maxlength (whose failure cannot be told apart from malformed
// input): a Content-Length over it is refused as soon as the header is
// parsed, a body without one (chunked) when the bytes read for it exceed the
// limit by more than kHeaderAllowance; both with HTTP 413 and a SOAP Fault,
// and the connection closes. gSOAP's element count and nesting limits come
// from soap_binding.h.
//
// WSDL: GET /?wsdl and GET /wsbench.wsdl return the WSDL soapcpp2 generated
// (compiled in), its service location set to the endpoint the client
// addressed (Host header); any other GET is 404.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "common/clock.h"
#include "common/codec.h"
#include "common/phases.h"
#include "common/placement.h"
#include "common/service.h"
#include "soap/soap_binding.h"
#include "soap/soap_stack.h"
#include "soapwsbenchService.h"

namespace wsb::soap {
namespace {

// Pending connections the kernel queues for accept.
constexpr int kBacklog = 64;
// How often the accept loop checks for stop() (soap::accept_timeout;
// negative values are microseconds).
constexpr int kAcceptPollMicros = 100'000;
// Closing a connection in the middle of a request (after a fault for a
// request it could not read, or one over the size limit), the server first
// reads and drops what the peer still sends, for up to this long: closing
// with unread input would reset the connection, and the peer could lose
// the reply it has not read yet.
constexpr int kLingerMillis = 1000;
// A body without a declared length (chunked) is cut off when the bytes read
// for its request exceed ServerLimits::max_body_bytes by this much, room
// for the HTTP header and the chunk framing; one with a Content-Length is
// held to the limit exactly.
constexpr ULONG64 kHeaderAllowance = 64 * 1024;
// Name used in errors this server raises.
constexpr char kWho[] = "gsoap server";

using SendFn = int (*)(Context*, const char*, std::size_t);
using RecvFn = std::size_t (*)(Context*, char*, std::size_t);
using CloseFn = int (*)(Context*, SOAP_SOCKET);
using ParseFn = int (*)(Context*);
using ParseHeaderFn = int (*)(Context*, const char*, const char*);
using ShutdownFn = int (*)(Context*, SOAP_SOCKET, int);

class GsoapServer;

// One accepted connection: its copy of the master context, its thread, and
// what the engine callbacks record for the phase points.
struct Connection {
  GsoapServer* server = nullptr;
  Context* ctx = nullptr;
  SOAP_SOCKET socket = SOAP_INVALID_SOCKET;  // guarded by GsoapServer::mutex_
  std::thread thread;
  std::atomic<bool> finished{false};
  std::int64_t last_recv_ns = 0;  // when the last bytes came in
  bool responding = false;        // between kServiced and the end of the reply
  bool header_parsed = false;     // the current request's HTTP header is in
  ULONG64 request_bytes = 0;      // read for the current request
  bool over_limit = false;        // the current request outgrew max_body
  bool peer_eof = false;          // the peer stopped sending during it
  ULONG64 max_body = 0;           // ServerLimits::max_body_bytes
  bool chunked = false;           // the request has a Transfer-Encoding
  bool length_declared = false;   // the body's end is its Content-Length...
  ULONG64 body_left = 0;          // ... this many bytes from here
  std::string pending;            // read past the request: the next one's start
};

Connection& connection_of(Context* ctx) { return *static_cast<Connection*>(ctx->user); }

// The engine's I/O functions, taken from a fresh context: the callbacks
// below add a timestamp and hand over to them.
struct EngineIo {
  SendFn send;
  RecvFn recv;
  CloseFn close;
  ShutdownFn shutdown;
  ParseFn parse;
  ParseHeaderFn parse_header;
};

const EngineIo& engine_io() {
  static const EngineIo io = [] {
    Context* ctx = soap_new();
    if (ctx == nullptr) throw std::bad_alloc();
    const EngineIo fns{ctx->fsend,           ctx->frecv,  ctx->fclosesocket,
                       ctx->fshutdownsocket, ctx->fparse, ctx->fparsehdr};
    soap_free(ctx);
    return fns;
  }();
  return io;
}

// Everything a context holds, the context last (its fault record too,
// which gSOAP allocates on an error such as a failed bind).
void free_context(Context* ctx) {
  soap_destroy(ctx);
  soap_end(ctx);
  soap_free(ctx);
}

// HTTP 413 with a SOAP Fault saying so: soap_send_fault takes an HTTP
// status in soap::error for the reply's status.
int refuse_too_large(Context* ctx) {
  if (ctx->version == 0) ctx->version = 1;  // see answer_unreadable()
  soap_sender_fault(ctx,
                    ("request body larger than the server's limit of " +
                     std::to_string(connection_of(ctx).max_body) + " bytes")
                        .c_str(),
                    nullptr);
  return ctx->error = 413;
}

// The service operations, one object per connection over its context.
class Operations final : public wsbenchService {
 public:
  Operations(Connection& c, Service& service) : wsbenchService(c.ctx), c_(c), service_(service) {}

  // For servers that copy the service object per connection; this one
  // copies the context (soap_copy) and makes an Operations over it, so
  // there is nothing to copy: nullptr is gSOAP's "no copy".
  wsbenchService* copy() override { return nullptr; }

  // The generated serve() loop, with three changes: a fault the service
  // raised does not end the connection; a body that ends early gets a
  // fault rather than silence; and each request's memory is released
  // before the next one is read (the generated loop keeps it until the
  // connection ends).
  int serve() override {
    soap->keep_alive = soap->max_keep_alive + 1;
    do {
      if (soap->keep_alive > 0 && soap->max_keep_alive > 0) soap->keep_alive--;
      entered_ = false;
      refused_ = false;
      c_.header_parsed = false;
      c_.chunked = false;
      c_.responding = false;
      c_.request_bytes = 0;
      c_.over_limit = false;
      c_.peer_eof = false;
      const bool read = soap_begin_serve(soap) == SOAP_OK;
      if (read && dispatch() == SOAP_OK) {
        release();
        continue;
      }
      // SOAP_STOP up to SOAP_POST: answered already (a GET).
      if (soap->error >= SOAP_STOP && soap->error < SOAP_POST) {
        release();
        continue;
      }
      // The peer closed the connection between requests.
      if (soap->error == SOAP_EOF && !c_.header_parsed) return SOAP_OK;
      if (refused_) {
        // The service refused a request read to its end: the connection
        // goes on.
        send_fault(false);
        release();
        continue;
      }
      // The reply failed to go out (the peer went away or stopped reading
      // until the send timeout): nothing more can be said on this
      // connection.
      if (entered_) return SOAP_OK;
      // soap_begin_serve has answered and closed, but for the failures
      // answer_unreadable() handles; dispatch() answers nothing.
      if (!read && soap->error != SOAP_EOF && soap->error < SOAP_POST) return SOAP_OK;
      answer_unreadable();
      return SOAP_OK;
    } while (soap->keep_alive);
    return SOAP_OK;
  }

  int ping(wsb__pingResponse& response) override {
    return run([&] {
      response.reply = Service::ping();
      serviced();
    });
  }

  int get(const std::string& kind, LONG64 n, wsb__getResponse& response) override {
    return run([&] {
      if (n < 0) throw ServiceError(ServiceError::Kind::bad_request, "negative size");
      got_ = service_.get(PayloadSpec{kind_from_name(kind), static_cast<std::size_t>(n)});
      serviced();
      binder().payload(*got_, response.__union_payload, response.payload);
    });
  }

  int echo(wsb__Payload* payload, wsb__echoResponse& response) override {
    return run([&] {
      if (payload == nullptr) throw DecodeError("echo without a payload");
      // Materialised in the model, as every stack's echo is, then bound
      // back: the server's parse and marshal costs are those of a real
      // service.
      echoed_ = unbinder().payload(payload->__union_payload, payload->payload, "payload");
      serviced();
      binder().payload(echoed_, response.__union_payload, response.payload);
    });
  }

  int RegisterClient(wsb__RegisterClientResponse& response) override {
    return run([&] {
      response.queue = service_.register_client();
      serviced();
    });
  }

  int SendMessage(const std::string& queue, wsb__Message* message,
                  wsb__SendMessageResponse&) override {
    return run([&] {
      if (message == nullptr) throw DecodeError("SendMessage without a message");
      service_.send_message(queue, unbinder().message(*message));
      serviced();
    });
  }

  int ReceiveMessage(const std::string& queue, wsb__ReceiveMessageResponse& response) override {
    return run([&] {
      received_ = service_.receive_messages(queue);
      serviced();
      response.message.resize(received_.size());
      for (std::size_t i = 0; i < received_.size(); ++i)
        binder().message(received_[i], response.message[i]);
    });
  }

  int UnregisterClient(const std::string& queue, wsb__UnregisterClientResponse&) override {
    return run([&] {
      service_.unregister_client(queue);
      serviced();
    });
  }

  int primes(unsigned int n, std::string& result) override {
    return run([&] {
      result = service_.primes(n);
      serviced();
    });
  }

 private:
  // Runs an operation: marks the request points, picks the reply's format,
  // and turns exceptions into SOAP Faults (an exception must not unwind
  // through the engine).
  template <class F>
  int run(F&& operation) {
    entered_ = true;
    // Bytes gSOAP read past this request (a pipelined next request) sit in
    // the buffer the reply is about to be written through: keep them for
    // timed_recv to hand back.
    if (soap->ahead == 0 && soap->bufidx < soap->buflen)
      c_.pending.assign(soap->buf + soap->bufidx, soap->buflen - soap->bufidx);
    server_probe().mark(kRequestReceived, c_.last_recv_ns);
    server_probe().mark(kParsed, now_ns());
    // gSOAP sets SOAP_ENC_MTOM in soap::mode when the request was an MTOM
    // package; the reply's format is soap::omode, which persists on the
    // connection, so it is set either way.
    mtom_ = (soap->mode & SOAP_ENC_MTOM) != 0;
    if (mtom_)
      soap_set_omode(soap, SOAP_ENC_MTOM);
    else
      soap_clr_omode(soap, SOAP_ENC_MTOM);
    try {
      operation();
      return SOAP_OK;
    } catch (const ServiceError& e) {
      return client_fault(e.what());
    } catch (const DecodeError& e) {
      return client_fault(e.what());
    } catch (const std::invalid_argument& e) {  // kind_from_name
      return client_fault(e.what());
    } catch (const std::exception& e) {
      if (!c_.responding) serviced();
      refused_ = true;
      return soap_receiver_fault(soap, e.what(), nullptr);
    }
  }

  // Writes the fault in soap::error as the reply: the generated code's
  // response sequence (counting pass, then the send) with the Fault as the
  // Body, HTTP 500 or the HTTP status in soap::error, as gSOAP sends it.
  // Not soap_send_fault, for two reasons: it always closes the connection,
  // and it skips the reply if the peer has stopped sending (a half-closed
  // socket reads as gone to its liveness check), though such a peer still
  // reads. With `close`, the connection ends after the reply.
  void send_fault(bool close) {
    if (close) soap->keep_alive = 0;
    const int status = soap->error;
    soap_set_fault(soap);
    soap->error = SOAP_OK;
    soap->encodingStyle = nullptr;
    soap_serializeheader(soap);
    soap_serializefault(soap);
    auto envelope = [&] {
      return soap_envelope_begin_out(soap) || soap_putheader(soap) || soap_body_begin_out(soap) ||
             soap_putfault(soap) || soap_body_end_out(soap) || soap_envelope_end_out(soap);
    };
    if (soap_begin_count(soap) || ((soap->mode & SOAP_IO_LENGTH) && envelope()) ||
        soap_end_count(soap) || soap_response(soap, status) || envelope() || soap_end_send(soap) ||
        close)
      soap_closesock(soap);
  }

  // A request that failed before the operation ran: a fault, and the
  // connection closes after it (soap_send_fault's way), as part of the body
  // may still be unread. gSOAP itself would stay silent on the first three
  // of these although the peer awaits a reply.
  void answer_unreadable() {
    // No envelope was read, so no SOAP version either: answer in 1.1
    // (without it gSOAP's faultcode reads "at source").
    if (soap->version == 0) soap->version = 1;
    if (c_.over_limit) {
      // timed_recv stopped the body at the limit (one without a declared
      // length: a declared one is refused in parse_callback).
      refuse_too_large(soap);
    } else if (soap->error == SOAP_EOF || c_.peer_eof) {
      // The body ended early (garbage, a cut-off envelope, a peer that
      // stopped sending before its Content-Length was reached): gSOAP takes
      // an end of input for a vanished peer, or reports whatever its parser
      // made of the last tag.
      soap_sender_fault(soap, "the request body ended before its SOAP envelope did", nullptr);
    } else if (soap->error >= SOAP_POST) {
      // A body that does not begin with a SOAP envelope: gSOAP takes it
      // for a REST payload and sets the error to soap::status.
      soap_sender_fault(soap, "the request body is not a SOAP envelope", nullptr);
    }
    send_fault(true);
  }

  int client_fault(const char* what) {
    if (!c_.responding) serviced();
    refused_ = true;
    return soap_sender_fault(soap, what, nullptr);
  }

  void serviced() {
    server_probe().mark(kServiced, now_ns());
    c_.responding = true;
  }

  Binder binder() const { return Binder(soap, mtom_); }
  // The request's structs are released after the reply: move out of them.
  Unbinder unbinder() const { return Unbinder(kWho, true); }

  // After the reply: the request's structs and what the reply pointed at.
  void release() {
    release_message(soap);
    got_.reset();
    echoed_ = Payload{};
    received_.clear();
  }

  Connection& c_;
  Service& service_;
  bool entered_ = false;  // the request reached its operation
  bool refused_ = false;  // which raised a fault
  bool mtom_ = false;
  // What the reply's binaries point at, kept until it is written.
  std::shared_ptr<const Payload> got_;
  Payload echoed_;
  std::vector<Message> received_;
};

// ---- engine callbacks of a connection ----

std::size_t timed_recv(Context* ctx, char* buf, std::size_t size) {
  Connection& c = connection_of(ctx);
  // gSOAP reads on past a Content-Length when its parser wants more (a body
  // that ends inside the XML): it would wait for bytes that never come,
  // until the idle timeout. The body ends where its header says.
  const bool bounded = c.header_parsed && c.length_declared;
  if (bounded) {
    if (c.body_left == 0) return 0;
    size = std::min<ULONG64>(size, c.body_left);
  }
  std::size_t n;
  if (!c.pending.empty()) {
    n = std::min(size, c.pending.size());
    std::memcpy(buf, c.pending.data(), n);
    c.pending.erase(0, n);
  } else {
    n = engine_io().recv(ctx, buf, size);
  }
  if (bounded) c.body_left -= n;
  if (n == 0) c.peer_eof = true;
  if (n > 0) {
    c.last_recv_ns = now_ns();
    c.request_bytes += n;
    // The size limit for bodies without a declared length (see kHeaderAllowance):
    // to gSOAP the input ends here.
    if (c.request_bytes > c.max_body + kHeaderAllowance) {
      c.over_limit = true;
      return 0;
    }
  }
  return n;
}

int timed_send(Context* ctx, const char* data, std::size_t size) {
  // Each block of the reply overwrites the mark: the last one stands.
  if (connection_of(ctx).responding) server_probe().mark(kMarshalled, now_ns());
  return engine_io().send(ctx, data, size);
}

class GsoapServer final : public Server {
 public:
  GsoapServer(Service& service, const ServerOptions& options)
      : service_(service), options_(options), master_(soap_new()) {
    if (master_ == nullptr) throw std::bad_alloc();
    engine_io();
    soap_set_namespaces(master_, namespaces);
    // Keep-alive must be on in both modes for gSOAP to honour it; UTF-8
    // strings pass through unchanged; strict parsing as in the codecs.
    soap_set_imode(master_, SOAP_IO_KEEPALIVE | SOAP_C_UTFSTRING | SOAP_XML_STRICT);
    soap_set_omode(master_, SOAP_IO_KEEPALIVE | SOAP_C_UTFSTRING);
    master_->max_keep_alive = 0;
    master_->accept_timeout = -kAcceptPollMicros;
    master_->recv_timeout = options.limits.keepalive_timeout_s;
    master_->send_timeout = options.limits.keepalive_timeout_s;
    // A peer that closes first must not SIGPIPE the process.
    master_->socket_flags = MSG_NOSIGNAL;
    master_->bind_flags = SO_REUSEADDR;
    apply_input_limits(master_, options.limits.max_body_bytes);
    // gSOAP's own size check (soap::recv_maxlength) counts in ways its
    // errors do not tell apart from malformed input (a chunk declared larger
    // than the limit fails the parse at once, with nothing to say why), so
    // the limit is ours: parse_callback and timed_recv. 0: unlimited.
    master_->recv_maxlength = 0;
    master_->fget = &GsoapServer::get_callback;
    master_->fparse = &GsoapServer::parse_callback;
    master_->fparsehdr = &GsoapServer::header_callback;
    // soap_send_fault (which soap_begin_serve uses for a request it cannot
    // read) first polls the socket and skips the reply if the peer looks
    // gone, which a peer that has only stopped sending (shutdown(SHUT_WR))
    // also does. A poll hook that says "alive" makes it answer; a reply to
    // a peer really gone just fails (MSG_NOSIGNAL).
    master_->fpoll = [](Context*) { return SOAP_OK; };
    master_->user = nullptr;

    const std::string& host = options.listen.host;
    if (!soap_valid_socket(soap_bind(master_, host.c_str(), options.listen.port, kBacklog))) {
      const std::string error = describe(master_);
      free_context(master_);
      throw std::runtime_error(std::string(kWho) + ": cannot listen on " +
                               options.listen.to_string() + ": " + error);
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (getsockname(master_->master, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      free_context(master_);
      throw std::runtime_error(std::string(kWho) + ": getsockname failed");
    }
    endpoint_ = options.listen;
    endpoint_.port =
        ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port
                                         : reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);

    // The accept thread pins itself before anything else: a pinning error
    // surfaces here, as a startup error.
    std::promise<void> started;
    auto ready = started.get_future();
    accept_thread_ = std::thread([this, &started] { accept_loop(started); });
    try {
      ready.get();
    } catch (...) {
      accept_thread_.join();
      free_context(master_);
      throw;
    }
  }

  ~GsoapServer() override { stop(); }

  Endpoint endpoint() const override { return endpoint_; }

  void stop() override {
    const std::lock_guard stop_lock(stop_mutex_);
    if (master_ == nullptr) return;
    stopping_ = true;
    accept_thread_.join();
    {
      // Wakes connection threads blocked in recv or send; each then closes
      // its socket (under this mutex, so no descriptor is reused under us).
      const std::lock_guard lock(mutex_);
      for (const auto& c : connections_)
        if (soap_valid_socket(c->socket)) ::shutdown(c->socket, SHUT_RDWR);
    }
    for (const auto& c : connections_) c->thread.join();
    connections_.clear();
    free_context(master_);  // closes the listening socket
    master_ = nullptr;
  }

 private:
  static std::string describe(Context* ctx) {
    soap_set_fault(ctx);
    const char* text = soap_fault_string(ctx);
    const char* detail = soap_fault_detail(ctx);
    std::string what = text != nullptr ? text : "gSOAP error " + std::to_string(ctx->error);
    if (detail != nullptr && *detail != '\0') what += std::string(" (") + detail + ")";
    return what;
  }

  void accept_loop(std::promise<void>& started) {
    try {
      pin_current_thread(options_.cpu);
    } catch (...) {
      started.set_exception(std::current_exception());
      return;
    }
    started.set_value();
    while (!stopping_) {
      if (!soap_valid_socket(soap_accept(master_))) {
        // errnum 0: the poll timed out. Otherwise a failed accept (e.g. out
        // of descriptors): back off instead of spinning.
        if (master_->errnum != 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      Context* ctx = soap_copy(master_);
      if (ctx == nullptr) {
        soap_force_closesock(master_);
        continue;
      }
      // The copy owns the connection; the master keeps only the listener.
      master_->socket = SOAP_INVALID_SOCKET;
      ctx->master = SOAP_INVALID_SOCKET;
      start_connection(ctx);
    }
  }

  void start_connection(Context* ctx) {
    auto c = std::make_unique<Connection>();
    c->server = this;
    c->ctx = ctx;
    c->socket = ctx->socket;
    c->max_body = options_.limits.max_body_bytes;
    ctx->user = c.get();
    ctx->frecv = timed_recv;
    ctx->fsend = timed_send;
    ctx->fclosesocket = &GsoapServer::close_callback;
    ctx->fshutdownsocket = &GsoapServer::shutdown_callback;
    const std::lock_guard lock(mutex_);
    // Joins the threads of connections that have ended.
    for (auto it = connections_.begin(); it != connections_.end();) {
      if ((*it)->finished) {
        (*it)->thread.join();
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
    Connection& ref = *c;
    connections_.push_back(std::move(c));
    ref.thread = std::thread([this, &ref] { serve_connection(ref); });
  }

  void serve_connection(Connection& c) {
    try {
      pin_current_thread(options_.cpu);
      Operations operations(c, service_);
      operations.serve();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: connection ended: %s\n", kWho, e.what());
    }
    soap_force_closesock(c.ctx);
    free_context(c.ctx);
    c.finished = true;
  }

  // gSOAP shuts a connection down (SHUT_RDWR) just before closing it. In
  // the middle of a request, linger first (kLingerMillis).
  static int shutdown_callback(Context* ctx, SOAP_SOCKET socket, int how) {
    if (connection_of(ctx).header_parsed && how == SOAP_SHUT_RDWR) {
      ::shutdown(socket, SHUT_WR);  // the reply is out: FIN after it
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(kLingerMillis);
      char sink[16 * 1024];
      for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{socket, POLLIN, 0};
        if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
        if (::recv(socket, sink, sizeof sink, 0) <= 0) break;
      }
    }
    return engine_io().shutdown(ctx, socket, how);
  }

  static int close_callback(Context* ctx, SOAP_SOCKET socket) {
    Connection& c = connection_of(ctx);
    const std::lock_guard lock(c.server->mutex_);
    if (c.socket == socket) c.socket = SOAP_INVALID_SOCKET;
    return engine_io().close(ctx, socket);
  }

  // HTTP header parsed: refuse a declared body over the limit before
  // reading it. An HTTP status returned here becomes gSOAP's reply (a
  // SOAP Fault with that status).
  static int parse_callback(Context* ctx) {
    if (const int error = engine_io().parse(ctx)) return error;
    Connection& c = connection_of(ctx);
    c.header_parsed = true;
    // What of the body the header's read already brought in is in gSOAP's
    // buffer past the header.
    c.length_declared = !c.chunked;
    const ULONG64 buffered = ctx->buflen - ctx->bufidx;
    c.body_left = ctx->length > buffered ? ctx->length - buffered : 0;
    if (ctx->length > connection_of(ctx).max_body) return refuse_too_large(ctx);
    return SOAP_OK;
  }

  // One header field: notes a Transfer-Encoding (chunked), which replaces
  // Content-Length framing.
  static int header_callback(Context* ctx, const char* key, const char* value) {
    if (soap_tag_cmp(key, "Transfer-Encoding") == 0) connection_of(ctx).chunked = true;
    return engine_io().parse_header(ctx, key, value);
  }

  static int get_callback(Context* ctx) { return connection_of(ctx).server->serve_get(ctx); }

  int serve_get(Context* ctx) {
    const std::string_view path = ctx->path;
    if (path != "/?wsdl" && path != "/wsbench.wsdl") return 404;
    std::string wsdl(wsbench_wsdl());
    // gSOAP's server sets soap::endpoint to "http://" + Host header + path.
    std::string_view addressed = ctx->endpoint;
    if (addressed.size() > path.size() + 7 && addressed.ends_with(path))
      addressed.remove_suffix(path.size());
    else
      addressed = {};
    const std::string location =
        (addressed.empty() ? "http://" + endpoint_.to_string() : std::string(addressed)) + "/";
    if (const auto at = wsdl.find(kWsdlLocationPlaceholder); at != std::string::npos)
      wsdl.replace(at, kWsdlLocationPlaceholder.size(), location);
    ctx->http_content = "text/xml; charset=utf-8";
    if (soap_response(ctx, SOAP_FILE) || soap_send_raw(ctx, wsdl.data(), wsdl.size()) ||
        soap_end_send(ctx))
      return soap_closesock(ctx);
    return SOAP_OK;
  }

  Service& service_;
  const ServerOptions options_;
  Context* master_;
  Endpoint endpoint_;
  std::thread accept_thread_;
  std::atomic<bool> stopping_{false};
  std::mutex stop_mutex_;
  std::mutex mutex_;  // connections_ and every Connection::socket
  std::list<std::unique_ptr<Connection>> connections_;
};

}  // namespace

std::unique_ptr<Server> start_gsoap_server(Service& service, const ServerOptions& options) {
  return std::make_unique<GsoapServer>(service, options);
}

}  // namespace wsb::soap
