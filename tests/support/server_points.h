// The server points of a client's last call to an in-process server, as
// the benchmark collects them (common/phases.h).
#pragma once

#include <chrono>
#include <optional>
#include <thread>

#include "common/phases.h"
#include "common/transport.h"

namespace wsb::testing {

// Copies the server points into `t` and returns the server's own elapsed
// time; nullopt if the connection's slot was not found within a second. A
// client that cannot name its socket (local_port 0) is found as the only
// connection to its server, which may take a closed neighbour's server
// thread a moment to leave.
inline std::optional<std::int64_t> collect_server_points(const Client& client,
                                                         const Endpoint& server, Timeline& t) {
  ServerPointsReader reader(server.port, client.local_port());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (;;) {
    if (const auto served = reader.collect(t)) return served;
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace wsb::testing
