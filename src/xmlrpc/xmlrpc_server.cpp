// The xmlrpc-c stack's connection handling: xmlrpc-c's Abyss HTTP server on
// our bound socket, its accept thread (Abyss starts a thread per connection
// from it), keep-alive, TCP_NODELAY, the request body limits, and the call
// processor that guards a call before the method registry (xmlrpc_methods.h)
// runs it. Decisions a reader must know (docs/servers/stacks/xmlrpc-c.md explains):
// - assembled through xmlrpc-c's C API, not xmlrpc_c::serverAbyss, whose
//   parser a bad <i8> crashes, whose run() installs process-wide signal
//   handlers, and which has no hook for a body limit;
// - a body over ServerLimits::max_body_bytes gets 413 before a byte of it is
//   read, one without Content-Length 411.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xmlrpc-c/abyss.h>
#include <xmlrpc-c/base.h>
#include <xmlrpc-c/server.h>
#include <xmlrpc-c/server_abyss.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <future>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "common/clock.h"
#include "common/codec.h"
#include "common/phases.h"
#include "common/placement.h"
#include "xmlrpc/xmlrpc_front.h"
#include "xmlrpc/xmlrpc_guard.h"
#include "xmlrpc/xmlrpc_limits.h"
#include "xmlrpc/xmlrpc_mapping.h"
#include "xmlrpc/xmlrpc_methods.h"
#include "xmlrpc/xmlrpc_stack.h"

namespace wsb::xmlrpc {
namespace {

// Requests on one connection before Abyss closes it: 0 in
// ServerConcurrency::max_keepalive_requests means in effect unlimited.
std::uint32_t keepalive_max_requests(const ServerConcurrency& c) {
  return c.max_keepalive_requests == 0 ? std::numeric_limits<std::uint32_t>::max()
                                       : static_cast<std::uint32_t>(c.max_keepalive_requests);
}
// Stack for the code of ours a connection thread runs besides the methods
// (the guard, iterative), on top of what the registry declares for its
// parser and methods. Abyss sizes its connection threads from these figures.
constexpr std::size_t kProcessorStack = std::size_t{256} << 10;
constexpr std::size_t kLimitHandlerStack = std::size_t{64} << 10;
// The most of a refused body the server reads and discards before it
// closes the connection (past it, the client sees a reset): as much as any
// request xmlrpc-c would accept.
constexpr std::uint64_t kMaxDiscardBytes = kXmlSizeLimit;
// The name of the accept thread, which Linux gives the connection threads
// Abyss starts from it (at most 15 characters).
constexpr const char* kThreadName = "xmlrpc-abyss";

// The client's port of the connection a session is on (0 if unknown).
std::uint16_t peer_port(TSession* session) {
  void* info = nullptr;
  SessionGetChannelInfo(session, &info);
  if (info == nullptr) return 0;
  const sockaddr& peer = static_cast<const abyss_unix_chaninfo*>(info)->peerAddr;
  if (peer.sa_family != AF_INET && peer.sa_family != AF_INET6) return 0;
  // sin_port and sin6_port sit at the same offset.
  in_port_t port = 0;
  std::memcpy(&port, peer.sa_data, sizeof port);
  return ntohs(port);
}

// Abyss serves each connection on a thread of its own, so the thread's
// probe is its connection's; it is replaced if the thread serves another.
ConnectionProbe& connection_probe(TSession* session, std::uint16_t server_port) {
  thread_local std::optional<ConnectionProbe> probe;
  const std::uint16_t client_port = peer_port(session);
  if (!probe || probe->client_port() != client_port) {
    probe.reset();
    probe.emplace(client_port, server_port);
  }
  return *probe;
}

std::string errno_text(int err) { return std::strerror(err); }

// The query of the request's URL, without the '?' (Abyss keeps it apart
// from the path it matches handlers by).
std::string_view request_query(TSession* session) {
  const TRequestInfo* info = nullptr;
  SessionGetRequestInfo(session, &info);
  return info != nullptr && info->query != nullptr ? info->query : "";
}

class AbyssServer final : public Server {
 public:
  AbyssServer(Service& service, const ServerOptions& options)
      : limits_(options.limits), concurrency_(options.concurrency), endpoint_(options.listen) {
    if (limits_.max_body_bytes > kXmlSizeLimit)
      throw std::invalid_argument(
          "xmlrpc-c server: max_body_bytes " + std::to_string(limits_.max_body_bytes) +
          " exceeds xmlrpc-c's XML size limit of " + std::to_string(kXmlSizeLimit));
    raise_xml_size_limit();
    global_init();
    try {
      bind_socket();
      registry_ = make_registry(service);
      make_abyss();
      start_thread(options.cpu);
    } catch (...) {
      release();
      throw;
    }
  }

  ~AbyssServer() override { stop(); }

  Endpoint endpoint() const override { return endpoint_; }

  void stop() override {
    const std::lock_guard lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    ServerTerminate(&abyss_);
    if (thread_.joinable()) thread_.join();
    release();
  }

