// The floor under every round trip: a raw TCP ping-pong over loopback that
// moves the same request and response byte counts as the measured call,
// with no HTTP, no parsing and no marshalling, on the same CPU placement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "harness/stats.h"

namespace wsb {

class TcpFloor {
 public:
  // Starts an echo-like server thread on 127.0.0.1 (pinned to server_cpu)
  // and connects to it; TCP_NODELAY on both ends. `route`, if given, maps
  // the server's loopback port to the one the client connects to (a test
  // puts a counting relay in between).
  using Route = std::function<std::uint16_t(std::uint16_t server_port)>;
  explicit TcpFloor(std::optional<int> server_cpu, const Route& route = {});
  ~TcpFloor();
  TcpFloor(const TcpFloor&) = delete;
  TcpFloor& operator=(const TcpFloor&) = delete;

  // One exchange: request_bytes to the server (a 16-byte header saying
  // what follows included, so at least 16), response_bytes back (at least
  // 1). Returns the round trip in nanoseconds.
  std::int64_t round_trip(std::size_t request_bytes, std::size_t response_bytes);

  // `iterations` exchanges (after kWarmUp untimed ones), or fewer, but at
  // least 10, if `budget_ns` runs out first; their statistics.
  static constexpr int kWarmUp = 5;
  Summary measure(std::size_t request_bytes, std::size_t response_bytes, std::size_t iterations,
                  std::int64_t budget_ns);

 private:
  void serve();

  int listen_fd_ = -1;
  int client_fd_ = -1;
  std::optional<int> server_cpu_;
  std::vector<char> buffer_;
  std::thread server_;
};

}  // namespace wsb
