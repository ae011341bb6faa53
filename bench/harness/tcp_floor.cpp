#include "harness/tcp_floor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/placement.h"
#include "harness/loopback.h"

namespace wsb {
namespace {

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("tcp floor: ") + what + ": " + std::strerror(errno));
}

// The floor server's loop: each request_bytes received is answered with
// response_bytes, until the client closes. As many recv() calls as
// delivery takes: the count is published before the reply, so the client
// sees it once the reply has arrived.
void exchange_until_closed(int fd, std::size_t request_bytes, std::size_t response_bytes,
                           std::atomic<std::uint64_t>* receives_seen) {
  std::vector<char> buffer(std::max(request_bytes, response_bytes));
  std::uint64_t receives = 0;
  while (read_exact(fd, buffer.data(), request_bytes, &receives)) {
    if (receives_seen != nullptr) *receives_seen = receives;
    if (!write_all(fd, buffer.data(), response_bytes)) break;
  }
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

namespace {

// A client socket with the stack's options, connected to host:port.
int connect_floor(const std::string& host, std::uint16_t port, const SocketOptions& options) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
    throw std::runtime_error("tcp floor: not an IPv4 address: " + host);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket");
  try {
    // Buffers are set before connecting, as the stacks do, so the window
    // negotiated at the handshake matches theirs.
    apply(fd, options);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("connect");
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

// A peer that stops answering fails the exchange instead of hanging it.
void set_timeouts(int fd, int seconds) {
  const timeval limit{seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

constexpr int kFloorTimeoutS = 60;

// The remote floor's opening: request and response sizes, then the
// server socket's options, as five 32-bit big-endian numbers.
constexpr std::size_t kFloorHeaderBytes = 20;

}  // namespace

TcpFloor::TcpFloor(std::size_t request_bytes, std::size_t response_bytes,
                   const ConnectionOptions& options, std::optional<int> server_cpu,
                   const Route& route, const FloorListener& listener)
    : request_bytes_(std::max<std::size_t>(request_bytes, 1)),
      response_bytes_(std::max<std::size_t>(response_bytes, 1)),
      options_(options),
      server_cpu_(server_cpu),
      buffer_(std::max(request_bytes_, response_bytes_)) {
  std::uint16_t port = 0;
  listen_fd_ = listener.make ? listener.make(port) : listen_on_loopback(1, port, "tcp floor");
  // The backlog completes the connect; the thread starts only when nothing
  // can throw any more, so a failed constructor leaves no thread behind.
  client_fd_ = connect_floor(listener.host, route ? route(port) : port, options_.client);
  server_ = std::thread([this] { serve(); });
}

TcpFloor::TcpFloor(const std::string& host, std::uint16_t port, std::size_t request_bytes,
                   std::size_t response_bytes, const ConnectionOptions& options)
    : request_bytes_(std::max<std::size_t>(request_bytes, 1)),
      response_bytes_(std::max<std::size_t>(response_bytes, 1)),
      options_(options),
      buffer_(std::max(request_bytes_, response_bytes_)) {
  if (request_bytes_ > kMaxFloorBytes || response_bytes_ > kMaxFloorBytes)
    throw std::invalid_argument("tcp floor: over " + std::to_string(kMaxFloorBytes >> 20) +
                                " MiB each way");
  client_fd_ = connect_floor(host, port, options_.client);
  set_timeouts(client_fd_, kFloorTimeoutS);
  const std::uint32_t header[] = {htonl(static_cast<std::uint32_t>(request_bytes_)),
                                  htonl(static_cast<std::uint32_t>(response_bytes_)),
                                  htonl(options.server.nodelay ? 1 : 0),
                                  htonl(static_cast<std::uint32_t>(options.server.send_buffer)),
                                  htonl(static_cast<std::uint32_t>(options.server.receive_buffer))};
  static_assert(sizeof header == kFloorHeaderBytes);
  if (!write_all(client_fd_, reinterpret_cast<const char*>(header), sizeof header)) {
    ::close(client_fd_);
    fail("send the floor's sizes");
  }
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
  exchange_until_closed(fd, request_bytes_, response_bytes_, &server_receives_);
  server_fd_ = -1;
  ::close(fd);
}

std::int64_t TcpFloor::round_trip() {
  const std::int64_t start = now_ns();
  if (!write_all(client_fd_, buffer_.data(), request_bytes_)) fail("send");
  if (!read_exact(client_fd_, buffer_.data(), response_bytes_, &client_receives_)) fail("recv");
  return now_ns() - start;
}

int TcpFloor::warm_up(std::int64_t budget_ns) {
  std::int64_t spent = 0;
  int made = 0;
  for (; made < kWarmUp && (made == 0 || spent < budget_ns); ++made) spent += round_trip();
  return made;
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

void TcpFloor::wait_until_server_waits() const { wait_until_sleeping(server_tid_.load()); }

void wait_until_sleeping(int tid) {
  if (tid == 0) return;
  const std::int64_t deadline = now_ns() + 5'000'000;
  while (thread_state(tid) != 'S' && now_ns() < deadline) std::this_thread::yield();
}

FloorServer::FloorServer(const std::string& host, std::uint16_t port) : port_(port) {
  listen_fd_ = listen_on(host.c_str(), 16, port_, "floor server");
  acceptor_ = std::thread([this] { accept_loop(); });
}

FloorServer::~FloorServer() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  {
    const std::lock_guard lock(mutex_);
    for (const int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& c : connections_) c.thread.join();
  ::close(listen_fd_);
}

void FloorServer::accept_loop() {
  constexpr std::size_t kMaxConnections = 16;
  while (!stopping_) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down
    }
    const std::lock_guard lock(mutex_);
    // Threads of closed connections are joined here, so a long-running
    // server holds only the live ones.
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (it->done) {
        it->thread.join();
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
    if (open_fds_.size() >= kMaxConnections) {
      ::close(fd);
      continue;
    }
    open_fds_.push_back(fd);
    auto& c = connections_.emplace_back();
    c.thread = std::thread([this, fd, &c] {
      serve(fd);
      c.done = true;
    });
  }
}

void FloorServer::serve(int fd) {
  set_timeouts(fd, kFloorTimeoutS);
  std::uint32_t header[5];
  static_assert(sizeof header == kFloorHeaderBytes);
  if (read_exact(fd, reinterpret_cast<char*>(header), sizeof header)) {
    const std::size_t request = ntohl(header[0]), response = ntohl(header[1]);
    const SocketOptions options{ntohl(header[2]) != 0, static_cast<int>(ntohl(header[3])),
                                static_cast<int>(ntohl(header[4]))};
    bool usable = request >= 1 && response >= 1 && request <= kMaxFloorBytes &&
                  response <= kMaxFloorBytes && options.send_buffer >= 0 &&
                  options.receive_buffer >= 0;
    try {
      if (usable) apply(fd, options);
    } catch (const std::exception&) {
      usable = false;
    }
    if (usable) exchange_until_closed(fd, request, response, nullptr);
  }
  const std::lock_guard lock(mutex_);
  open_fds_.erase(std::find(open_fds_.begin(), open_fds_.end(), fd));
  ::close(fd);
}

InterleavedFloor::InterleavedFloor(std::function<std::int64_t()> exchange, std::size_t block)
    : exchange_(std::move(exchange)), block_(std::max<std::size_t>(block, 1)) {}

void InterleavedFloor::run_block() {
  for (std::size_t i = 0; i < block_; ++i) samples_.push_back(exchange_());
}

}  // namespace wsb
