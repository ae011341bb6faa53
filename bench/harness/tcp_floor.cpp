#include "harness/tcp_floor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/placement.h"
#include "harness/loopback.h"

namespace wsb {
namespace {

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("tcp floor: ") + what + ": " + std::strerror(errno));
}

int int_option(int fd, int level, int name) {
  int value = 0;
  socklen_t len = sizeof value;
  if (::getsockopt(fd, level, name, &value, &len) != 0) fail("getsockopt");
  return value;
}

}  // namespace

SocketState socket_state(int fd) {
  return {int_option(fd, IPPROTO_TCP, TCP_NODELAY) != 0, int_option(fd, SOL_SOCKET, SO_SNDBUF),
          int_option(fd, SOL_SOCKET, SO_RCVBUF)};
}

void apply(int fd, const SocketOptions& options) {
  const int nodelay = options.nodelay ? 1 : 0;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay) != 0)
    fail("TCP_NODELAY");
  if (options.send_buffer > 0 && ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &options.send_buffer,
                                              sizeof options.send_buffer) != 0)
    fail("SO_SNDBUF");
  if (options.receive_buffer > 0 && ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &options.receive_buffer,
                                                 sizeof options.receive_buffer) != 0)
    fail("SO_RCVBUF");
}

TcpFloor::TcpFloor(std::size_t request_bytes, std::size_t response_bytes,
                   const ConnectionOptions& options, std::optional<int> server_cpu,
                   const Route& route)
    : request_bytes_(std::max<std::size_t>(request_bytes, 1)),
      response_bytes_(std::max<std::size_t>(response_bytes, 1)),
      options_(options),
      server_cpu_(server_cpu),
      buffer_(std::max(request_bytes_, response_bytes_)) {
  std::uint16_t port = 0;
  listen_fd_ = listen_on_loopback(1, port, "tcp floor");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(route ? route(port) : port);
  client_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client_fd_ < 0) fail("socket");
  // Buffers are set before connecting, as the stacks do, so the window
  // negotiated at the handshake matches theirs.
  apply(client_fd_, options_.client);
  // The backlog completes the connect; the thread starts only when nothing
  // can throw any more, so a failed constructor leaves no thread behind.
  if (::connect(client_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("connect");
  server_ = std::thread([this] { serve(); });
}

TcpFloor::~TcpFloor() {
  if (client_fd_ >= 0) ::close(client_fd_);  // the server sees EOF and returns
  if (server_.joinable()) server_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::optional<SocketState> TcpFloor::server_socket() const {
  const int fd = server_fd_.load();
  if (fd < 0) return std::nullopt;
  return socket_state(fd);
}

void TcpFloor::serve() {
  server_tid_ = static_cast<int>(::gettid());
  try {
    pin_current_thread(server_cpu_);
  } catch (const std::exception&) {
    // Unpinned is still a floor; the placement recorded by the caller says
    // what was asked for.
  }
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  try {
    apply(fd, options_.server);
  } catch (const std::exception&) {
    ::close(fd);  // the client's next exchange fails and reports it
    return;
  }
  server_fd_ = fd;
  std::vector<char> buffer(std::max(request_bytes_, response_bytes_));
  // As many recv() calls as delivery takes: the count is published before
  // the reply, so the client sees it once the reply has arrived.
  std::uint64_t receives = 0;
  while (read_exact(fd, buffer.data(), request_bytes_, &receives)) {
    server_receives_ = receives;
    if (!write_all(fd, buffer.data(), response_bytes_)) break;
  }
  server_fd_ = -1;
  ::close(fd);
}

std::int64_t TcpFloor::round_trip() {
  const std::int64_t start = now_ns();
  if (!write_all(client_fd_, buffer_.data(), request_bytes_)) fail("send");
  if (!read_exact(client_fd_, buffer_.data(), response_bytes_, &client_receives_)) fail("recv");
  return now_ns() - start;
}

void TcpFloor::warm_up() {
  for (int i = 0; i < kWarmUp; ++i) round_trip();
}

namespace {

// The scheduler state of one of this process's threads ('S': sleeping,
// 'R': running), or 0 if it cannot be read.
char thread_state(int tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  // "tid (comm) S ...": comm may hold spaces and parentheses.
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? 0 : line[close + 2];
}

}  // namespace

void TcpFloor::wait_until_server_waits() const {
  const int tid = server_tid_.load();
  if (tid == 0) return;
  const std::int64_t deadline = now_ns() + 5'000'000;
  while (thread_state(tid) != 'S' && now_ns() < deadline) std::this_thread::yield();
}

InterleavedFloor::InterleavedFloor(std::function<std::int64_t()> exchange, std::size_t block)
    : exchange_(std::move(exchange)), block_(std::max<std::size_t>(block, 1)) {}

void InterleavedFloor::run_block() {
  for (std::size_t i = 0; i < block_; ++i) samples_.push_back(exchange_());
}

}  // namespace wsb
