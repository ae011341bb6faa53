// A plain-socket HTTP/2 peer (cleartext, prior knowledge) for the grpc
// stack's hostile-input tests: frames written by hand, so they can be
// malformed at will, and the server's frames read back one by one with no
// HTTP/2 library in between. Only HPACK header blocks go through nghttp2's
// coder (its deflater and inflater, not its session), so a response's
// headers and trailers can be read whatever indexing the server chose.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/transport.h"
#include "raw_http.h"

namespace wsb::testing {

// RFC 9113 6: frame types and the flags used here.
enum H2Type : std::uint8_t {
  kData = 0x0,
  kHeaders = 0x1,
  kRstStream = 0x3,
  kSettings = 0x4,
  kPing = 0x6,
  kGoaway = 0x7,
  kWindowUpdate = 0x8,
  kContinuation = 0x9,
};
inline constexpr std::uint8_t kEndStream = 0x1;
inline constexpr std::uint8_t kAck = 0x1;
inline constexpr std::uint8_t kEndHeaders = 0x4;

inline constexpr std::string_view kH2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// Paths of the wsbench service's methods (src/rest/wsbench_service.proto).
inline constexpr std::string_view kPingMethod = "/wsbench.Wsbench/Ping";
inline constexpr std::string_view kEchoMethod = "/wsbench.Wsbench/Echo";
inline constexpr std::string_view kGetMethod = "/wsbench.Wsbench/Get";

// RFC 9113 7's error code as its name ("PROTOCOL_ERROR"), or the number.
std::string h2_error_name(std::uint32_t code);

// A frame's bytes: the 9-byte header (with `length`, which a hostile frame
// may set apart from the payload's size) and the payload.
std::string h2_frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                     std::string_view payload);
std::string h2_frame_header(std::uint32_t length, std::uint8_t type, std::uint8_t flags,
                            std::uint32_t stream);

// A gRPC length-prefixed message: the compressed flag, the 4-byte length
// (the body's own unless `declared` says otherwise) and the body.
std::string grpc_message(std::string_view body, bool compressed = false,
                         std::optional<std::uint32_t> declared = std::nullopt);

using H2Headers = std::vector<std::pair<std::string, std::string>>;

// The request headers gRPC's own client sends for a unary call to
// `method` ("/wsbench.Wsbench/Ping").
H2Headers grpc_request_headers(std::string_view method);

struct H2Frame {
  std::uint8_t type = 0;
  std::uint8_t flags = 0;
  std::uint32_t stream = 0;
  std::string payload;
};

// How the server ended (or did not end) a stream.
struct H2Outcome {
  H2Headers headers;  // response headers, then trailers
  std::string data;   // DATA payloads of the stream
  // What the server did, in order: "HTTP 415" (a :status other than 200),
  // "grpc-status UNIMPLEMENTED", "RST_STREAM PROTOCOL_ERROR", "GOAWAY
  // FRAME_SIZE_ERROR", "closed".
  std::vector<std::string> events;
  bool closed = false;  // the connection ended

  // The value of the last header `name`, or "".
  std::string header(std::string_view name) const;
  // The events joined by ", ", or "no answer".
  std::string answer() const;
};

class H2Peer {
 public:
  static constexpr std::chrono::milliseconds kLinger{250};

  explicit H2Peer(const Endpoint& server);
  ~H2Peer();
  H2Peer(const H2Peer&) = delete;
  H2Peer& operator=(const H2Peer&) = delete;

  // False if the peer has closed or reset the connection.
  bool send(std::string_view bytes);
  // The preface and an empty SETTINGS frame, as a client starts.
  bool start();
  // start(), then waits for the server's SETTINGS (acknowledged) and its
  // acknowledgement of ours: its limits then apply to what follows.
  // Throws if the connection ends first.
  bool handshake();

  // `headers` as one HPACK block, from this connection's encoder.
  std::string header_block(const H2Headers& headers);
  bool send_headers(std::uint32_t stream, const H2Headers& headers, bool end_stream);
  bool send_data(std::uint32_t stream, std::string_view bytes, bool end_stream);

  // The next frame (one put back first); throws if the connection ends or
  // the receive timeout passes first. The server's SETTINGS and
  // WINDOW_UPDATEs are tracked on the way.
  H2Frame read_frame();
  void put_back(H2Frame f) { unread_.push_back(std::move(f)); }

  // A setting the server has sent (RFC 9113 6.5.2's identifier), or
  // `otherwise`.
  std::uint32_t server_setting(std::uint16_t id, std::uint32_t otherwise) const;

  // Sends DATA on `stream` as fast as the server's flow-control windows
  // allow, up to `most` bytes, until the server ends the stream or the
  // connection or stops opening its windows for 200 ms; returns the
  // bytes sent. The frame that ended it is left for outcome().
  std::size_t flood(std::uint32_t stream, std::size_t most);
  // Reads until `stream` ends (and `linger` more, for a GOAWAY or close
  // that follows), the server closes, or `timeout` passes; acknowledges
  // the server's SETTINGS and PINGs.
  H2Outcome outcome(std::uint32_t stream,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(5000),
                    std::chrono::milliseconds linger = kLinger);

  // A unary call on `stream` with one message whose bytes are `message`
  // (grpc_message's), and its outcome.
  H2Outcome call(std::uint32_t stream, std::string_view method, std::string_view message);

  // From now on outcome() acknowledges nothing: a peer that has sent no
  // preface stays silent.
  void stay_silent() { silent_ = true; }

  RawConnection& socket() { return socket_; }

 private:
  struct Hpack;
  RawConnection socket_;
  std::unique_ptr<Hpack> hpack_;
  std::deque<H2Frame> unread_;
  bool silent_ = false;
  std::map<std::uint16_t, std::uint32_t> settings_;
  // Flow-control windows the server grants (RFC 9113 6.9): the
  // connection's and each stream's beyond its initial window.
  std::int64_t connection_window_ = 65535;
  std::map<std::uint32_t, std::int64_t> stream_window_delta_;
};

}  // namespace wsb::testing
