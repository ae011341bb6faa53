// Plain-socket pieces the harness's own TCP peers share (the floor's
// ping-pong, the counting relay).
#pragma once

#include <cstddef>
#include <cstdint>

namespace wsb {

// A listening socket on an IPv4 address at `port` (0: an ephemeral one),
// the port bound stored back in `port`. Throws std::runtime_error naming
// `who` and errno.
int listen_on(const char* ipv4, int backlog, std::uint16_t& port, const char* who);
// The same on 127.0.0.1 at an ephemeral port.
int listen_on_loopback(int backlog, std::uint16_t& port, const char* who);

void set_nodelay(int fd);

// Blocking, retried on EINTR; false when the peer has gone. read_exact
// adds its recv() calls to `receives`, if given.
bool write_all(int fd, const char* data, std::size_t n);
bool read_exact(int fd, char* data, std::size_t n, std::uint64_t* receives = nullptr);

}  // namespace wsb
