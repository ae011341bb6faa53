// What the beast stack's client sends and reads through: a plain TCP
// socket (beast_client.cpp) or TLS over one (beast_tls_client.cpp). The
// client's HTTP code (requests, replies, codecs) is the same over both.
//
// Internal to src/beast: a Beast header (slow to compile).
#pragma once

#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "beast/field_arena.h"
#include "beast/timed_socket.h"
#include "common/transport.h"

namespace wsb::beast_stack {

using ResponseParser =
    boost::beast::http::response_parser<boost::beast::http::string_body, ArenaAllocator<char>>;

// One open connection. Not thread-safe.
class ClientWire {
 public:
  virtual ~ClientWire() = default;
  // Sends a request's head and body.
  virtual void write(const std::array<boost::asio::const_buffer, 2>& request,
                     boost::beast::error_code& ec) = 0;
  // Reads one reply into `parser`, `buffer` keeping what follows it.
  virtual void read(boost::beast::flat_buffer& buffer, ResponseParser& parser,
                    boost::beast::error_code& ec) = 0;
  // The connection's local port; 0 if closed.
  virtual std::uint16_t local_port() const = 0;
  // Ends the connection (idempotent).
  virtual void close() = 0;
};

// beast_client.cpp: the beast stack's client over `wire`, connected to
// `server` (its Host header). Throws std::invalid_argument for an unknown
// codec.
std::unique_ptr<Client> make_client(std::unique_ptr<ClientWire> wire, const Endpoint& server,
                                    const std::string& codec);

// A read or write that makes no progress for this long fails the call
// (primes(1'000'000) takes a few seconds to compute; a stuck server
// should not hang a benchmark forever).
inline constexpr std::chrono::seconds kClientIdleTimeout{120};

// Connects `socket` to `server`, with TCP_NODELAY and kClientIdleTimeout on
// its reads and writes. Throws CallError naming `who`.
inline void connect_socket(boost::asio::ip::tcp::socket& socket, const Endpoint& server,
                           const char* who) {
  using tcp = boost::asio::ip::tcp;
  boost::system::error_code ec;
  tcp::resolver resolver(socket.get_executor());
  const auto results = resolver.resolve(server.host, std::to_string(server.port), ec);
  if (!ec) boost::asio::connect(socket, results, ec);
  if (!ec) socket.set_option(tcp::no_delay(true), ec);
  if (!ec && !TimedSocket::set_idle_timeout(socket.native_handle(), kClientIdleTimeout))
    ec = {errno, boost::system::system_category()};
  if (ec)
    throw CallError(std::string(who) + ": cannot connect to " + server.to_string() + ": " +
                    ec.message());
}

}  // namespace wsb::beast_stack
