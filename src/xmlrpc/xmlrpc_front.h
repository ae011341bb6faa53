// The xmlrpc-c stack's HTTP front: an Abyss channel switch of our own on the
// bound socket, whose channels Abyss reads requests from and writes replies
// to. Each channel checks a request's head before Abyss sees a byte of it
// (xmlrpc_http_head.h) and hands Abyss one request at a time; it answers
// what it refuses itself, fixes what Abyss writes (Date, HEAD's body) and
// closes in stages. Why and what: docs/servers/stacks/xmlrpc-c.md.
#pragma once

#include <xmlrpc-c/abyss.h>

#include <cstddef>
#include <string>

namespace wsb::xmlrpc {

struct FrontLimits {
  std::size_t max_header_bytes = 0;  // at most what Abyss's buffer holds
  std::size_t max_header_fields = 0;
  unsigned request_timeout_s = 0;  // for the rest of a head once it has begun
};

// A switch on `listen_fd` (bound, not listening: Abyss listens through the
// switch); the fd stays the caller's. Abyss destroys the switch only if it
// created it, so the caller does (ChanSwitchDestroy). Throws on failure.
TChanSwitch* make_front_switch(int listen_fd, const FrontLimits& limits);

}  // namespace wsb::xmlrpc
