// The gsoap server's connection handling: gSOAP's own HTTP engine on an
// accept thread and a thread per connection, each running the keep-alive
// serve loop over soap_operations.h's Operations. This file is the server:
// its listening socket and accept loop, the connection threads, the
// contexts' settings (limits, timeouts) and the sockets' shutdown and
// close; see docs/servers/stacks/gsoap.md for why each is done as it is.
//
// The rest of the connection handling shares Connection
// (soap_connection.h). The engine's I/O callbacks (timed_recv, timed_send,
// ...; soap_engine_callbacks.cpp) carry the connection's state: gSOAP reads
// and parses as one stream, so they are where the request's end, the
// reply's last block and the size limit show. The serve loop and the
// faults for requests that never reach an operation are in
// soap_serve_loop.cpp.
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "common/placement.h"
#include "common/service.h"
#include "soap/soap_binding.h"
#include "soap/soap_connection.h"
#include "soap/soap_operations.h"
#include "soap/soap_socket_io.h"
#include "soap/soap_stack.h"
#include "soap/soap_tls.h"

namespace wsb::soap {
namespace server_detail {
namespace {

// How often the accept loop checks for stop() (soap::accept_timeout;
// negative values are microseconds).
constexpr int kAcceptPollMicros = 100'000;
// Closing a connection in the middle of a request, the server first reads
// and drops what the peer still sends, for up to this long: closing with
// unread input would reset the connection under the reply.
constexpr int kLingerMillis = 1000;
// The socket of a connection served from memory (see serve_memory).
constexpr SOAP_SOCKET kMemorySocket = std::numeric_limits<SOAP_SOCKET>::max();

// Everything a context holds, the context last (its fault record too,
// which gSOAP allocates on an error such as a failed bind).
void free_context(Context* ctx) {
  soap_destroy(ctx);
  soap_end(ctx);
  soap_free(ctx);
}

}  // namespace

class GsoapServer final : public Server {
 public:
  GsoapServer(Service& service, const ServerOptions& options, bool tls)
      : service_(service), options_(options), tls_(tls), master_(soap_new()) {
    if (master_ == nullptr) throw std::bad_alloc();
    configure(master_, options.limits);
    if (tls_) {
      try {
        use_tls_server_context(master_);  // the copies share its SSL_CTX
      } catch (...) {
        free_context(master_);
        throw;
      }
    }
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
    // The idle timeout (ServerLimits::keepalive_timeout_s) is the kernel's,
    // on each accepted socket (accept_loop): gSOAP's would cost a select()
    // before every recv and send (soap_socket_io.h).
    ctx->recv_timeout = 0;
    ctx->send_timeout = 0;
    // A peer that closes first must not SIGPIPE the process.
    ctx->socket_flags = MSG_NOSIGNAL;
    apply_input_limits(ctx, limits.max_body_bytes);
    // The size limit is ours (parse_callback, timed_recv): gSOAP's failures
    // of soap::recv_maxlength look like malformed input. 0: unlimited.
    ctx->recv_maxlength = 0;
    ctx->fget = get_callback;
    ctx->fhead = head_callback;
    ctx->fparse = parse_callback;
    ctx->fparsehdr = header_callback;
    // soap_send_fault polls the socket before it answers. "Alive", or it
    // would not answer a peer that has only stopped sending
    // (shutdown(SHUT_WR)); but "gone" after an end of input (the peer
    // closed, a timeout, a request cut off at a limit, which the serve loop
    // answers itself), which gSOAP answers with a 500 fault when its
    // recv_timeout and send_timeout are 0, and not at all when they are set.
    ctx->fpoll = [](Context* soap) { return soap->error == SOAP_EOF ? SOAP_EOF : SOAP_OK; };
    ctx->user = nullptr;
  }

