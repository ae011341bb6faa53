// The anchor's server: xmlrpc-c's sample server shape (a method class per
// method in an xmlrpc_c::registry, served by xmlrpc_c::serverAbyss), on a
// socket bound here so an ephemeral port can be reported, run on a thread
// of its own so the process can stop it (serverAbyss::terminate).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <future>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <xmlrpc-c/base.hpp>
#include <xmlrpc-c/girerr.hpp>
#include <xmlrpc-c/registry.hpp>
#include <xmlrpc-c/server_abyss.hpp>

#include "anchors/xmlrpc-c/xmlrpc_anchor.h"
#include "common/codec.h"
#include "common/placement.h"
#include "common/service.h"
#include "harness/loopback.h"
#include "xmlrpc/xmlrpc_api.h"
#include "xmlrpc/xmlrpc_mapping.h"

namespace wsb::anchors::xmlrpc {
namespace {

using wsb::xmlrpc::payload_of;
using wsb::xmlrpc::payload_value;

class PingMethod final : public xmlrpc_c::method {
 public:
  PingMethod() { _signature = "s:"; }
  void execute(const xmlrpc_c::paramList& params, xmlrpc_c::value* result) override {
    params.verifyEnd(0);
    *result = xmlrpc_c::value_string(kPingReply);
  }
};

// The payload is read into the model and written back, as the stack's
// method does (its Service's echo is the identity).
class EchoMethod final : public xmlrpc_c::method {
 public:
  EchoMethod() { _signature = "S:S"; }
  void execute(const xmlrpc_c::paramList& params, xmlrpc_c::value* result) override {
    params.verifyEnd(1);
    try {
      const Payload payload = payload_of(params[0]);
      *result = payload_value(payload);
    } catch (const std::exception& e) {
      // The registry answers a thrown xmlrpc_c::fault with that fault.
      throw xmlrpc_c::fault(e.what(), xmlrpc_c::fault::CODE_TYPE);
    }
  }
};

class AnchorServer final : public Server {
 public:
  explicit AnchorServer(const ServerOptions& options) : endpoint_(options.listen) {
    registry_.addMethod(wsb::xmlrpc::kPing, xmlrpc_c::methodPtr(new PingMethod));
    registry_.addMethod(wsb::xmlrpc::kEcho, xmlrpc_c::methodPtr(new EchoMethod));
    // Bound here, listened on by Abyss: serverAbyss reports no port.
    fd_ = listen_on(endpoint_.host.c_str(), 16, endpoint_.port, "xmlrpc-c anchor");
    set_nodelay(fd_);
    try {
      abyss_ = std::make_unique<xmlrpc_c::serverAbyss>(
          xmlrpc_c::serverAbyss::constrOpt()
              .registryP(&registry_)
              .socketFd(fd_)
              .uriPath(wsb::xmlrpc::kRpcPath)
              .keepaliveMaxConn(std::numeric_limits<std::uint32_t>::max())
              // Only for the same reply bytes: Abyss states it in every
              // reply's Keep-Alive field.
              .keepaliveTimeout(static_cast<unsigned>(options.limits.keepalive_timeout_s))
              // In a process of other servers: no process-wide handlers.
              .serverOwnsSignals(false));
      start_thread(options.cpu);
    } catch (const girerr::error& e) {
      release();
      throw std::runtime_error(std::string("xmlrpc-c anchor: ") + e.what());
    } catch (...) {
      release();
      throw;
    }
  }

  ~AnchorServer() override { stop(); }

  Endpoint endpoint() const override { return endpoint_; }

  void stop() override {
    const std::lock_guard lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    abyss_->terminate();
    if (thread_.joinable()) thread_.join();
    release();
  }

 private:
  void start_thread(std::optional<int> cpu) {
    std::promise<void> started;
    auto ready = started.get_future();
    thread_ = std::thread([this, cpu, &started] {
      try {
        // Abyss's connection threads inherit the mask and the pinning.
        // Without serverOwnsSignals a write to a closed peer raises
        // SIGPIPE: blocked, it fails the write instead.
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
        pin_current_thread(cpu);
      } catch (...) {
        started.set_exception(std::current_exception());
        return;
      }
      started.set_value();
      abyss_->run();
    });
    try {
      ready.get();
    } catch (...) {
      thread_.join();
      throw;
    }
  }

  void release() {
    abyss_.reset();
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  Endpoint endpoint_;
  xmlrpc_c::registry registry_;
  int fd_ = -1;
  std::unique_ptr<xmlrpc_c::serverAbyss> abyss_;
  std::thread thread_;
  std::mutex stop_mutex_;
  bool stopped_ = false;
};

}  // namespace

std::unique_ptr<Server> start_server(const ServerOptions& options) {
  return std::make_unique<AnchorServer>(options);
}

}  // namespace wsb::anchors::xmlrpc
