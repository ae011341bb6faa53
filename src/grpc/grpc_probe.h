// What the grpc stack's client and server share for phases (common/phases.h).
//
// Both sides carry their messages as bytes (the services' raw callback
// methods, the client's ByteBuffer calls) and encode and decode them with
// protobuf themselves, as gRPC's own SerializationTraits would, so the
// points around the encode and the decode can be marked: gRPC's
// interceptors see a message before it is serialized (PRE_SEND_MESSAGE)
// and after it is parsed (POST_RECV_MESSAGE), never the bytes.
//
// A gRPC client cannot name its socket. It asks the server once: a ping
// whose metadata carries kPeerPortHeader is answered with the port the
// server sees it on, in the reply's initial metadata, and marks no points.
// A server in another process reports its phases in metadata instead
// (kServerTimingKey).
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

namespace wsb::grpc_stack {

// Request metadata asking for the peer's port; the reply's initial
// metadata carries the port under the same key.
inline constexpr char kPeerPortHeader[] = "wsbench-peer-port";

// Request metadata asking for the server's phases (a remote server, whose
// points are out of the client's reach); the reply's trailing metadata
// carries them under the same key as a Server-Timing value
// (format_server_timing, common/phases.h).
inline constexpr char kServerTimingKey[] = "wsbench-server-timing";

// The port of gRPC's peer string ("ipv4:127.0.0.1:54321",
// "ipv6:[::1]:54321"); 0 if it names none.
inline std::uint16_t port_of_peer(std::string_view peer) {
  const auto colon = peer.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == peer.size()) return 0;
  const std::string_view digits = peer.substr(colon + 1);
  unsigned value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size() || value > 0xffff) return 0;
  return static_cast<std::uint16_t>(value);
}

}  // namespace wsb::grpc_stack
