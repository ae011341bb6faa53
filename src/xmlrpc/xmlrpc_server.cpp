// The xmlrpc-c stack's server: xmlrpc-c's Abyss HTTP server and its method
// registry (libxmlrpc_abyss, libxmlrpc_server_abyss, libxmlrpc_server
// 1.33.14).
//
// Assembly. The server is what xmlrpc_c::serverAbyss builds (an Abyss server
// on our bound socket, xmlrpc-c's XML-RPC URI handler at /RPC2 in front of a
// registry, Abyss's default 404 handler), put together through xmlrpc-c's
// public C API instead of the serverAbyss class, which cannot be used here:
// - serverAbyss hands the body straight to the registry's parser, and
//   xmlrpc-c 1.33.14's parser crashes the process on an <i8> that is not a
//   64-bit integer (one bad request from anyone kills the server; pinned in
//   tests/xmlrpc_stack_test.cpp). xmlrpc_server_abyss_set_handler3 lets us
//   install the call processor: it runs the codec's guard (see
//   xmlrpc_guard.cpp) and then calls xmlrpc_registry_process_call2, which
//   is what serverAbyss's processor does.
// - serverAbyss::run() installs process-wide signal handlers while it runs
//   (SIGTERM, SIGINT, SIGHUP and SIGUSR1 exit(1); SIGPIPE ignored; SIGCHLD
//   reaped), which neither the benchmark nor wsbench-server can accept.
// - it has no hook for a body limit of its own (below).
// The methods are registered in xmlrpc-c's C registry, the one the C++
// registry wraps, with the same system.* methods (system.multicall,
// system.listMethods, ...).
//
// Threads. Our thread runs Abyss's accept loop (ServerRun); Abyss starts one
// thread per connection from it (pthread_create), which inherits its CPU
// mask, its signal mask and its name ("xmlrpc-abyss"); the stack test checks
// all three by name. Abyss writes with send() and no MSG_NOSIGNAL, so a
// client that goes away mid-response raises SIGPIPE: our thread blocks it
// (inherited as said), and send() then fails with EPIPE instead.
//
// TCP: Abyss has no TCP_NODELAY option, but sets it on the listening socket
// it is given (seen with strace), and Linux copies it to accepted sockets;
// we set it there as well, and the stack test checks the accepted socket.
// It matters more than usual: Abyss sends the status line and each header
// field of a response with a send() of its own, then the body (nine
// segments for a ping reply), so with Nagle's algorithm on, the client's
// delayed ACK stalls every reply (ping measured at 44 ms instead of
// 135 us); with it off, the extra segments and wake-ups are a real cost of
// this stack, most of a ping's response_transfer phase.
// Keep-alive: kKeepaliveMaxRequests per connection (Abyss's default, 30,
// would force a reconnect every 30 calls), ServerLimits::keepalive_timeout_s
// idle.
//
// Limits. Abyss reads a request body in 4 KiB reads into a growing buffer
// and refuses, with HTTP 500, a Content-Length over xmlrpc-c's process-wide
// XML size limit (kXmlSizeLimit, which this stack's parsers share).
// ServerLimits::max_body_bytes must not exceed it and is enforced first, by
// an Abyss handler that answers 413 before the XML-RPC handler reads a byte,
// reads and discards what the client still sends (up to kMaxDiscardBytes;
// closing with unread input would make the kernel send a reset that can
// destroy the 413 in flight) and closes the connection. A request without
// Content-Length gets 411 (xmlrpc-c's handler does not read chunked
// bodies). A body that stops short of its Content-Length gets 408 from
// xmlrpc-c's handler, at once if the client closed its end, after
// kRequestTimeoutS if it stalls.
//
// Errors on the wire: a call xmlrpc-c cannot parse, or the guard refuses,
// and an unknown method get XML-RPC faults in HTTP 200 (-503 and -506,
// xmlrpc-c's codes), as does anything a method refuses (the codes in
// xmlrpc_stack.h); the connection stays open. The rest gets an HTTP error
// (400 bad Content-Length, 404 other paths, 405 methods but POST, 408, 411,
// 413, 500) and the connection is closed after it.
//
// Stop: ServerTerminate interrupts the accept and every connection's wait,
// then ServerRun waits for the connection threads, checking every 2 s, so
// stop() takes up to 2 s while clients are connected.
//
// Phase points (server_probe()): kRequestReceived when the call processor
// gets the whole body; kParsed in the method, once its parameters are in
// the model; kServiced after the Service call; kMarshalled when the
// registry has written the response XML, before Abyss sends it. All four
// are marked, so no server phase merges. Under system.multicall each inner
// call marks kParsed and kServiced; the last one's marks stand.
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
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <future>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <xmlrpc-c/base.hpp>

