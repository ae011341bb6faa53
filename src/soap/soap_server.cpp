// The gsoap server's connection handling: gSOAP's own HTTP engine on an
// accept thread and a thread per connection, each running the keep-alive
// serve loop over soap_operations.h's Operations. Limits, timeouts,
// pipelining and the faults for requests that never reach an operation are
// here; see docs/stacks/gsoap.md for why each is done as it is.
//
// The engine's I/O callbacks (timed_recv, timed_send, ...) carry the
// connection's state: gSOAP reads and parses as one stream, so they are
// where the request's end, the reply's last block and the size limit show.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "common/clock.h"
#include "common/input_checks.h"
#include "common/phases.h"
#include "common/placement.h"
#include "common/service.h"
#include "soap/soap_binding.h"
#include "soap/soap_operations.h"
#include "soap/soap_stack.h"

namespace wsb::soap {
namespace {

// How often the accept loop checks for stop() (soap::accept_timeout;
// negative values are microseconds).
constexpr int kAcceptPollMicros = 100'000;
// Closing a connection in the middle of a request, the server first reads
// and drops what the peer still sends, for up to this long: closing with
// unread input would reset the connection under the reply.
constexpr int kLingerMillis = 1000;
// A body without a declared length (chunked) is cut off when the bytes read
// for its request exceed ServerLimits::max_body_bytes by this much, room
// for the HTTP header and the chunk framing; one with a Content-Length is
// held to the limit exactly.
constexpr ULONG64 kHeaderAllowance = 64 * 1024;
// The socket of a connection served from memory (see serve_memory).
constexpr SOAP_SOCKET kMemorySocket = std::numeric_limits<SOAP_SOCKET>::max();

using SendFn = int (*)(Context*, const char*, std::size_t);
using RecvFn = std::size_t (*)(Context*, char*, std::size_t);
using CloseFn = int (*)(Context*, SOAP_SOCKET);
using ParseFn = int (*)(Context*);
using ParseHeaderFn = int (*)(Context*, const char*, const char*);
using ShutdownFn = int (*)(Context*, SOAP_SOCKET, int);
using ResponseFn = int (*)(Context*, int, ULONG64);

class GsoapServer;

// One accepted connection: its copy of the master context, its thread, and
// what the engine callbacks record about the current request.
struct Connection : Exchange {
  GsoapServer* server = nullptr;         // null when served from memory (serve_bytes)
  const ServerLimits* limits = nullptr;  // the server's, or serve_bytes' own
  Endpoint endpoint;                     // the server's, for the WSDL's default location
  Context* ctx = nullptr;
  SOAP_SOCKET socket = SOAP_INVALID_SOCKET;  // guarded by GsoapServer::mutex_
  std::thread thread;
  std::atomic<bool> finished{false};
  std::optional<ConnectionProbe> probe;  // set before the thread starts
  std::int64_t last_recv_ns = 0;         // when the last bytes came in (probes on)
  bool entered = false;                  // the current request reached its operation
  bool header_parsed = false;            // the current request's HTTP header is in
  ULONG64 request_bytes = 0;             // read for the current request
  bool over_limit = false;               // the current request outgrew max_body
  bool peer_eof = false;                 // the peer stopped sending during it
  ULONG64 max_body = 0;                  // ServerLimits::max_body_bytes
  bool chunked = false;                  // the request has a Transfer-Encoding
  bool length_declared = false;          // the body's end is its Content-Length...
  ULONG64 body_left = 0;                 // ... this many bytes from here
  std::string pending;                   // read past the request: the next one's start
  bool timing_asked = false;             // the request carries kServerTimingRequestHeader
  ServerTimingRecorder timing;           // its phases, when asked
  std::string timing_header;             // "Server-Timing: ..." for the reply's header
  // Where in gSOAP's buffer the next pipelined request starts, when the
  // header's read brought in more than this request's declared body; 0 if
  // it did not.
  std::size_t next_request_at = 0;
  // Set by serve_bytes: the bytes come from memory_in and go to memory_out
  // instead of a socket.
  std::string_view memory_in;
  std::string* memory_out = nullptr;