 private:
  static void global_init() {
    static std::once_flag once;
    std::call_once(once, [] {
      xmlrpc_env env;
      xmlrpc_env_init(&env);
      xmlrpc_server_abyss_global_init(&env);
      const bool failed = env.fault_occurred;
      const std::string why = failed ? env.fault_string : "";
      xmlrpc_env_clean(&env);
      if (failed) throw std::runtime_error("xmlrpc-c server: Abyss initialisation failed: " + why);
    });
  }

  // Binds (does not listen: Abyss does, in ServerInit2).
  void bind_socket() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string where = endpoint_.to_string();
    if (const int rc = getaddrinfo(endpoint_.host.c_str(), std::to_string(endpoint_.port).c_str(),
                                   &hints, &found);
        rc != 0)
      throw std::runtime_error("xmlrpc-c server: cannot resolve " + where + ": " +
                               gai_strerror(rc));
    int err = 0;
    for (const addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
      const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) {
        err = errno;
        continue;
      }
      const int one = 1;
      // A restarted server may take its port back while old connections
      // sit in TIME_WAIT (a port another socket listens on stays refused).
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (bind(fd, a->ai_addr, a->ai_addrlen) == 0) {
        fd_ = fd;
      } else {
        err = errno;
        close(fd);
      }
    }
    freeaddrinfo(found);
    if (fd_ < 0)
      throw std::runtime_error("xmlrpc-c server: cannot bind " + where + ": " + errno_text(err));
  }

