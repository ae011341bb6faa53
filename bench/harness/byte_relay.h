// Counts the bytes a call really puts on the socket, headers and all, for
// any stack: the client connects through this loopback relay, which
// forwards both directions unchanged and counts them. Used for wire sizes
// only, never for timing (it adds a hop).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/transport.h"

namespace wsb {

class ByteRelay {
 public:
  // Listens on 127.0.0.1 (ephemeral port) and forwards to `target`.
  explicit ByteRelay(Endpoint target);
  ~ByteRelay();
  ByteRelay(const ByteRelay&) = delete;
  ByteRelay& operator=(const ByteRelay&) = delete;

  Endpoint endpoint() const { return listen_; }

  struct Counts {
    std::uint64_t to_server = 0;  // request bytes
    std::uint64_t to_client = 0;  // response bytes
  };
  // Counts since the last reset. With one call outstanding at a time, a
  // reset before the call and a read after it give that call's bytes: the
  // client has the whole response only after the relay forwarded it.
  Counts counts() const { return {to_server_.load(), to_client_.load()}; }
  void reset();

  // Waits until every connection through the relay has ended (both sides
  // closed and forwarded), at most `timeout_ms`; false if one is still
  // open then. After a client's close, its last bytes (a TLS
  // close_notify) are counted once this returns true.
  bool wait_until_closed(int timeout_ms) const;

  // The bytes themselves since the last reset, when capture is on (for
  // splitting totals into HTTP headers and bodies).
  void set_capture(bool on) { capture_ = on; }
  std::string captured_to_server() const;
  std::string captured_to_client() const;

 private:
  void accept_loop();
  void pump(int client_fd);
  bool forward(int from, int to, bool towards_server);

  Endpoint target_;
  Endpoint listen_;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> to_server_{0};
  std::atomic<std::uint64_t> to_client_{0};
  std::atomic<int> open_connections_{0};
  std::atomic<bool> capture_{false};
  mutable std::mutex capture_mutex_;
  std::string captured_to_server_;
  std::string captured_to_client_;
  std::mutex mutex_;
  std::vector<std::thread> pumps_;
  std::vector<int> open_fds_;
  std::thread acceptor_;
};

// HTTP/1.1 messages in a byte stream (Content-Length or chunked bodies,
// interim 1xx responses included): the bytes of all header blocks and of
// all bodies. An HTTP/2 stream (the grpc stack's) is read as frames: DATA
// payloads are bodies, every other byte (frame headers, HPACK blocks,
// control frames) headers, HEADERS frames messages; `http2` splits both
// further. Throws std::runtime_error if the stream is neither.
struct Http2Split {
  std::uint64_t frame_headers = 0;  // 9 bytes per frame, DATA's included
  std::uint64_t header_blocks = 0;  // HEADERS and CONTINUATION payloads (HPACK)
  std::uint64_t control = 0;        // the preface; SETTINGS, PING, WINDOW_UPDATE, ... payloads;
                                    // DATA padding
  std::uint64_t prefixes = 0;       // in DATA: gRPC's 5-byte prefix before each message
  std::uint64_t messages = 0;       // in DATA: the messages themselves (protobuf)
  // Every byte of the stream, counted once.
  std::uint64_t total() const {
    return frame_headers + header_blocks + control + prefixes + messages;
  }
};
struct HttpSizes {
  std::uint64_t headers = 0;  // HTTP/2: frame_headers + header_blocks + control
  std::uint64_t bodies = 0;   // HTTP/2: prefixes + messages
  std::size_t messages = 0;
  bool is_http2 = false;
  Http2Split http2;  // zero unless is_http2
};
HttpSizes http_sizes(std::string_view stream);

// What a TLS server chose, from its ServerHello (plaintext in TLS 1.3: it
// precedes the encrypted handshake): the cipher suite, the key_share
// extension's group and the supported_versions extension's version; 0 for
// what it does not carry.
struct ServerHello {
  std::uint16_t cipher_suite = 0;
  std::uint16_t group = 0;
  std::uint16_t version = 0;
};
// The first ServerHello of the server-to-client bytes of a connection from
// its start; nullopt if they do not begin with one (not TLS, or cut short),
// or it is a HelloRetryRequest (a second round trip the configuration
// never needs).
std::optional<ServerHello> server_hello(std::string_view to_client);

// What every TLS row must negotiate (src/common/tls.h): TLS_AES_128_GCM_SHA256
// (0x1301), x25519 (0x001d), TLS 1.3 (0x0304).
inline constexpr ServerHello kExpectedHello{0x1301, 0x001d, 0x0304};
// What the named TLS stack must negotiate: kExpectedHello, but secp256r1
// (0x0017) for grpc-tls, whose TSI (gRPC 1.51) sets P-256 on every SSL
// context it makes (docs/servers/stacks/grpc.md).
ServerHello expected_hello(const std::string& stack);
// Empty if `hello` is `expected`, else what differs.
std::string hello_mismatch(const std::optional<ServerHello>& hello,
                           const ServerHello& expected = kExpectedHello);
// "TLSv1.3 TLS_AES_128_GCM_SHA256 x25519": the names of what a ServerHello
// chose (hex for a code not named here).
std::string describe(const ServerHello& hello);
// Whether an HTTP/2 split accounts for every one of the `counted` bytes it
// was read from (true for HTTP/1.1, which has no split).
inline bool http2_split_matches(const HttpSizes& sizes, std::uint64_t counted) {
  return !sizes.is_http2 || sizes.http2.total() == counted;
}

}  // namespace wsb
