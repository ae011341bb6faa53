// The beast and beast-tls servers, one template on the Transport (see
// session.h): an io_context run by ServerConcurrency::io_threads threads,
// shaped like Beast's http_server_async example; an acceptor that pauses
// at the connection limit; a sweep that closes sessions past their
// deadline and frees the buffers of idle ones; a graceful stop.
//
// Internal to src/beast: a Beast header (slow to compile).
#pragma once

#include <valgrind/valgrind.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "beast/server_setup.h"
#include "beast/session.h"
#include "common/clock.h"
#include "common/transport.h"

namespace wsb::beast_stack {

// How often the server looks for sessions past their deadline: timeouts
// fire up to this late. Under valgrind, which runs the server about 50x
// slower, a sweep every 250 ms of wall time would fall into each counted
// call 50x as often as natively and make counts vary with the machine's
// load; there it sweeps every 10 s, about as often per call as natively.
inline const std::chrono::milliseconds kSweepPeriod{
    [] { return RUNNING_ON_VALGRIND ? 10'000 : 250; }()};
// Connections accepted in one turn of the acceptor at most.
inline constexpr int kAcceptBurst = 64;

template <class Transport>
class HttpServer final : public Server {
 public:
  // `name` names the stack in errors.
  HttpServer(Service& service, const ServerOptions& options, const char* name)
      : service_(service),
        options_(options),
        shared_(Transport::make_shared()),
        registry_(std::max(1, options.concurrency.max_connections), [this] { resume_accept(); }),
        io_(std::max(1, options.concurrency.io_threads)),
        acceptor_(boost::asio::make_strand(io_)) {
    endpoint_ = listen(acceptor_, io_, options, name);
    acceptor_.non_blocking(true);
    accept();
    sweep();
    start_io_threads(io_, options_, threads_, [this] { stop(); });
  }

  ~HttpServer() override { stop(); }

  Endpoint endpoint() const override { return endpoint_; }

  // Graceful: no new connections, every session's socket closed (a
  // request being handled finishes first: the close waits its turn on the
  // session's executor), then the threads return once nothing is left.
  void stop() override {
    const std::lock_guard stop_lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    for (auto& session : registry_.stop()) session->close();
    boost::asio::post(acceptor_.get_executor(), [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      sweep_timer_.cancel();
      if (retry_) retry_->cancel();
    });
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  using tcp = boost::asio::ip::tcp;

  void accept() {
    if (!registry_.may_accept()) return;  // resumed when a session ends
    acceptor_.async_accept(session_executor(io_, options_),
                           boost::beast::bind_front_handler(&HttpServer::on_accept, this));
  }

  void on_accept(boost::beast::error_code ec, tcp::socket socket) {
    if (ec == boost::asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Out of descriptors or memory, or a connection aborted before
      // accept: keep serving the others, after a pause that stops a spin
      // while descriptors are exhausted.
      retry_.emplace(acceptor_.get_executor(), std::chrono::milliseconds(10));
      retry_->async_wait([this](boost::beast::error_code e) {
        if (!e) accept();
      });
      return;
    }
    start_session(std::move(socket));
    // The rest of the listen queue in the same turn, as nginx's
    // multi_accept does: 1000 clients connecting at once would otherwise
    // wait for one event-loop round each, behind every busy session.
    for (int i = 0; i < kAcceptBurst && registry_.may_accept(); ++i) {
      tcp::socket next(session_executor(io_, options_));
      acceptor_.accept(next, ec);  // the acceptor is non-blocking
      if (ec) break;
      start_session(std::move(next));
    }
    accept();
  }

  void start_session(tcp::socket socket) {
    boost::beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    auto session = std::make_shared<Session<Transport>>(std::move(socket), shared_, service_,
                                                        options_, registry_);
    if (registry_.add(session.get(), session)) session->start();
  }

  // Every kSweepPeriod: closes the sessions whose step has outlived its
  // deadline, frees the buffers of those idle long enough.
  void sweep() {
    sweep_timer_.expires_after(kSweepPeriod);
    sweep_timer_.async_wait([this](boost::beast::error_code ec) {
      if (ec || !acceptor_.is_open()) return;
      const std::int64_t now = now_ns();
      for (auto& session : registry_.alive()) {
        session->close_if_overdue(now);
        session->release_if_idle(now);
      }
      sweep();
    });
  }

  void resume_accept() {
    boost::asio::post(acceptor_.get_executor(), [this] { accept(); });
  }

  Service& service_;
  const ServerOptions options_;
  typename Transport::Shared shared_;  // what every connection's transport uses
  SessionRegistry registry_;           // outlives the io_context, whose handlers hold sessions
  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  Endpoint endpoint_;
  std::optional<boost::asio::steady_timer> retry_;
  boost::asio::steady_timer sweep_timer_{acceptor_.get_executor()};
  std::mutex stop_mutex_;
  bool stopped_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace wsb::beast_stack