  // The current request's Content-Length, if declared, and whether one is
  // not a number or two disagree.
  std::optional<ULONG64> content_length;
  bool bad_length = false;

  // Header fields so far and their bytes (name, value, ": ", CRLF).
  std::size_t header_fields = 0;
  std::size_t header_bytes = 0;
  // The body as it arrives, checked where gSOAP is lenient
  // (common/input_checks.h).
  struct BodyChecks {
    ChunkedCheck framing;
    XmlTextCheck text{false, is_simple_element};
  } checks;
  // Why the body was refused while it was read, and the HTTP status of the
  // refusal (0: a SOAP Fault with gSOAP's status).
  std::string refusal;
  int refusal_status = 0;
};

Connection& connection_of(Context* ctx) { return *static_cast<Connection*>(ctx->user); }

// The engine's I/O functions, taken from a fresh context: the callbacks
// below add to them and hand over.
struct EngineIo {
  SendFn send;
  RecvFn recv;
  CloseFn close;
  ShutdownFn shutdown;
  ParseFn parse;
  ParseHeaderFn parse_header;
  ResponseFn response;
};

const EngineIo& engine_io() {
  static const EngineIo io = [] {
    Context* ctx = soap_new();
    if (ctx == nullptr) throw std::bad_alloc();
    const EngineIo fns{ctx->fsend,  ctx->frecv,     ctx->fclosesocket, ctx->fshutdownsocket,
                       ctx->fparse, ctx->fparsehdr, ctx->fresponse};
    soap_free(ctx);
    return fns;
  }();
  return io;
}

// The connection's own bytes, from the socket or from memory. Once gSOAP
// has closed the connection (a malformed MIME body does), nothing: its own
// I/O would fall back to the process's stdin and stdout.
std::size_t raw_recv(Context* ctx, char* buf, std::size_t size) {
  Connection& c = connection_of(ctx);
  if (!soap_valid_socket(ctx->socket)) return 0;
  if (c.memory_out == nullptr) return engine_io().recv(ctx, buf, size);
  const std::size_t n = std::min(size, c.memory_in.size());
  std::memcpy(buf, c.memory_in.data(), n);
  c.memory_in.remove_prefix(n);
  return n;
}

int raw_send(Context* ctx, const char* data, std::size_t size) {
  Connection& c = connection_of(ctx);
  if (!soap_valid_socket(ctx->socket)) return SOAP_EOF;
  if (c.memory_out == nullptr) return engine_io().send(ctx, data, size);
  c.memory_out->append(data, size);
  return SOAP_OK;
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

// Writes the fault in soap::error as the reply, as the generated code writes
// a response (HTTP 500, or the HTTP status in soap::error). Not
// soap_send_fault: it always closes the connection and skips the reply to
// a peer that has only stopped sending. With `close`, the connection ends
// after the reply.
void send_fault(Context* soap, bool close) {
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

// A request that failed before its operation ran: a fault, and the
// connection closes after it, as part of the body may still be unread.
void answer_unreadable(Connection& c) {
  Context* soap = c.ctx;
  // No envelope was read, so no SOAP version either: answer in 1.1
  // (without it gSOAP's faultcode reads "at source").
  if (soap->version == 0) soap->version = 1;
  if (!c.refusal.empty()) {
    soap_sender_fault(soap, c.refusal.c_str(), nullptr);
    if (c.refusal_status != 0) soap->error = c.refusal_status;
  } else if (c.over_limit) {
    // timed_recv stopped the body at the limit (one without a declared
    // length: a declared one is refused in parse_callback).
    refuse_too_large(soap);
  } else if (soap->error == SOAP_EOF || c.peer_eof) {
    // gSOAP takes an end of input for a vanished peer, or reports whatever
    // its parser made of the last tag.
    soap_sender_fault(soap, "the request body ended before its SOAP envelope did", nullptr);
    // The peer closed before its Content-Length was read: HTTP's answer to a
    // message cut short (the fault says why). A whole body whose envelope
    // ends early stays a SOAP Fault with 500.
    if (c.peer_eof) soap->error = 400;
  } else if (soap->error >= SOAP_POST) {
    // gSOAP took the body for a REST payload (error = soap::status).
    soap_sender_fault(soap, "the request body is not a SOAP envelope", nullptr);
  }
  send_fault(soap, true);
}

// The generated serve() loop, with three changes: a fault the service
// raised does not end the connection; a request that cannot be read gets a
// fault rather than silence; and each request's memory is released before
// the next one is read.
void serve_requests(Connection& c, Operations& operations) {
  Context* soap = c.ctx;
  soap->keep_alive = soap->max_keep_alive + 1;
  do {
    if (soap->keep_alive > 0 && soap->max_keep_alive > 0) soap->keep_alive--;
    c.entered = false;
    c.refused = false;
    c.header_parsed = false;
    c.chunked = false;
    c.content_length.reset();
    c.bad_length = false;
    c.header_fields = 0;
    c.header_bytes = 0;
    c.checks = {};
    c.refusal.clear();
    c.refusal_status = 0;
    c.responding = false;
    c.request_bytes = 0;
    c.next_request_at = 0;
    c.over_limit = false;
    c.peer_eof = false;
    c.timing_asked = false;
    c.timing.end();
    c.last_recv_ns = 0;
    soap->http_extra_header = nullptr;
    const bool read = soap_begin_serve(soap) == SOAP_OK;
    if (read && operations.dispatch() == SOAP_OK) {
      operations.release();
      continue;
    }
    // SOAP_STOP up to SOAP_POST: answered already (a GET).
    if (soap->error >= SOAP_STOP && soap->error < SOAP_POST) {
      operations.release();
      continue;
    }
    // The peer closed the connection between requests.
    if (soap->error == SOAP_EOF && !c.header_parsed) return;
    if (c.refused) {
      // The service refused a request read to its end: the connection goes
      // on.
      send_fault(soap, false);
      operations.release();
      continue;
    }
    // The reply failed to go out (the peer went away or stopped reading
    // until the send timeout): nothing more can be said on this connection.
    if (c.entered) return;
    // soap_begin_serve has answered and closed, but for the failures
    // answer_unreadable() handles; dispatch() answers nothing.
    if (!read && soap->error != SOAP_EOF && soap->error < SOAP_POST) return;
    answer_unreadable(c);
    return;
  } while (soap->keep_alive);
}

// ---- engine callbacks of a connection ----

// Whether the request began with "METHOD target HTTP/1.x". Checked on
// what the header's first read brought (a header read in several pieces
// is taken as HTTP: gSOAP found its end).
bool http_request_line(const Context* ctx, const Connection& c) {
  if (c.request_bytes != ctx->buflen) return true;
  const std::string_view head(ctx->buf, ctx->buflen);
  std::string_view line = head.substr(0, head.find('\n'));
  if (line.size() == head.size()) return true;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const auto first_space = line.find(' ');
  return first_space != std::string_view::npos && first_space > 0 &&
         line.find(' ', first_space + 1) != std::string_view::npos &&
         (line.ends_with(" HTTP/1.1") || line.ends_with(" HTTP/1.0"));
}

// Whether `head`, the first bytes of a request, can begin a request line:
// optional empty lines, then a method token of capital letters. gSOAP takes
// anything else for a bare XML message and answers its failure with 500.
bool starts_like_http(std::string_view head) {
  const auto start = head.find_first_not_of("\r\n");
  if (start == std::string_view::npos) return true;
  for (std::size_t i = start; i < head.size(); ++i) {
    if (head[i] == ' ') return i > start;
    if (head[i] < 'A' || head[i] > 'Z') return false;
  }
  return true;
}

// Feeds body bytes to the checks; false (and c.refusal set) on the first
// failure.
bool check_body(Connection& c, std::string_view bytes) {
  auto text = [&c](std::string_view data) {
    if (c.refusal.empty()) c.refusal = c.checks.text.feed(data);
  };
  if (c.chunked) {
    if (std::string error = c.checks.framing.feed(bytes, text); !error.empty()) {
      c.refusal = std::move(error);
      c.refusal_status = 400;
    }
  } else {
    text(bytes);
  }
  return c.refusal.empty();
}

// HTTP's answer to a request refused before gSOAP parsed any of it, then
// the close.
void refuse_raw(Context* ctx, int status, std::string_view reason, std::string_view why) {
  const std::string reply = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
                            "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
                            std::to_string(why.size()) + "\r\nConnection: close\r\n\r\n" +
                            std::string(why);
  raw_send(ctx, reply.data(), reply.size());
  if (connection_of(ctx).memory_out == nullptr) ::shutdown(ctx->socket, SHUT_WR);
  ctx->keep_alive = 0;
}

std::size_t timed_recv(Context* ctx, char* buf, std::size_t size) {
  Connection& c = connection_of(ctx);
  // gSOAP reads on past a Content-Length when its parser wants more (a body
  // that ends inside the XML), until the idle timeout. The body ends where
  // its header says.
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
    n = raw_recv(ctx, buf, size);
  }
  if (bounded) c.body_left -= n;
  if (n == 0) c.peer_eof = true;
  if (n > 0 && !c.header_parsed && c.request_bytes == 0 &&
      !starts_like_http(std::string_view(buf, n))) {
    refuse_raw(ctx, 400, "Bad Request", "the request is not HTTP/1.x\n");
    return 0;
  }
  if (n > 0 && c.header_parsed && !check_body(c, std::string_view(buf, n))) return 0;
  if (n > 0) {
    // Any read may be a request's last: each starts the served time anew
    // (the last before the operation stands), with a read of its own before
    // the one kRequestReceived takes. It ends at the reply's last block.
    c.probe->serving_starts();
    if (c.probe->active() || c.timing_asked) c.last_recv_ns = now_ns();
    c.request_bytes += n;
    // The size limit for bodies without a declared length (see
    // kHeaderAllowance): to gSOAP the input ends here.
    if (c.request_bytes > c.max_body + kHeaderAllowance) {
      c.over_limit = true;
      return 0;
    }
  }
  return n;
}

int timed_send(Context* ctx, const char* data, std::size_t size) {
  // Each block of the reply overwrites the mark: the last one stands.
  Connection& c = connection_of(ctx);
  if (c.responding) {
    mark_server(kMarshalled);
    c.probe->reply_handed();
  }
  return raw_send(ctx, data, size);
}

class GsoapServer final : public Server {
 public:
  GsoapServer(Service& service, const ServerOptions& options)
      : service_(service), options_(options), master_(soap_new()) {
    if (master_ == nullptr) throw std::bad_alloc();
    configure(master_, options.limits);
    // The concurrency settings as gSOAP's guide sets them for a
    // multi-threaded server under load: a bound on a whole message's
    // transfer (a client trickling a byte at a time holds a thread no
    // longer), an accept timeout so the loop sees stop(), and threads
    // bounded by accept_loop().
    master_->max_keep_alive = options.concurrency.max_keepalive_requests;
    master_->transfer_timeout = options.concurrency.request_timeout_s;
    master_->accept_timeout = -kAcceptPollMicros;
    master_->bind_flags = SO_REUSEADDR;

    const std::string& host = options.listen.host;
    if (!soap_valid_socket(
            soap_bind(master_, host.c_str(), options.listen.port, options.concurrency.backlog))) {
      const std::string error = describe(master_);
      free_context(master_);
      throw std::runtime_error(std::string(kServerName) + ": cannot listen on " +
                               options.listen.to_string() + ": " + error);
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (getsockname(master_->master, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      free_context(master_);
      throw std::runtime_error(std::string(kServerName) + ": getsockname failed");
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

  // serve_bytes(): one connection's requests from memory, through the same
  // callbacks and serve loop as a socket's.
  static std::string serve_memory(Service& service, const ServerLimits& limits,
                                  std::string_view request) {
    std::string reply;
    Context* ctx = soap_new();
    if (ctx == nullptr) throw std::bad_alloc();
    configure(ctx, limits);
    Connection c;
    c.ctx = ctx;
    c.endpoint = Endpoint{};
    c.probe.emplace(0, 0);
    c.max_body = limits.max_body_bytes;
    c.limits = &limits;
    c.memory_in = request;
    c.memory_out = &reply;
    attach(ctx, c);
    // Valid to gSOAP (which answers over a socket with an HTTP status line,
    // not CGI's "Status:"), never passed to a system call (raw_recv,
    // raw_send and the close callbacks see memory_out first).
    ctx->socket = kMemorySocket;
    try {
      Operations operations(ctx, service, c);
      serve_requests(c, operations);
    } catch (...) {
      free_context(ctx);
      throw;
    }
    free_context(ctx);
    return reply;
  }

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
  // What the master context and serve_memory's share.
  static void configure(Context* ctx, const ServerLimits& limits) {
    engine_io();
    soap_set_namespaces(ctx, namespaces);
    // Keep-alive must be on in both modes for gSOAP to honour it; UTF-8
    // strings pass through unchanged; strict parsing as in the codecs.
    soap_set_imode(ctx, SOAP_IO_KEEPALIVE | SOAP_C_UTFSTRING | SOAP_XML_STRICT);
    soap_set_omode(ctx, SOAP_IO_KEEPALIVE | SOAP_C_UTFSTRING);
    ctx->max_keep_alive = 0;
    ctx->recv_timeout = limits.keepalive_timeout_s;
    ctx->send_timeout = limits.keepalive_timeout_s;
    // A peer that closes first must not SIGPIPE the process.
    ctx->socket_flags = MSG_NOSIGNAL;
    apply_input_limits(ctx, limits.max_body_bytes);
    // The size limit is ours (parse_callback, timed_recv): gSOAP's failures
    // of soap::recv_maxlength look like malformed input. 0: unlimited.
    ctx->recv_maxlength = 0;
    ctx->fget = &GsoapServer::get_callback;
    ctx->fparse = &GsoapServer::parse_callback;
    ctx->fparsehdr = &GsoapServer::header_callback;
    // "Alive": soap_send_fault polls the socket first and would not answer
    // a peer that has only stopped sending (shutdown(SHUT_WR)).
    ctx->fpoll = [](Context*) { return SOAP_OK; };
    ctx->user = nullptr;
  }

  // The connection's callbacks on its context.
  static void attach(Context* ctx, Connection& c) {
    ctx->user = &c;
    ctx->frecv = timed_recv;
    ctx->fsend = timed_send;
    ctx->fclosesocket = &GsoapServer::close_callback;
    ctx->fshutdownsocket = &GsoapServer::shutdown_callback;
    ctx->fresponse = &GsoapServer::response_callback;
  }

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
      if (live_ >= options_.concurrency.max_connections) {
        // Every thread is busy: new connections wait in the listen queue
        // until one ends.
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
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
    c->endpoint = endpoint_;
    c->probe.emplace(ConnectionProbe::for_socket(ctx->socket));
    c->max_body = options_.limits.max_body_bytes;
    c->limits = &options_.limits;
    attach(ctx, *c);
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
    ++live_;
    ref.thread = std::thread([this, &ref] { serve_connection(ref); });
  }

  void serve_connection(Connection& c) {
    try {
      pin_current_thread(options_.cpu);
      Operations operations(c.ctx, service_, c);
      serve_requests(c, operations);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: connection ended: %s\n", kServerName, e.what());
    }
    soap_force_closesock(c.ctx);
    free_context(c.ctx);
    --live_;
    c.finished = true;
  }

  // gSOAP shuts a connection down (SHUT_RDWR) just before closing it. In
  // the middle of a request, linger first (kLingerMillis).
  static int shutdown_callback(Context* ctx, SOAP_SOCKET socket, int how) {
    if (connection_of(ctx).memory_out != nullptr) return SOAP_OK;
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
    if (c.memory_out != nullptr) return SOAP_OK;
    const std::lock_guard lock(c.server->mutex_);
    if (c.socket == socket) c.socket = SOAP_INVALID_SOCKET;
    return engine_io().close(ctx, socket);
  }

  // HTTP header parsed: refuse a declared body over the limit before
  // reading it. An HTTP status returned here becomes gSOAP's reply (a
  // SOAP Fault with that status).
  static int parse_callback(Context* ctx) {
    const int error = engine_io().parse(ctx);
    Connection& c = connection_of(ctx);
    const std::size_t max_fields = c.limits->max_header_fields;
    const std::size_t max_bytes = c.limits->max_header_bytes;
    // SOAP_HDR: a line over gSOAP's SOAP_HDRLEN, or header_callback's stop.
    if (error == SOAP_HDR || c.header_fields > max_fields || c.header_bytes > max_bytes)
      return refuse_header_too_large(ctx, max_fields, max_bytes);
    if (error) return error;
    // gSOAP takes a first line that is not HTTP for raw XML and would
    // answer CGI-style ("Status: 500", no status line), which no HTTP
    // client can read.
    if (!http_request_line(ctx, c)) return refuse_bad_request(ctx, "the request is not HTTP/1.x\n");
    // gSOAP reads "-1" as 2^64-1 (a 413) and "abc" as 0 (a 500 later).
    if (c.bad_length) return refuse_bad_request(ctx, "invalid Content-Length\n");
    c.header_parsed = true;
    // What of the body the header's read already brought in is in gSOAP's
    // buffer past the header.
    c.length_declared = !c.chunked;
    const ULONG64 buffered = ctx->buflen - ctx->bufidx;
    c.body_left = ctx->length > buffered ? ctx->length - buffered : 0;
    // gSOAP's parser stops at the envelope's end, not at the body's: what
    // follows the body (a newline after the envelope) is not the next
    // request.
    if (c.length_declared && buffered > ctx->length) c.next_request_at = ctx->bufidx + ctx->length;
    if (ctx->length > connection_of(ctx).max_body) return refuse_too_large(ctx);
    const std::size_t body_buffered =
        c.chunked ? buffered : std::min<ULONG64>(buffered, ctx->length);
    if (!check_body(c, std::string_view(ctx->buf + ctx->bufidx, body_buffered))) {
      if (c.refusal_status != 0) return refuse_bad_request(ctx, c.refusal + "\n");
      soap_sender_fault(ctx, c.refusal.c_str(), nullptr);
      return ctx->error = SOAP_FAULT;
    }
    return SOAP_OK;
  }

  static int refuse_header_too_large(Context* ctx, std::size_t max_fields, std::size_t max_bytes) {
    refuse_raw(ctx, 431, "Request Header Fields Too Large",
               "the request header exceeds " + std::to_string(max_fields) + " fields, " +
                   std::to_string(max_bytes) + " bytes or a line of " +
                   std::to_string(SOAP_HDRLEN) + " bytes\n");
    return ctx->error = SOAP_STOP;
  }

  // HTTP's answer to a request whose framing is lost: 400, then the close
  // (SOAP_STOP: nothing more to send, no second request).
  static int refuse_bad_request(Context* ctx, std::string_view why) {
    refuse_raw(ctx, 400, "Bad Request", why);
    return ctx->error = SOAP_STOP;
  }

  // One header field: notes a Transfer-Encoding (chunked), which replaces
  // Content-Length framing, and a Content-Length that is not one decimal
  // number (RFC 9110 8.6), which parse_callback refuses.
  static int header_callback(Context* ctx, const char* key, const char* value) {
    Connection& c = connection_of(ctx);
    ++c.header_fields;
    c.header_bytes += std::strlen(key) + std::strlen(value) + 4;
    // Stops reading a header flood at the limit: parse_callback answers 431.
    const ServerLimits& limits = *c.limits;
    if (c.header_fields > limits.max_header_fields || c.header_bytes > limits.max_header_bytes)
      return SOAP_HDR;
    if (soap_tag_cmp(key, "Transfer-Encoding") == 0) c.chunked = true;
    if (soap_tag_cmp(key, "Content-Type") == 0)
      c.checks.text = XmlTextCheck(soap_tag_cmp(value, "multipart/*") == 0, is_simple_element);
    // Asked for Server-Timing: from here on the request's reads are timed
    // (with probes off they were not); the header's own read just ended.
    if (soap_tag_cmp(key, kServerTimingRequestHeader) == 0) {
      c.timing_asked = true;
      if (c.last_recv_ns == 0) c.last_recv_ns = now_ns();
    }
    if (soap_tag_cmp(key, "Content-Length") == 0) {
      ULONG64 length = 0;
      const char* end = value + std::strlen(value);
      const auto [ptr, ec] = std::from_chars(value, end, length);
      if (ec != std::errc{} || ptr != end || ptr == value ||
          (c.content_length && *c.content_length != length))
        c.bad_length = true;
      else
        c.content_length = length;
    }
    return engine_io().parse_header(ctx, key, value);
  }

  // The reply's HTTP header is about to be written: a request that asked
  // gets its phases in it. gSOAP writes the header after a counting pass
  // over the reply and serialises it again as it sends, so "marshal" here
  // is that counting pass (docs/stacks/gsoap.md).
  static int response_callback(Context* ctx, int status, ULONG64 count) {
    Connection& c = connection_of(ctx);
    if (c.timing.active()) {
      const std::string value = c.timing.value();
      c.timing.end();
      if (!value.empty()) {
        c.timing_header = "Server-Timing: " + value;
        ctx->http_extra_header = c.timing_header.c_str();
      }
    }
    return engine_io().response(ctx, status, count);
  }

  static int get_callback(Context* ctx) { return answer_get(ctx, connection_of(ctx).endpoint); }

  Service& service_;
  const ServerOptions options_;
  Context* master_;
  Endpoint endpoint_;
  std::thread accept_thread_;
  std::atomic<int> live_{0};  // connection threads not yet finished
  std::atomic<bool> stopping_{false};
  std::mutex stop_mutex_;
  std::mutex mutex_;  // connections_ and every Connection::socket
  std::list<std::unique_ptr<Connection>> connections_;
};

}  // namespace

// Every Exchange is a Connection's (serve_connection hands its Connection
// to the operations).
void Exchange::operation_entered(Context* ctx) {
  auto& c = static_cast<Connection&>(*this);
  c.entered = true;
  // Bytes gSOAP read past this request (a pipelined next request) sit in
  // the buffer the reply is about to be written through: keep them for
  // timed_recv to hand back, before what it has not handed out yet.
  if (c.next_request_at != 0)
    c.pending.insert(0, ctx->buf + c.next_request_at, ctx->buflen - c.next_request_at);
  else if (ctx->ahead == 0 && ctx->bufidx < ctx->buflen && !c.length_declared)
    c.pending.insert(0, ctx->buf + ctx->bufidx, ctx->buflen - ctx->bufidx);
  c.probe->request_read(c.last_recv_ns);
  if (c.timing_asked) c.timing.begin(c.last_recv_ns != 0 ? c.last_recv_ns : now_ns());
}

std::unique_ptr<Server> start_gsoap_server(Service& service, const ServerOptions& options) {
  return std::make_unique<GsoapServer>(service, options);
}

std::string serve_bytes(Service& service, const ServerLimits& limits, std::string_view request) {
  return GsoapServer::serve_memory(service, limits, request);
}

}  // namespace wsb::soap
