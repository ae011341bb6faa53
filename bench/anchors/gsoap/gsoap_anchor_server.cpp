// The gSOAP anchor's server: the generated wsbenchService as gSOAP's guide
// runs a multi-threaded stand-alone service (bind, then for each accepted
// connection a copy() of the service serving it on a thread of its own).
// Two changes, both for running inside a benchmark rather than as a
// process: an accept timeout so stop() is seen, and joinable threads that
// stop() wakes (shutdown) and joins, so no thread outlives the server.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "anchors/gsoap/gsoap_anchor.h"
#include "common/placement.h"
#include "common/service.h"
#include "soap/soap_binding.h"
#include "soapwsbenchService.h"

namespace wsb::anchors::gsoap {
namespace {

using soap::release_message;

// How often the accept loop looks for stop() (negative: microseconds).
constexpr int kAcceptPollMicros = -100'000;
constexpr int kBacklog = 100;

// The operations: ping answers what wsb::Service::ping answers, echo
// returns the payload it was sent (the request's structs, which live until
// the request's memory is released). Every other operation of the schema
// is a SOAP Fault: the anchor serves ping and echo only.
// soapcpp2 2.8.124 leaves the href attribute of a received
// xsd__base64Binary as it was when the element has none
// (soap_default_xsd__base64Binary skips it): whatever the reused memory
// held. Written back as is, it would be read as a string; clear it on the
// binaries an echoed payload carries.
void clear_href(xsd__base64Binary* binary) {
  if (binary != nullptr) binary->href = nullptr;
}

void clear_hrefs(int choice, wsb__PayloadChoice& payload) {
  switch (choice) {
    case SOAP_UNION_wsb__PayloadChoice_binary:
      clear_href(payload.binary);
      break;
    case SOAP_UNION_wsb__PayloadChoice_buildingsDocument:
      clear_href(payload.buildingsDocument);
      break;
    case SOAP_UNION_wsb__PayloadChoice_message:
      if (payload.message != nullptr) clear_href(payload.message->attachment);
      break;
    case SOAP_UNION_wsb__PayloadChoice_messages:
      if (payload.messages != nullptr)
        for (wsb__Message& m : payload.messages->message) clear_href(m.attachment);
      break;
    default:
      break;
  }
}

class AnchorService final : public wsbenchService {
 public:
  explicit AnchorService(soap_mode mode) : wsbenchService(mode) {}

  wsbenchService* copy() override {
    auto* dup = new AnchorService(SOAP_IO_DEFAULT);
    soap_done(dup->soap);
    soap_copy_context(dup->soap, soap);
    return dup;
  }

  int ping(wsb__pingResponse& response) override {
    response.reply = kPingReply;
    soap::declare_used(soap);
    return SOAP_OK;
  }

  int echo(wsb__Payload* payload, wsb__echoResponse& response) override {
    if (payload == nullptr) return fault("echo without a payload");
    response.__union_payload = payload->__union_payload;
    response.payload = payload->payload;
    clear_hrefs(response.__union_payload, response.payload);
    const bool gml = response.__union_payload == SOAP_UNION_wsb__PayloadChoice_buildings &&
                     response.payload.buildings != nullptr &&
                     !response.payload.buildings->gml__featureMember.empty();
    soap::declare_used(soap, {.gml = gml});
    return SOAP_OK;
  }

  int get(const std::string&, LONG64, wsb__getResponse&) override { return unsupported(); }
  int RegisterClient(wsb__RegisterClientResponse&) override { return unsupported(); }
  int SendMessage(const std::string&, wsb__Message*, wsb__SendMessageResponse&) override {
    return unsupported();
  }
  int ReceiveMessage(const std::string&, wsb__ReceiveMessageResponse&) override {
    return unsupported();
  }
  int UnregisterClient(const std::string&, wsb__UnregisterClientResponse&) override {
    return unsupported();
  }
  int primes(unsigned int, std::string&) override { return unsupported(); }
  int define(const std::string&, std::string&) override { return unsupported(); }
  int put(const std::string&, const std::string&, wsb__putResponse&) override {
    return unsupported();
  }
  int upload(wsb__Payload*, std::string&) override { return unsupported(); }

