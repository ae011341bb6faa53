#include "harness/tcp_floor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/clock.h"
#include "common/placement.h"
#include "harness/loopback.h"

namespace wsb {
namespace {

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("tcp floor: ") + what + ": " + std::strerror(errno));
}

// Each exchange starts with an 16-byte header telling the server how many
// bytes follow and how many to send back; it is part of the request count.
struct Header {
  std::uint64_t request_bytes;
  std::uint64_t response_bytes;
};

}  // namespace

TcpFloor::TcpFloor(std::optional<int> server_cpu, const Route& route) : server_cpu_(server_cpu) {
  std::uint16_t port = 0;
  listen_fd_ = listen_on_loopback(1, port, "tcp floor");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(route ? route(port) : port);
  client_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client_fd_ < 0) fail("socket");
  // The backlog completes the connect; the thread starts only when nothing
  // can throw any more, so a failed constructor leaves no thread behind.
  if (::connect(client_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("connect");
  set_nodelay(client_fd_);
  server_ = std::thread([this] { serve(); });
}

TcpFloor::~TcpFloor() {
  if (client_fd_ >= 0) ::close(client_fd_);  // the server sees EOF and returns
  if (server_.joinable()) server_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void TcpFloor::serve() {
  try {
    pin_current_thread(server_cpu_);
  } catch (const std::exception&) {
    // Unpinned is still a floor; the placement recorded by the caller says
    // what was asked for.
  }
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  set_nodelay(fd);
  std::vector<char> buffer;
  Header h{};
  while (read_exact(fd, reinterpret_cast<char*>(&h), sizeof h)) {
    buffer.resize(std::max<std::size_t>({buffer.size(), static_cast<std::size_t>(h.request_bytes),
                                         static_cast<std::size_t>(h.response_bytes)}));
    if (!read_exact(fd, buffer.data(), h.request_bytes)) break;
    if (!write_all(fd, buffer.data(), h.response_bytes)) break;
  }
  ::close(fd);
}

std::int64_t TcpFloor::round_trip(std::size_t request_bytes, std::size_t response_bytes) {
  const std::size_t body = request_bytes > sizeof(Header) ? request_bytes - sizeof(Header) : 0;
  buffer_.resize(std::max({buffer_.size(), body + sizeof(Header), response_bytes}));
  const Header h{body, std::max<std::size_t>(response_bytes, 1)};
  std::memcpy(buffer_.data(), &h, sizeof h);
  const std::int64_t start = now_ns();
  if (!write_all(client_fd_, buffer_.data(), sizeof h + body)) fail("send");
  if (!read_exact(client_fd_, buffer_.data(), h.response_bytes)) fail("recv");
  return now_ns() - start;
}

Summary TcpFloor::measure(std::size_t request_bytes, std::size_t response_bytes,
                          std::size_t iterations, std::int64_t budget_ns) {
  for (int i = 0; i < kWarmUp; ++i) round_trip(request_bytes, response_bytes);
  std::vector<std::int64_t> samples;
  samples.reserve(iterations);
  const std::int64_t deadline = now_ns() + budget_ns;
  while (samples.size() < iterations && (samples.size() < 10 || now_ns() < deadline))
    samples.push_back(round_trip(request_bytes, response_bytes));
  return summarize(samples);
}

}  // namespace wsb
