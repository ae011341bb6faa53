// A client speaking raw bytes to an HTTP/1.1 server in plaintext or over
// TLS (the *-tls stacks: tls::make_context's client side), that tells how
// the connection ended: a clean end of stream, or a reset. For the tests of
// what a server does at its framing and its refusals (tests/servers/
// body_memory_test, framing_memory_test, clean_close_test). Link wsb_tls.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/service.h"
#include "common/tls.h"
#include "common/transport.h"
#include "raw_http.h"

namespace wsb::testing {

// Whether a stack's socket carries TLS.
inline bool is_tls_stack(const std::string& stack) { return stack.ends_with("-tls"); }

// The stacks whose servers speak HTTP/1.1, in plaintext or over TLS: all but
// gRPC's (HTTP/2).
inline std::vector<std::string> http1_stacks() {
  std::vector<std::string> out;
  for (const auto& stack : all_stacks())
    if (!stack.name.starts_with("grpc")) out.push_back(stack.name);
  return out;
}

// A test name for a stack: "gsoap_tls".
inline std::string stack_test_name(std::string stack) {
  for (auto& c : stack)
    if (c == '-') c = '_';
  return stack;
}

// Whether a new client of the stack's own, on its first codec, is answered.
inline bool serves_ping(const std::string& stack, const Endpoint& server) {
  try {
    return find_stack(stack).connect(server, find_stack(stack).codecs.front())->ping() ==
           kPingReply;
  } catch (const std::exception&) {
    return false;
  }
}

// How a read ended.
enum class WireEnd { data, eof, reset, timeout, failed };

inline const char* to_string(WireEnd end) {
  switch (end) {
    case WireEnd::data:
      return "data";
    case WireEnd::eof:
      return "a clean end of stream";
    case WireEnd::reset:
      return "a connection reset";
    case WireEnd::timeout:
      return "the receive timeout";
    case WireEnd::failed:
      return "a failed read";
  }
  return "?";
}

class WirePeer {
 public:
  // Sends and receives give up after `timeout` without progress: a server
  // that stops reading without closing fails a test instead of hanging it.
  WirePeer(const Endpoint& server, bool tls,
           std::chrono::milliseconds timeout = std::chrono::milliseconds(8000)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(server.port);
    ::inet_pton(AF_INET, server.host.c_str(), &addr.sin_addr);
    const timeval tv{static_cast<time_t>(timeout.count() / 1000),
                     static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (!connected_ || !tls) return;
    // OpenSSL writes with write(): a server gone first must fail the
    // write, not kill the test with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    context_ = tls::make_context(tls::Side::client);
    // A close without close_notify reads as the end of the stream, as a
    // plain socket's FIN does: what is tested is the TCP close.
    SSL_CTX_set_options(context_.get(), SSL_OP_IGNORE_UNEXPECTED_EOF);
    ssl_ = SSL_new(context_.get());
    SSL_set_fd(ssl_, fd_);
    connected_ = SSL_connect(ssl_) == 1;
  }
  ~WirePeer() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
    ERR_clear_error();
  }
  WirePeer(const WirePeer&) = delete;
  WirePeer& operator=(const WirePeer&) = delete;

  bool connected() const { return connected_; }
  // errno of the last failed send (EPIPE, ECONNRESET, EAGAIN), or 0.
  int send_errno() const { return send_errno_; }

  // Sends all of `bytes`; false once the server has closed, reset or
  // stopped reading.
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      errno = 0;
      const long n = ssl_ != nullptr ? SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()))
                                     : ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) {
        send_errno_ = errno != 0 ? errno : EPIPE;
        return false;
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // Whether the server has sent something, or closed, within `wait`.
  bool readable(std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
    if (!pending_.empty() || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) return true;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(wait.count())) == 1;
  }

  // Appends what one read returns to `out`; how it went.
  WireEnd read_some(std::string& out) {
    if (!pending_.empty()) {
      out += pending_;
      pending_.clear();
      return WireEnd::data;
    }
    char buffer[64 * 1024];
    errno = 0;
    if (ssl_ == nullptr) {
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n > 0) out.append(buffer, static_cast<std::size_t>(n));
      if (n >= 0) return n > 0 ? WireEnd::data : WireEnd::eof;
      return end_of(errno);
    }
    const int n = SSL_read(ssl_, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<std::size_t>(n));
      return WireEnd::data;
    }
    const int error = SSL_get_error(ssl_, n);
    ERR_clear_error();
    if (error == SSL_ERROR_ZERO_RETURN) return WireEnd::eof;
    if (error == SSL_ERROR_SYSCALL) return errno == 0 ? WireEnd::eof : end_of(errno);
    return error == SSL_ERROR_WANT_READ ? WireEnd::timeout : WireEnd::failed;
  }

  // Everything until the connection ends (or the timeout), appended to
  // `out`; how it ended.
  WireEnd read_to_end(std::string& out) {
    for (;;)
      if (const WireEnd end = read_some(out); end != WireEnd::data) return end;
  }

  // One reply, framed by Content-Length; its body is read whole but only
  // its first `keep` bytes are kept (a 24 MiB echo must not count in this
  // process's memory). nullopt, and `end` set, if the connection ends first.
  std::optional<RawResponse> read_reply(WireEnd& end, std::size_t keep = 4096) {
    std::string got = std::move(pending_);
    pending_.clear();
    std::size_t head_end;
    while ((head_end = got.find("\r\n\r\n")) == std::string::npos)
      if ((end = read_some(got)) != WireEnd::data) return std::nullopt;
    RawResponse r;
    r.head = got.substr(0, head_end);
    got.erase(0, head_end + 4);
    r.status =
        r.head.starts_with("HTTP/1.") && r.head.size() >= 12 ? std::stoi(r.head.substr(9, 3)) : 0;
    const auto length = r.header("Content-Length");
    std::size_t left = length ? std::stoul(*length) : 0;
    for (;;) {
      const std::size_t take = std::min(left, got.size());
      if (r.body.size() < keep) r.body.append(got, 0, std::min(take, keep - r.body.size()));
      got.erase(0, take);
      left -= take;
      if (left == 0) break;
      if ((end = read_some(got)) != WireEnd::data) return std::nullopt;
    }
    pending_ = std::move(got);  // what follows: the next reply
    end = WireEnd::data;
    return r;
  }

 private:
  static WireEnd end_of(int error) {
    if (error == ECONNRESET || error == EPIPE) return WireEnd::reset;
    return error == EAGAIN || error == EWOULDBLOCK ? WireEnd::timeout : WireEnd::failed;
  }

  int fd_ = -1;
  bool connected_ = false;
  int send_errno_ = 0;
  tls::Context context_;
  SSL* ssl_ = nullptr;
  std::string pending_;  // read past the last reply
};

}  // namespace wsb::testing
