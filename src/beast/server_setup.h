// What the beast and beast-tls servers set up alike: the listening socket,
// the I/O threads, and each session's executor. Internal to src/beast: an
// Asio header (slow to compile).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/placement.h"
#include "common/transport.h"

namespace wsb::beast_stack {

// Opens `acceptor` on options.listen and listens; returns where (the
// ephemeral port resolved). Throws std::runtime_error naming `who`.
inline Endpoint listen(boost::asio::ip::tcp::acceptor& acceptor, boost::asio::io_context& io,
                       const ServerOptions& options, const char* who) {
  namespace net = boost::asio;
  using tcp = net::ip::tcp;
  try {
    tcp::resolver resolver(io);
    const auto results = resolver.resolve(options.listen.host, std::to_string(options.listen.port),
                                          tcp::resolver::passive | tcp::resolver::numeric_service);
    const tcp::endpoint ep = results.begin()->endpoint();
    acceptor.open(ep.protocol());
    // Lets a restarted server rebind while old connections sit in
    // TIME_WAIT; Linux still refuses a port another socket listens on.
    acceptor.set_option(net::socket_base::reuse_address(true));
    acceptor.bind(ep);
    acceptor.listen(options.concurrency.backlog);
    return Endpoint{options.listen.host, acceptor.local_endpoint().port()};
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error(std::string(who) + ": cannot listen on " + options.listen.to_string() +
                             ": " + e.code().message());
  }
}

// Starts ServerConcurrency::io_threads threads running `io`, each pinned
// to ServerOptions::cpu first; if one cannot be pinned, calls `stop` (which
// must join `threads`) and rethrows.
inline void start_io_threads(boost::asio::io_context& io, const ServerOptions& options,
                             std::vector<std::thread>& threads, const std::function<void()>& stop) {
  const int count = std::max(1, options.concurrency.io_threads);
  std::vector<std::future<void>> started;
  for (int i = 0; i < count; ++i) {
    std::promise<void> pinned;
    started.push_back(pinned.get_future());
    threads.emplace_back([&io, cpu = options.cpu, pinned = std::move(pinned)]() mutable {
      try {
        pin_current_thread(cpu);
      } catch (...) {
        pinned.set_exception(std::current_exception());
        return;
      }
      pinned.set_value();
      io.run();
    });
  }
  try {
    for (auto& f : started) f.get();
  } catch (...) {
    stop();
    throw;
  }
}

// The executor a new connection's session runs on. One I/O thread runs
// one handler at a time: a strand per connection would only cost. With
// several, each connection gets one, as in Beast's examples.
inline boost::asio::any_io_executor session_executor(boost::asio::io_context& io,
                                                     const ServerOptions& options) {
  if (options.concurrency.io_threads <= 1) return io.get_executor();
  return boost::asio::make_strand(io);
}

}  // namespace wsb::beast_stack