#include "common/clock.h"
#include "common/codec.h"
#include "common/phases.h"
#include "common/placement.h"
#include "common/service.h"
#include "xmlrpc/xmlrpc_guard.h"
#include "xmlrpc/xmlrpc_limits.h"
#include "xmlrpc/xmlrpc_mapping.h"
#include "xmlrpc/xmlrpc_parts.h"
#include "xmlrpc/xmlrpc_stack.h"

namespace wsb::xmlrpc {
namespace {

using xmlrpc_c::carray;
using xmlrpc_c::value;

// Requests on one connection before Abyss closes it: in effect unlimited.
constexpr std::uint32_t kKeepaliveMaxRequests = std::numeric_limits<std::uint32_t>::max();
// Seconds Abyss waits for the next piece of a request that has begun
// (Abyss's default, made visible).
constexpr std::uint32_t kRequestTimeoutS = 15;
// Connections served at once; Abyss's default of 15 makes the 16th client
// wait, polling every 2 s, until one closes.
constexpr unsigned kMaxConnections = 256;
constexpr unsigned kListenBacklog = 128;
// Stack for the code of ours a connection thread runs (a method, the guard,
// payload conversion; all iterative), on top of what the registry declares
// for its parser. Abyss sizes its connection threads from these figures.
constexpr std::size_t kMethodStack = std::size_t{1} << 20;
constexpr std::size_t kProcessorStack = std::size_t{256} << 10;
constexpr std::size_t kLimitHandlerStack = std::size_t{64} << 10;
// The most of a refused body the server reads and discards before it
// closes the connection (past it, the client sees a reset): as much as any
// request xmlrpc-c would accept.
constexpr std::uint64_t kMaxDiscardBytes = kXmlSizeLimit;
// The name of the accept thread, which Linux gives the connection threads
// Abyss starts from it (at most 15 characters).
constexpr const char* kThreadName = "xmlrpc-abyss";

void mark(Mark point) { server_probe().mark(point, now_ns()); }

[[noreturn]] void bad_params(const std::string& what) { throw DecodeError("xmlrpc: " + what); }

void expect_params(const carray& params, std::size_t n, const char* method) {
  if (params.size() != n)
    bad_params(std::string(method) + " takes " + std::to_string(n) + " parameter" +
               (n == 1 ? "" : "s") + ", not " + std::to_string(params.size()));
}

std::string errno_text(int err) { return std::strerror(err); }

// A fault document, as xmlrpc-c writes one, in a memory block Abyss frees.
xmlrpc_mem_block* fault_document(xmlrpc_env* env, int code, const char* what) {
  xmlrpc_env fault;
  xmlrpc_env_init(&fault);
  xmlrpc_env_set_fault(&fault, code, what);
  xmlrpc_mem_block* out = xmlrpc_mem_block_new(env, 0);
  if (!env->fault_occurred) {
    xmlrpc_serialize_fault(env, out, &fault);
    if (env->fault_occurred) {
      xmlrpc_mem_block_free(out);
      out = nullptr;
    }
  }
  xmlrpc_env_clean(&fault);
  return out;
}

class AbyssServer;
using MethodFn = value (AbyssServer::*)(const carray& params);

// What the registry hands back to dispatch() as the method's server info.
struct MethodEntry {
  const char* name;
  MethodFn fn;
  AbyssServer* server;
};

class AbyssServer final : public Server {
 public:
  AbyssServer(Service& service, const ServerOptions& options)
      : service_(service), limits_(options.limits), endpoint_(options.listen) {
    if (limits_.max_body_bytes > kXmlSizeLimit)
      throw std::invalid_argument(
          "xmlrpc-c server: max_body_bytes " + std::to_string(limits_.max_body_bytes) +
          " exceeds xmlrpc-c's XML size limit of " + std::to_string(kXmlSizeLimit));
    raise_xml_size_limit();
    global_init();
    try {
      bind_socket();
      make_registry();
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

  void make_registry() {
    xmlrpc_env env;
    xmlrpc_env_init(&env);
    registry_ = xmlrpc_registry_new(&env);
    // The dialect xmlrpc-c writes by default, made explicit: 64-bit
    // integers as <i8>, as the codec expects.
    if (!env.fault_occurred) xmlrpc_registry_set_dialect(&env, registry_, xmlrpc_dialect_i8);
    for (auto& m : methods_) {
      if (env.fault_occurred) break;
      m.server = this;
      const xmlrpc_method_info3 info{m.name, &dispatch, &m, kMethodStack, nullptr, nullptr};
      xmlrpc_registry_add_method3(&env, registry_, &info);
    }
    check(env, "cannot build the method registry");
  }

  void make_abyss() {
    const char* error = nullptr;
    ChanSwitchUnixCreateFd(fd_, &switch_, &error);
    check(error, "cannot use the socket");
    ServerCreateSwitch(&abyss_, switch_, &error);
    check(error, "cannot create the Abyss server");
    abyss_created_ = true;
    ServerSetKeepaliveTimeout(&abyss_, static_cast<std::uint32_t>(limits_.keepalive_timeout_s));
    ServerSetKeepaliveMaxConn(&abyss_, kKeepaliveMaxRequests);
    ServerSetTimeout(&abyss_, kRequestTimeoutS);
    ServerSetMaxConn(&abyss_, kMaxConnections);
    ServerSetMaxConnBacklog(&abyss_, kListenBacklog);

    xmlrpc_env env;
    xmlrpc_env_init(&env);
    xmlrpc_server_abyss_handler_parms parms{};
    parms.xml_processor = &process_call;
    parms.xml_processor_arg = this;
    parms.xml_processor_max_stack = xmlrpc_registry_max_stackSize(registry_) + kProcessorStack;
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
    if (registry_ != nullptr) {
      xmlrpc_registry_free(registry_);
      registry_ = nullptr;
    }
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

  // Abyss handler: 413 for a declared body over max_body_bytes.
  static void refuse_oversized(void* self_p, TSession* session, abyss_bool* handled) {
    const auto& self = *static_cast<const AbyssServer*>(self_p);
    *handled = false;
    const char* declared = RequestHeaderValue(session, "content-length");
    if (declared == nullptr) return;
    std::uint64_t length = 0;
    const char* end = declared + std::strlen(declared);
    if (const auto [ptr, ec] = std::from_chars(declared, end, length);
        ec != std::errc{} || ptr != end)
      return;  // xmlrpc-c's handler answers 400
    if (length <= self.limits_.max_body_bytes) return;
    *handled = true;
    // With a Content-Length (Abyss's own error pages end at the close), so
    // a client that stops uploading on an early error, as libcurl does, has
    // the whole reply and closes its end, which ends the discarding below.
    const std::string why = "request body of " + std::to_string(length) +
                            " bytes exceeds the limit of " +
                            std::to_string(self.limits_.max_body_bytes) + "\n";
    ResponseStatus(session, 413);
    ResponseContentType(session, "text/plain");
    ResponseContentLength(session, why.size());
    ResponseWriteStart(session);
    ResponseWriteBody(session, why.data(), static_cast<std::uint32_t>(why.size()));
    // A client that asked for 100-continue sends nothing more; refilling
    // the buffer would send it a 100 after the 413.
    if (RequestHeaderValue(session, "expect") == nullptr)
      discard_body(session, std::min<std::uint64_t>(length, kMaxDiscardBytes));
  }

  static void discard_body(TSession* session, std::uint64_t bytes) {
    while (bytes > 0) {
      const char* chunk = nullptr;
      std::size_t got = 0;
      SessionGetReadData(session, static_cast<std::size_t>(bytes), &chunk, &got);
      bytes -= got;
      // Fails at end of input, on error and after kRequestTimeoutS.
      if (bytes > 0 && !SessionRefillBuffer(session)) return;
    }
  }

  // Abyss's XML-RPC handler calls this with the whole body.
  static void process_call(xmlrpc_env* env, void* self_p, const char* xml, std::size_t length,
                           TSession* session, xmlrpc_mem_block** response) {
    mark(kRequestReceived);
    const auto& self = *static_cast<const AbyssServer*>(self_p);
    // Connection threads are Abyss's; each keeps its own guard.
    thread_local InputGuard guard;
    try {
      check_document(std::string_view(xml, length), "</methodCall>", guard);
    } catch (const DecodeError& e) {
      *response = fault_document(env, kFaultUnparseable, e.what());
      return;
    } catch (const std::exception& e) {
      xmlrpc_env_set_fault(env, XMLRPC_INTERNAL_ERROR, e.what());  // Abyss answers 500
      return;
    }
    xmlrpc_registry_process_call2(env, self.registry_, xml, length, session, response);
    mark(kMarshalled);
  }

  // The registry calls this for every wsbench method. Exceptions must not
  // cross xmlrpc-c's C code: each becomes a fault.
  static xmlrpc_value* dispatch(xmlrpc_env* env, xmlrpc_value* params, void* entry_p, void*) {
    const auto& entry = *static_cast<const MethodEntry*>(entry_p);
    try {
      const carray args = xmlrpc_c::value_array(value(params)).cvalue();
      return (entry.server->*entry.fn)(args).cValue();  // a new reference, the registry's
    } catch (const ServiceError& e) {
      xmlrpc_env_set_fault(env, e.http_status(), e.what());
    } catch (const DecodeError& e) {
      xmlrpc_env_set_fault(env, kFaultBadRequest, e.what());
    } catch (const std::invalid_argument& e) {
      xmlrpc_env_set_fault(env, kFaultBadRequest, e.what());
    } catch (const std::exception& e) {
      xmlrpc_env_set_fault(env, kFaultInternal, e.what());
    } catch (...) {
      xmlrpc_env_set_fault(env, kFaultInternal, "unknown exception");
    }
    return nullptr;
  }

  // ---- the methods: parameters -> model -> Service -> value ----

  value ping(const carray& params) {
    expect_params(params, 0, kPing);
    mark(kParsed);
    std::string reply = Service::ping();
    mark(kServiced);
    return xmlrpc_c::value_string(reply);
  }

  value get(const carray& params) {
    expect_params(params, 1, kGet);
    const PayloadSpec spec = parse_spec(string_of(params[0], "label"));
    mark(kParsed);
    const auto payload = service_.get(spec);
    mark(kServiced);
    return payload_value(*payload);
  }

  value echo(const carray& params) {
    expect_params(params, 1, kEcho);
    const Payload payload = payload_of(params[0]);
    mark(kParsed);
    // The service's echo is the identity: what was decoded goes back.
    mark(kServiced);
    return payload_value(payload);
  }

  value register_client(const carray& params) {
    expect_params(params, 0, kRegisterClient);
    mark(kParsed);
    std::string queue = service_.register_client();
    mark(kServiced);
    return xmlrpc_c::value_string(queue);
  }

  value send_message(const carray& params) {
    expect_params(params, 2, kSendMessage);
    const std::string queue = string_of(params[0], "queue");
    Message message = message_of(params[1]);
    mark(kParsed);
    service_.send_message(queue, std::move(message));
    mark(kServiced);
    return xmlrpc_c::value_boolean(true);
  }

  value receive_messages(const carray& params) {
    expect_params(params, 1, kReceiveMessages);
    const std::string queue = string_of(params[0], "queue");
    mark(kParsed);
    const Payload messages = MessageList{service_.receive_messages(queue)};
    mark(kServiced);
    return payload_value(messages);
  }

  value unregister_client(const carray& params) {
    expect_params(params, 1, kUnregisterClient);
    const std::string queue = string_of(params[0], "queue");
    mark(kParsed);
    service_.unregister_client(queue);
    mark(kServiced);
    return xmlrpc_c::value_boolean(true);
  }

  value primes(const carray& params) {
    expect_params(params, 1, kPrimes);
    const std::int64_t n = integer_of(params[0], "n");
    if (n < 0 || n > std::numeric_limits<std::uint32_t>::max())
      bad_params("n must be in 0.." + std::to_string(std::numeric_limits<std::uint32_t>::max()));
    mark(kParsed);
    std::string reply = service_.primes(static_cast<std::uint32_t>(n));
    mark(kServiced);
    return xmlrpc_c::value_string(reply);
  }

  Service& service_;
  const ServerLimits limits_;
  Endpoint endpoint_;
  std::array<MethodEntry, 8> methods_{{
      {kPing, &AbyssServer::ping, nullptr},
      {kGet, &AbyssServer::get, nullptr},
      {kEcho, &AbyssServer::echo, nullptr},
      {kRegisterClient, &AbyssServer::register_client, nullptr},
      {kSendMessage, &AbyssServer::send_message, nullptr},
      {kReceiveMessages, &AbyssServer::receive_messages, nullptr},
      {kUnregisterClient, &AbyssServer::unregister_client, nullptr},
      {kPrimes, &AbyssServer::primes, nullptr},
  }};
  int fd_ = -1;
  xmlrpc_registry* registry_ = nullptr;
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