  // The connection's callbacks on its context.
  static void attach(Context* ctx, Connection& c) {
    ctx->user = &c;
    ctx->frecv = timed_recv;
    ctx->fsend = timed_send;
    ctx->fclosesocket = &GsoapServer::close_callback;
    ctx->fshutdownsocket = &GsoapServer::shutdown_callback;
    ctx->fresponse = response_callback;
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
      try {
        // gSOAP leaves an accepted socket non-blocking (for its accept
        // timeout); the connection's reads and writes block, the kernel
        // ending each wait after the idle timeout.
        set_socket_timeouts(ctx->socket, options_.limits.keepalive_timeout_s);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: connection refused: %s\n", kServerName, e.what());
        soap_force_closesock(ctx);
        free_context(ctx);
        continue;
      }
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
      // The handshake on the connection's own thread: a client that stalls
      // in it holds no one else up, and gives up after the request timeout
      // (a non-TLS client fails at its first bytes). Refused, the
      // connection just closes: there is no TLS to answer over.
      if (!tls_ || accept_tls(c.ctx, handshake_timeout_s()).empty()) {
        Operations operations(c.ctx, service_, c);
        serve_requests(c, operations);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: connection ended: %s\n", kServerName, e.what());
    }
    soap_force_closesock(c.ctx);
    free_context(c.ctx);
    --live_;
    c.finished = true;
  }

  // Closing a connection in the middle of a request (its header, or a
  // refusal, read): the reply is out, so a FIN after it, then what the
  // peer still sends is read and dropped for up to kLingerMillis. Once per
  // connection, whichever of gSOAP's shutdown and close comes first (a
  // refusal before gSOAP's parse ends in a close alone).
  static void linger(Connection& c, SOAP_SOCKET socket) {
    if (c.lingered || !(c.header_parsed || c.answered || c.request_bytes > 0)) return;
    c.lingered = true;
    ::shutdown(socket, SHUT_WR);
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

  // gSOAP shuts a connection down (SHUT_RDWR) just before closing it.
  static int shutdown_callback(Context* ctx, SOAP_SOCKET socket, int how) {
    if (connection_of(ctx).memory_out != nullptr) return SOAP_OK;
    if (how == SOAP_SHUT_RDWR) linger(connection_of(ctx), socket);
    return engine_io().shutdown(ctx, socket, how);
  }

  static int close_callback(Context* ctx, SOAP_SOCKET socket) {
    Connection& c = connection_of(ctx);
    if (c.memory_out != nullptr) return SOAP_OK;
    linger(c, socket);
    const std::lock_guard lock(c.server->mutex_);
    if (c.socket == socket) c.socket = SOAP_INVALID_SOCKET;
    return engine_io().close(ctx, socket);
  }

  // The longest a TLS handshake may take: the whole of it is a request's
  // reading, bounded as one is, and no longer than an idle wait.
  int handshake_timeout_s() const {
    const int request = options_.concurrency.request_timeout_s;
    const int idle = options_.limits.keepalive_timeout_s;
    if (request <= 0) return idle > 0 ? idle : 60;
    return idle > 0 && idle < request ? idle : request;
  }

  Service& service_;
  const ServerOptions options_;
  const bool tls_;  // gsoap-tls: every connection is TLS (soap_tls.h)
  Context* master_;
  Endpoint endpoint_;
  std::thread accept_thread_;
  std::atomic<int> live_{0};  // connection threads not yet finished
  std::atomic<bool> stopping_{false};
  std::mutex stop_mutex_;
  std::mutex mutex_;  // connections_ and every Connection::socket
  std::list<std::unique_ptr<Connection>> connections_;
};

}  // namespace server_detail

std::unique_ptr<Server> start_gsoap_server(Service& service, const ServerOptions& options) {
  return std::make_unique<server_detail::GsoapServer>(service, options, false);
}

std::unique_ptr<Server> start_gsoap_tls_server(Service& service, const ServerOptions& options) {
  return std::make_unique<server_detail::GsoapServer>(service, options, true);
}

std::string serve_bytes(Service& service, const ServerLimits& limits, std::string_view request) {
  return server_detail::GsoapServer::serve_memory(service, limits, request);
}

}  // namespace wsb::soap