 private:
  int fault(const char* what) {
    soap::declare_used(soap, soap::kFaultNamespaces);
    return soap_senderfault(what, nullptr);
  }
  int unsupported() { return fault("not an operation of the anchor"); }
};

// gSOAP's documented use of soap::fserveloop: release each request's
// memory after its reply, as a keep-alive connection serves many
// (release_message: soap_end's release without its clearing of the
// engine's tables, which the next request's soap_begin clears anyway).
// The next request is read with every namespace of the schema; a reply
// declares only those it uses (soap_binding.h), as the stack's do.
int release_request(struct soap* ctx) {
  release_message(ctx);
  soap::read_all_namespaces(ctx);
  return SOAP_OK;
}

class AnchorServer final : public Server {
 public:
  explicit AnchorServer(const ServerOptions& options)
      : cpu_(options.cpu), service_(SOAP_IO_KEEPALIVE) {
    struct soap* ctx = service_.soap;
    ctx->accept_timeout = kAcceptPollMicros;
    ctx->bind_flags = SO_REUSEADDR;
    // gSOAP's default closes a connection after 100 requests (the proxy
    // then reconnects); a benchmark's client keeps its one connection.
    ctx->max_keep_alive = 0;
    ctx->fserveloop = release_request;
    if (!soap_valid_socket(
            service_.bind(options.listen.host.c_str(), options.listen.port, kBacklog))) {
      char text[256];
      service_.soap_sprint_fault(text, sizeof text);
      throw std::runtime_error("gsoap anchor: cannot listen on " + options.listen.to_string() +
                               ": " + text);
    }
    endpoint_ = options.listen;
    endpoint_.port = soap::socket_port(ctx->master);  // the ephemeral one for port 0
    std::promise<void> started;
    auto ready = started.get_future();
    accept_thread_ = std::thread([this, &started] { accept_loop(started); });
    try {
      ready.get();
    } catch (...) {
      accept_thread_.join();
      throw;
    }
  }

  ~AnchorServer() override { stop(); }

  Endpoint endpoint() const override { return endpoint_; }

  void stop() override {
    const std::lock_guard stop_lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
    accept_thread_.join();
    {
      const std::lock_guard lock(mutex_);
      for (Connection& c : connections_) ::shutdown(c.socket, SHUT_RDWR);
    }
    for (Connection& c : connections_) c.thread.join();
    connections_.clear();
    // The listening socket; the service's destructor frees the context.
    struct soap* ctx = service_.soap;
    if (soap_valid_socket(ctx->master)) {
      ::close(ctx->master);
      ctx->master = SOAP_INVALID_SOCKET;
    }
  }

 private:
  struct Connection {
    SOAP_SOCKET socket;  // invalid once the connection has closed
    std::thread thread;
  };

  void accept_loop(std::promise<void>& started) {
    try {
      pin_current_thread(cpu_);
    } catch (...) {
      started.set_exception(std::current_exception());
      return;
    }
    started.set_value();
    while (!stopping_) {
      if (!soap_valid_socket(service_.accept())) continue;  // a timeout, or a failed accept
      wsbenchService* copy = service_.copy();
      service_.soap->socket = SOAP_INVALID_SOCKET;  // the copy owns the connection
      const std::lock_guard lock(mutex_);
      // Joins the threads of connections that have closed.
      for (auto it = connections_.begin(); it != connections_.end();) {
        if (soap_valid_socket(it->socket)) {
          ++it;
        } else {
          it->thread.join();
          it = connections_.erase(it);
        }
      }
      Connection& c = connections_.emplace_back(Connection{copy->soap->socket, {}});
      c.thread = std::thread([this, copy, &c] { serve(copy, c); });
    }
  }

  void serve(wsbenchService* service, Connection& c) {
    try {
      pin_current_thread(cpu_);
      service->serve();
    } catch (...) {
      // Pinning failed: the connection closes unserved.
    }
    service->destroy();
    {
      // Closed under the lock: stop() never shuts down a reused descriptor.
      const std::lock_guard lock(mutex_);
      soap_force_closesock(service->soap);
      c.socket = SOAP_INVALID_SOCKET;
    }
    delete service;
  }

  std::optional<int> cpu_;
  AnchorService service_;
  Endpoint endpoint_;
  std::thread accept_thread_;
  std::atomic<bool> stopping_{false};
  bool stopped_ = false;
  std::mutex stop_mutex_;
  std::mutex mutex_;  // connections_
  std::list<Connection> connections_;
};

}  // namespace

std::unique_ptr<Server> start_server(const ServerOptions& options) {
  return std::make_unique<AnchorServer>(options);
}

}  // namespace wsb::anchors::gsoap
