#include "raw_http.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <stdexcept>

namespace wsb::testing {

std::optional<std::string> RawResponse::header(std::string_view name) const {
  std::size_t line = head.find("\r\n");
  while (line != std::string::npos && line + 2 < head.size()) {
    const std::size_t start = line + 2;
    const std::size_t end = head.find("\r\n", start);
    const std::string_view field(head.data() + start,
                                 (end == std::string::npos ? head.size() : end) - start);
    const std::size_t colon = field.find(':');
    if (colon == name.size() &&
        std::equal(name.begin(), name.end(), field.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      std::string_view value = field.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      return std::string(value);
    }
    line = end;
  }
  return std::nullopt;
}

RawConnection::RawConnection(const Endpoint& server) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server.port);
  ::inet_pton(AF_INET, server.host.c_str(), &addr.sin_addr);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("connect failed");
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  set_receive_timeout(std::chrono::seconds(10));
}

RawConnection::~RawConnection() { ::close(fd_); }

bool RawConnection::send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void RawConnection::shutdown_write() { ::shutdown(fd_, SHUT_WR); }

RawResponse RawConnection::read_response() {
  std::size_t end;
  while ((end = pending_.find("\r\n\r\n")) == std::string::npos) fill();
  RawResponse r;
  r.head = pending_.substr(0, end);
  pending_.erase(0, end + 4);
  if (r.head.compare(0, 5, "HTTP/") != 0 || r.head.size() < 12)
    throw std::runtime_error("not an HTTP response: " + r.head);
  r.status = std::stoi(r.head.substr(9, 3));
  std::size_t length = 0;
  if (const auto cl = r.header("Content-Length")) length = std::stoul(*cl);
  while (pending_.size() < length) fill();
  r.body = pending_.substr(0, length);
  pending_.erase(0, length);
  return r;
}

std::string RawConnection::read_exactly(std::size_t n) {
  while (pending_.size() < n) fill();
  std::string out = pending_.substr(0, n);
  pending_.erase(0, n);
  return out;
}

bool RawConnection::closed_by_server() {
  if (!pending_.empty()) return false;
  char c;
  const ssize_t n = ::recv(fd_, &c, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

bool RawConnection::closed_by_server_after_its_bytes() {
  pending_.clear();
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0) return false;
  }
}

void RawConnection::set_receive_timeout(std::chrono::milliseconds t) {
  timeval tv{static_cast<time_t>(t.count() / 1000),
             static_cast<suseconds_t>((t.count() % 1000) * 1000)};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

void RawConnection::fill() {
  char buf[64 * 1024];
  const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
  if (n <= 0) throw std::runtime_error("connection ended before a whole response");
  pending_.append(buf, static_cast<std::size_t>(n));
}

RawResponse roundtrip(RawConnection& c, const std::string& bytes) {
  EXPECT_TRUE(c.send(bytes));
  return c.read_response();
}

}  // namespace wsb::testing
