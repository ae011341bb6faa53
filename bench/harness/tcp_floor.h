// The floor under every round trip: a raw TCP ping-pong over the path the
// case takes (loopback, a shaped link, or to a remote wsbench-server's
// floor port) that moves the same request and response byte counts as the
// measured call, with no HTTP, no parsing and no marshalling, on the same
// CPU placement, with the socket options the stack sets, measured in
// blocks interleaved with the case's calls (so both see the same machine
// state).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace wsb {

// What a stack sets on its connected sockets; a buffer size of 0 leaves
// the kernel's default (autotuned) buffer.
struct SocketOptions {
  bool nodelay = true;
  int send_buffer = 0;
  int receive_buffer = 0;
};

// Both ends of a connection: the client's socket and the server's.
struct ConnectionOptions {
  SocketOptions client;
  SocketOptions server;
};

// What getsockopt reports for a socket (Linux reports buffers doubled).
struct SocketState {
  bool nodelay = false;
  int send_buffer = 0;
  int receive_buffer = 0;
  bool operator==(const SocketState&) const = default;
};
SocketState socket_state(int fd);
void apply(int fd, const SocketOptions& options);

// Where a floor's server listens: by default 127.0.0.1 in the calling
// thread's network namespace; over a link, the server's address in the
// server's namespace (`make` creates the listening socket there and stores
// its port).
struct FloorListener {
  std::string host = "127.0.0.1";
  std::function<int(std::uint16_t& port)> make;
};

// Largest message a floor moves each way (a 64 MiB binary as base64 in an
// envelope is about 90 MiB): bounds what a remote peer can ask for.
inline constexpr std::size_t kMaxFloorBytes = std::size_t{256} << 20;

class TcpFloor {
 public:
  // Starts a server thread on 127.0.0.1 (pinned to server_cpu) that answers
  // every request_bytes received with response_bytes, and connects to it.
  // The sizes are fixed for the floor's life, so nothing but the payload
  // crosses the socket and each side reads only until it has a message:
  // as many receives as the kernel's delivery of that many bytes needs.
  // `route`, if given, maps the server's loopback port to the one the
  // client connects to (a test puts a counting relay in between).
  using Route = std::function<std::uint16_t(std::uint16_t server_port)>;
  TcpFloor(std::size_t request_bytes, std::size_t response_bytes, const ConnectionOptions& options,
           std::optional<int> server_cpu, const Route& route = {},
           const FloorListener& listener = {});
  // The client side only, against a FloorServer (a remote wsbench-server's
  // floor port): the first 20 bytes sent tell it the sizes and the stack's
  // server socket options; after that, nothing but the exchanges.
  TcpFloor(const std::string& host, std::uint16_t port, std::size_t request_bytes,
           std::size_t response_bytes, const ConnectionOptions& options);
  ~TcpFloor();
  TcpFloor(const TcpFloor&) = delete;
  TcpFloor& operator=(const TcpFloor&) = delete;

  // One exchange; returns the round trip in nanoseconds.
  std::int64_t round_trip();

  // Untimed exchanges made before the first sample: kWarmUp, or fewer once
  // they have taken kWarmUpBudgetNs (at least one), since a 64 MiB body over
  // a 100 Mbit/s link takes seconds and warms nothing a second time.
  static constexpr int kWarmUp = 5;
  static constexpr std::int64_t kWarmUpBudgetNs = 50'000'000;
  // Returns the number of exchanges made.
  int warm_up(std::int64_t budget_ns = kWarmUpBudgetNs);

  // Returns once the server thread sleeps in its next receive (or after a
  // few milliseconds): after a block of exchanges its tail (returning from
  // send, entering recv) must not run inside the case's first call, nor
  // in the profiler's sampled region.
  void wait_until_server_waits() const;

  // recv() calls so far on each side (the server's after its last reply).
  std::uint64_t client_receives() const { return client_receives_; }
  std::uint64_t server_receives() const { return server_receives_.load(); }
  SocketState client_socket() const { return socket_state(client_fd_); }
  // The server's connected socket; nullopt before it has accepted.
  std::optional<SocketState> server_socket() const;

 private:
  void serve();

  std::size_t request_bytes_, response_bytes_;
  ConnectionOptions options_;
  int listen_fd_ = -1;
  int client_fd_ = -1;
  std::atomic<int> server_fd_{-1};
  std::optional<int> server_cpu_;
  std::vector<char> buffer_;
  std::uint64_t client_receives_ = 0;
  std::atomic<std::uint64_t> server_receives_{0};
  std::atomic<int> server_tid_{0};
  std::thread server_;
};

// Returns once this process's thread `tid` sleeps (or after a few
// milliseconds; at once for tid 0): a floor server's tail after a block
// of exchanges must not run inside the case's next call.
void wait_until_sleeping(int tid);

// The order of floor and case calls in a round-trip row: before every
// `block`-th call of the case, `block` floor exchanges, so floor and case
// alternate in equal blocks on the same thread and CPUs for the whole row
// and see the same drift in the machine's state.
class InterleavedFloor {
 public:
  // `exchange` makes one floor round trip and returns its nanoseconds.
  InterleavedFloor(std::function<std::int64_t()> exchange, std::size_t block);

  // True if a floor block is due before the next case call.
  bool block_due() const { return calls_ % block_ == 0; }
  // Runs the block (call only when due).
  void run_block();
  // Counts one case call.
  void count_call() { ++calls_; }

  const std::vector<std::int64_t>& samples() const { return samples_; }

 private:
  std::function<std::int64_t()> exchange_;
  std::size_t block_;
  std::size_t calls_ = 0;
  std::vector<std::int64_t> samples_;
};

// The server side of remote floors (wsbench-server --floor): answers each
// connection's fixed-size requests with fixed-size responses, the sizes
// and socket options named by the connection's first 20 bytes (TcpFloor's
// remote constructor). Bounded: at most kMaxFloorBytes each way, 16
// connections at once, and a connection idle for 60 s is closed.
class FloorServer {
 public:
  // Listens on `host`:`port` (0: ephemeral); throws std::runtime_error.
  FloorServer(const std::string& host, std::uint16_t port);
  ~FloorServer();
  FloorServer(const FloorServer&) = delete;
  FloorServer& operator=(const FloorServer&) = delete;
  std::uint16_t port() const { return port_; }

 private:
  void accept_loop();
  void serve(int fd);

  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::vector<int> open_fds_;
  struct Connection {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  std::list<Connection> connections_;
  std::thread acceptor_;
};

}  // namespace wsb