  void make_abyss() {
    const char* error = nullptr;
    // Our front reads and checks each request head before Abyss does; a
    // head must fit Abyss's buffer, which reads past none of it.
    FrontLimits front;
    front.max_header_bytes = std::min(limits_.max_header_bytes, kAbyssHeaderBufferBytes - 1);
    front.max_header_fields = limits_.max_header_fields;
    front.request_timeout_s = static_cast<unsigned>(concurrency_.request_timeout_s);
    switch_ = make_front_switch(fd_, front);
    ServerCreateSwitch(&abyss_, switch_, &error);
    check(error, "cannot create the Abyss server");
    abyss_created_ = true;
    ServerSetKeepaliveTimeout(&abyss_, static_cast<std::uint32_t>(limits_.keepalive_timeout_s));
    // Abyss's knobs from ServerConcurrency (docs/servers/concurrency.md). Its thread per
    // connection waits at most `timeout` for each piece of a request; its
    // default of 15 connections (and the 256 set here before) let as many
    // idle or trickling clients lock everyone else out.
    const ServerConcurrency& concurrency = concurrency_;
    ServerSetKeepaliveMaxConn(&abyss_, keepalive_max_requests(concurrency));
    ServerSetTimeout(&abyss_, static_cast<std::uint32_t>(concurrency.request_timeout_s));
    ServerSetMaxConn(&abyss_, static_cast<std::uint32_t>(concurrency.max_connections));
    ServerSetMaxConnBacklog(&abyss_, static_cast<std::uint32_t>(concurrency.backlog));

    xmlrpc_env env;
    xmlrpc_env_init(&env);
    xmlrpc_server_abyss_handler_parms parms{};
    parms.xml_processor = &process_call;
    parms.xml_processor_arg = this;
    parms.xml_processor_max_stack =
        xmlrpc_registry_max_stackSize(registry_.get()) + kProcessorStack;
    parms.uri_path = kRpcPath;
    parms.chunk_response = false;
    parms.allow_origin = nullptr;
    xmlrpc_server_abyss_set_handler3(&env, &abyss_, &parms, sizeof parms);
    check(env, "cannot install the XML-RPC handler");
    xmlrpc_server_abyss_set_default_handler(&abyss_);
    // Abyss tries handlers newest first: this one sees every request
    // before the XML-RPC handler reads its body.
    const ServerReqHandler3 limit{nullptr, &refuse_oversized, this, kLimitHandlerStack};
    abyss_bool added = false;
    ServerAddHandler3(&abyss_, &limit, &added);
    if (!added) throw std::runtime_error("xmlrpc-c server: cannot install the size limit handler");

    ServerInit2(&abyss_, &error);
    check(error, "cannot listen on " + endpoint_.to_string());
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &length) != 0)
      throw std::runtime_error("xmlrpc-c server: getsockname: " + errno_text(errno));
    endpoint_.port =
        ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&local)->sin6_port
                                          : reinterpret_cast<const sockaddr_in*>(&local)->sin_port);
  }

  void start_thread(std::optional<int> cpu) {
    std::promise<void> started;
    auto ready = started.get_future();
    thread_ = std::thread([this, cpu, &started] {
      try {
        pin_current_thread(cpu);
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
        pthread_setname_np(pthread_self(), kThreadName);
      } catch (...) {
        started.set_exception(std::current_exception());
        return;
      }
      started.set_value();
      ServerRun(&abyss_);
    });
    try {
      ready.get();
    } catch (...) {
      thread_.join();
      throw;
    }
  }

  // Frees what exists, in reverse order of creation. ServerRun has returned
  // or never ran.
  void release() {
    if (abyss_created_) {
      ServerFree(&abyss_);
      abyss_created_ = false;
    }
    if (switch_ != nullptr) {
      ChanSwitchDestroy(switch_);
      switch_ = nullptr;
    }
    registry_.reset();
    if (fd_ >= 0) {
      close(fd_);
      fd_ = -1;
    }
  }

  static void check(xmlrpc_env& env, const std::string& what) {
    if (!env.fault_occurred) return;
    const std::string why = env.fault_string;
    xmlrpc_env_clean(&env);
    throw std::runtime_error("xmlrpc-c server: " + what + ": " + why);
  }

  static void check(const char* error, const std::string& what) {
    if (error == nullptr) return;
    const std::string why = error;
    // Abyss's error strings are malloc'ed (xmlrpc_strfree, which frees
    // them, is not in the installed headers).
    std::free(const_cast<char*>(error));
    throw std::runtime_error("xmlrpc-c server: " + what + ": " + why);
  }

  // ---- the request path (connection threads) ----

  // Abyss handler: 413 for a declared body over max_body_bytes (the front
  // has refused a Content-Length that is not a decimal number).
  static void refuse_oversized(void* self_p, TSession* session, abyss_bool* handled) {
    const auto& self = *static_cast<const AbyssServer*>(self_p);
    *handled = false;
    const char* declared = RequestHeaderValue(session, "content-length");
    if (declared == nullptr) return;
    std::uint64_t length = 0;
    std::from_chars(declared, declared + std::strlen(declared), length);
    if (length <= self.limits_.max_body_bytes) return;
    *handled = true;
    // With a Content-Length (Abyss's own error pages end at the close), so
    // a client that stops uploading on an early error, as libcurl does, has
    // the whole reply and closes its end, which ends the discarding below.
    answer_text(session, 413,
                "request body of " + std::to_string(length) + " bytes exceeds the limit of " +
                    std::to_string(self.limits_.max_body_bytes) + "\n");
    // A client that asked for 100-continue sends nothing more; refilling
    // the buffer would send it a 100 after the 413.
    if (RequestHeaderValue(session, "expect") == nullptr)
      discard_body(session, std::min<std::uint64_t>(length, kMaxDiscardBytes));
  }

  static void answer_text(TSession* session, std::uint16_t status, const std::string& why) {
    ResponseStatus(session, status);
    ResponseContentType(session, "text/plain");
    ResponseContentLength(session, why.size());
    ResponseWriteStart(session);
    ResponseWriteBody(session, why.data(), static_cast<std::uint32_t>(why.size()));
  }

  static void discard_body(TSession* session, std::uint64_t bytes) {
    while (bytes > 0) {
      const char* chunk = nullptr;
      std::size_t got = 0;
      SessionGetReadData(session, static_cast<std::size_t>(bytes), &chunk, &got);
      bytes -= got;
      // Fails at end of input, on error and after the request timeout.
      if (bytes > 0 && !SessionRefillBuffer(session)) return;
    }
  }

  // Abyss's XML-RPC handler calls this with the whole body.
  static void process_call(xmlrpc_env* env, void* self_p, const char* xml, std::size_t length,
                           TSession* session, xmlrpc_mem_block** response) {
    const auto& self = *static_cast<const AbyssServer*>(self_p);
    ConnectionProbe& probe = connection_probe(session, self.endpoint_.port);
    // Abyss gives header names in lower case.
    static const std::string timing_request = [] {
      std::string name = kServerTimingRequestHeader;
      for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return name;
    }();
    const bool timing_asked = RequestHeaderValue(session, timing_request.c_str()) != nullptr;
    // The served time runs from here, where Abyss hands over the whole body,
    // to the end of this function, after which Abyss writes the reply: the
    // connection code's points closest to the request's read and the
    // reply's write, each a clock read of its own.
    probe.serving_starts();
    const std::int64_t received = probe.active() || timing_asked ? now_ns() : 0;
    probe.request_read(received);
    ServerTimingRecorder timing;
    if (timing_asked) timing.begin(received);
    // Connection threads are Abyss's; each keeps its own guard.
    thread_local InputGuard guard;
    CallOptions options;
    try {
      options.int64_form = int64_form_of_query(request_query(session));
    } catch (const DecodeError& e) {
      *response = fault_document(env, kFaultBadRequest, e.what());
      return;
    }
    *response =
        answer_call(env, self.registry_.get(), guard, std::string_view(xml, length), &options);
    // Abyss writes the reply when this returns, with the fields added here.
    mark_server(kMarshalled);
    if (timing.active()) {
      if (const std::string value = timing.value(); !value.empty())
        ResponseAddField(session, "Server-Timing", value.c_str());
      timing.end();
    }
    probe.reply_handed();
  }

  const ServerLimits limits_;
  const ServerConcurrency concurrency_;
  Endpoint endpoint_;
  int fd_ = -1;
  Registry registry_;
  TChanSwitch* switch_ = nullptr;
  TServer abyss_{};
  bool abyss_created_ = false;
  std::thread thread_;
  std::mutex stop_mutex_;
  bool stopped_ = false;
};

}  // namespace

std::unique_ptr<Server> start_xmlrpc_server(Service& service, const ServerOptions& options) {
  return std::make_unique<AbyssServer>(service, options);
}

}  // namespace wsb::xmlrpc
