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
// close every 100 requests, is 0 = unlimited) and closed after
// ServerLimits::keepalive_timeout_s idle (recv/send timeouts). After a fault
// from the service the connection stays open (the request was read to its
// end); after a request gSOAP could not read or parse it is closed, as the
// rest of a broken body may still be in the socket.
//
// Limits: soap::recv_maxlength = ServerLimits::max_body_bytes (and gSOAP's
// element count and depth limits from soap_binding.h). A request whose
// Content-Length is over it is refused as soon as its header is parsed
// with HTTP 413 and a SOAP Fault; one that grows past it without declaring
// its length (chunked) is cut off by gSOAP's own check, which ends the
// connection without a reply.
//
// WSDL: GET /?wsdl and GET /wsbench.wsdl return the WSDL soapcpp2 generated
// (compiled in), its service location set to the endpoint the client
// addressed (Host header); any other GET is 404.
#include <sys/socket.h>

#include <atomic>
#include <cstdio>
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
#include "soap/soap_stack_parts.h"
#include "soapwsbenchService.h"

namespace wsb::soap {
namespace {

// Pending connections the kernel queues for accept.
constexpr int kBacklog = 64;
// How often the accept loop checks for stop() (soap::accept_timeout;
// negative values are microseconds).
constexpr int kAcceptPollMicros = 100'000;
// Name used in errors this server raises.
constexpr char kWho[] = "gsoap server";

using SendFn = int (*)(Context*, const char*, std::size_t);
using RecvFn = std::size_t (*)(Context*, char*, std::size_t);
using CloseFn = int (*)(Context*, SOAP_SOCKET);
using ParseFn = int (*)(Context*);

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
};

Connection& connection_of(Context* ctx) { return *static_cast<Connection*>(ctx->user); }

// The engine's I/O functions, taken from a fresh context: the callbacks
// below add a timestamp and hand over to them.
struct EngineIo {
  SendFn send;
  RecvFn recv;
  CloseFn close;
  ParseFn parse;
};

const EngineIo& engine_io() {
  static const EngineIo io = [] {
    Context* ctx = soap_new();
    if (ctx == nullptr) throw std::bad_alloc();
    const EngineIo fns{ctx->fsend, ctx->frecv, ctx->fclosesocket, ctx->fparse};
    soap_free(ctx);
    return fns;
  }();
  return io;
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
      c_.header_parsed = false;
      c_.responding = false;
      bool fault_sent = false;  // soap_begin_serve sends its own
      if (soap_begin_serve(soap) == SOAP_OK) {
        if (dispatch() == SOAP_OK) {
          release();
          continue;
        }
      } else {
        fault_sent = true;
      }
      // SOAP_STOP up to SOAP_POST: answered already (a GET).
      if (soap->error >= SOAP_STOP && soap->error < SOAP_POST) {
        release();
        continue;
      }
      // The peer closed the connection between requests.
      if (soap->error == SOAP_EOF && !c_.header_parsed) return SOAP_OK;
      // Two failures gSOAP leaves unanswered though the peer awaits a
      // reply: an end of input inside the body (garbage, a cut-off
      // envelope), which it takes for a vanished peer; and a body that does
      // not begin with a SOAP envelope, which it takes for a REST payload
      // (the error is then soap::status, SOAP_POST).
      if (soap->error == SOAP_EOF || soap->error >= SOAP_POST) {
        // No envelope was read, so no SOAP version either: answer in 1.1
        // (without it gSOAP's faultcode reads "at source").
        if (soap->version == 0) soap->version = 1;
        soap_sender_fault(soap,
                          soap->error == SOAP_EOF
                              ? "the request body ended before its SOAP envelope did"
                              : "the request body is not a SOAP envelope",
                          nullptr);
        fault_sent = false;
      }
      if (entered_) {
        // The service refused a request read to its end: the connection
        // can go on.
        send_fault_keeping_alive();
      } else if (!fault_sent) {
        // A request that failed before the operation ran may have left
        // part of its body unread: gSOAP's soap_send_fault closes after the
        // fault.
        soap_send_fault(soap);
      }
      release();
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
      return soap_receiver_fault(soap, e.what(), nullptr);
    }
  }

  // soap_send_fault's reply without its forced close (it always ends the
  // connection): the generated code's response sequence (counting pass,
  // then the send) with the Fault as the Body. HTTP 500, as gSOAP sends it.
  void send_fault_keeping_alive() {
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
        soap_end_count(soap) || soap_response(soap, status) || envelope() || soap_end_send(soap))
      soap_closesock(soap);
  }

  int client_fault(const char* what) {
    if (!c_.responding) serviced();
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
    destroy();
    got_.reset();
    echoed_ = Payload{};
    received_.clear();
  }

  Connection& c_;
  Service& service_;
  bool entered_ = false;
  bool mtom_ = false;
  // What the reply's binaries point at, kept until it is written.
  std::shared_ptr<const Payload> got_;
  Payload echoed_;
  std::vector<Message> received_;
};

// ---- engine callbacks of a connection ----

std::size_t timed_recv(Context* ctx, char* buf, std::size_t size) {
  const std::size_t n = engine_io().recv(ctx, buf, size);
  if (n > 0) connection_of(ctx).last_recv_ns = now_ns();
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
    master_->fget = &GsoapServer::get_callback;
    master_->fparse = &GsoapServer::parse_callback;
    master_->user = nullptr;

    const std::string& host = options.listen.host;
    if (!soap_valid_socket(soap_bind(master_, host.c_str(), options.listen.port, kBacklog))) {
      const std::string error = describe(master_);
      soap_free(master_);
      throw std::runtime_error(std::string(kWho) + ": cannot listen on " +
                               options.listen.to_string() + ": " + error);
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (getsockname(master_->master, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      soap_free(master_);
      throw std::runtime_error(std::string(kWho) + ": getsockname failed");
    }
    endpoint_ = options.listen;
    endpoint_.port = ntohs(addr.ss_family == AF_INET6
                               ? reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port
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
      soap_free(master_);
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
    soap_destroy(master_);
    soap_end(master_);
    soap_free(master_);  // closes the listening socket
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
    ctx->user = c.get();
    ctx->frecv = timed_recv;
    ctx->fsend = timed_send;
    ctx->fclosesocket = &GsoapServer::close_callback;
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
      operations.destroy();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: connection ended: %s\n", kWho, e.what());
    }
    soap_force_closesock(c.ctx);
    soap_free(c.ctx);
    c.finished = true;
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
    connection_of(ctx).header_parsed = true;
    if (ctx->length > ctx->recv_maxlength) return 413;
    return SOAP_OK;
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
