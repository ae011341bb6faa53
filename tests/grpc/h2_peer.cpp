#include "h2_peer.h"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace wsb::testing {
namespace {

void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

std::uint32_t get_u32(std::string_view in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

// gRPC's status codes by number (grpc/status.h), as the docs name them.
constexpr std::array<const char*, 17> kGrpcCodes = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

}  // namespace

std::string h2_error_name(std::uint32_t code) {
  constexpr std::array<const char*, 14> kNames = {"NO_ERROR",
                                                  "PROTOCOL_ERROR",
                                                  "INTERNAL_ERROR",
                                                  "FLOW_CONTROL_ERROR",
                                                  "SETTINGS_TIMEOUT",
                                                  "STREAM_CLOSED",
                                                  "FRAME_SIZE_ERROR",
                                                  "REFUSED_STREAM",
                                                  "CANCEL",
                                                  "COMPRESSION_ERROR",
                                                  "CONNECT_ERROR",
                                                  "ENHANCE_YOUR_CALM",
                                                  "INADEQUATE_SECURITY",
                                                  "HTTP_1_1_REQUIRED"};
  return code < kNames.size() ? kNames[code] : "error " + std::to_string(code);
}

std::string h2_frame_header(std::uint32_t length, std::uint8_t type, std::uint8_t flags,
                            std::uint32_t stream) {
  std::string out;
  out += static_cast<char>((length >> 16) & 0xff);
  out += static_cast<char>((length >> 8) & 0xff);
  out += static_cast<char>(length & 0xff);
  out += static_cast<char>(type);
  out += static_cast<char>(flags);
  put_u32(out, stream & 0x7fffffff);
  return out;
}

std::string h2_frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                     std::string_view payload) {
  return h2_frame_header(static_cast<std::uint32_t>(payload.size()), type, flags, stream) +
         std::string(payload);
}

std::string grpc_message(std::string_view body, bool compressed,
                         std::optional<std::uint32_t> declared) {
  std::string out(1, compressed ? '\1' : '\0');
  put_u32(out, declared.value_or(static_cast<std::uint32_t>(body.size())));
  out += body;
  return out;
}

H2Headers grpc_request_headers(std::string_view method) {
  return {{":method", "POST"},
          {":scheme", "http"},
          {":path", std::string(method)},
          {":authority", "wsbench"},
          {"content-type", "application/grpc"},
          {"te", "trailers"}};
}

std::string H2Outcome::header(std::string_view name) const {
  std::string value;
  for (const auto& [n, v] : headers)
    if (n == name) value = v;
  return value;
}

std::string H2Outcome::answer() const {
  std::string out;
  for (const auto& e : events) out += (out.empty() ? "" : ", ") + e;
  return out.empty() ? "no answer" : out;
}

namespace {

std::string grpc_status_name(const std::string& status) {
  const int code = std::stoi(status);
  return code >= 0 && code < static_cast<int>(kGrpcCodes.size()) ? kGrpcCodes[code] : status;
}

}  // namespace

struct H2Peer::Hpack {
  nghttp2_hd_deflater* deflater = nullptr;
  nghttp2_hd_inflater* inflater = nullptr;
  Hpack() {
    if (nghttp2_hd_deflate_new(&deflater, 4096) != 0 || nghttp2_hd_inflate_new(&inflater) != 0)
      throw std::runtime_error("nghttp2: cannot make an HPACK coder");
  }
  ~Hpack() {
    nghttp2_hd_deflate_del(deflater);
    nghttp2_hd_inflate_del(inflater);
  }
  Hpack(const Hpack&) = delete;
  Hpack& operator=(const Hpack&) = delete;

  // Appends the fields of one whole header block to `out`.
  void decode(std::string_view block, H2Headers& out) {
    auto* in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(block.data()));
    std::size_t left = block.size();
    for (;;) {
      nghttp2_nv nv;
      int flags = 0;
      const auto used = nghttp2_hd_inflate_hd2(inflater, &nv, &flags, in, left, 1);
      if (used < 0) throw std::runtime_error("the server's HPACK block does not decode");
      in += used;
      left -= static_cast<std::size_t>(used);
      if (flags & NGHTTP2_HD_INFLATE_EMIT)
        out.emplace_back(std::string(reinterpret_cast<char*>(nv.name), nv.namelen),
                         std::string(reinterpret_cast<char*>(nv.value), nv.valuelen));
      if (flags & NGHTTP2_HD_INFLATE_FINAL) {
        nghttp2_hd_inflate_end_headers(inflater);
        return;
      }
      if (used == 0 && !(flags & NGHTTP2_HD_INFLATE_EMIT))
        throw std::runtime_error("the server's HPACK block ends mid-field");
    }
  }
};

H2Peer::H2Peer(const Endpoint& server) : socket_(server), hpack_(std::make_unique<Hpack>()) {}
H2Peer::~H2Peer() = default;

bool H2Peer::send(std::string_view bytes) { return socket_.send(bytes); }

bool H2Peer::start() { return send(std::string(kH2Preface) + h2_frame(kSettings, 0, 0, "")); }

bool H2Peer::handshake() {
  if (!start()) return false;
  bool theirs = false, ours = false;
  while (!theirs || !ours) {
    const H2Frame f = read_frame();
    if (f.type != kSettings) continue;
    if (f.flags & kAck) {
      ours = true;
    } else {
      theirs = true;
      if (!send(h2_frame(kSettings, kAck, 0, ""))) return false;
    }
  }
  return true;
}

std::string H2Peer::header_block(const H2Headers& headers) {
  std::vector<nghttp2_nv> nva;
  for (const auto& [name, value] : headers)
    nva.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
                   reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
                   value.size(), NGHTTP2_NV_FLAG_NONE});
  std::string block(nghttp2_hd_deflate_bound(hpack_->deflater, nva.data(), nva.size()), '\0');
  const auto n =
      nghttp2_hd_deflate_hd(hpack_->deflater, reinterpret_cast<std::uint8_t*>(block.data()),
                            block.size(), nva.data(), nva.size());
  if (n < 0) throw std::runtime_error("nghttp2: cannot encode the headers");
  block.resize(static_cast<std::size_t>(n));
  return block;
}

bool H2Peer::send_headers(std::uint32_t stream, const H2Headers& headers, bool end_stream) {
  return send(h2_frame(kHeaders, kEndHeaders | (end_stream ? kEndStream : 0), stream,
                       header_block(headers)));
}

bool H2Peer::send_data(std::uint32_t stream, std::string_view bytes, bool end_stream) {
  connection_window_ -= static_cast<std::int64_t>(bytes.size());
  stream_window_delta_[stream] -= static_cast<std::int64_t>(bytes.size());
  return send(h2_frame(kData, end_stream ? kEndStream : 0, stream, bytes));
}

H2Frame H2Peer::read_frame() {
  if (!unread_.empty()) {
    H2Frame f = std::move(unread_.front());
    unread_.pop_front();
    return f;
  }
  const std::string head = socket_.read_exactly(9);
  const std::uint32_t length = (static_cast<unsigned char>(head[0]) << 16) |
                               (static_cast<unsigned char>(head[1]) << 8) |
                               static_cast<unsigned char>(head[2]);
  H2Frame f;
  f.type = static_cast<std::uint8_t>(head[3]);
  f.flags = static_cast<std::uint8_t>(head[4]);
  f.stream = get_u32(head.substr(5)) & 0x7fffffff;
  f.payload = socket_.read_exactly(length);
  if (f.type == kSettings && !(f.flags & kAck))
    for (std::size_t at = 0; at + 6 <= f.payload.size(); at += 6)
      settings_[static_cast<std::uint16_t>((static_cast<unsigned char>(f.payload[at]) << 8) |
                                           static_cast<unsigned char>(f.payload[at + 1]))] =
          get_u32(std::string_view(f.payload).substr(at + 2));
  if (f.type == kWindowUpdate && f.payload.size() == 4) {
    const std::int64_t increment = get_u32(f.payload) & 0x7fffffff;
    (f.stream == 0 ? connection_window_ : stream_window_delta_[f.stream]) += increment;
  }
  return f;
}

std::uint32_t H2Peer::server_setting(std::uint16_t id, std::uint32_t otherwise) const {
  const auto it = settings_.find(id);
  return it == settings_.end() ? otherwise : it->second;
}

std::size_t H2Peer::flood(std::uint32_t stream, std::size_t most) {
  constexpr std::uint16_t kInitialWindowSize = 0x4;
  const std::string chunk(16384, 'x');
  std::size_t sent = 0;
  for (;;) {
    const std::int64_t stream_window =
        server_setting(kInitialWindowSize, 65535) + stream_window_delta_[stream];
    if (sent + chunk.size() > most) return sent;
    if (std::min(connection_window_, stream_window) >= static_cast<std::int64_t>(chunk.size())) {
      if (!send_data(stream, chunk, false)) return sent;
      sent += chunk.size();
      continue;
    }
    socket_.set_receive_timeout(std::chrono::milliseconds(200));
    H2Frame f;
    try {
      f = read_frame();
    } catch (const std::runtime_error&) {
      return sent;  // stalled or closed: outcome() tells which
    }
    const bool ends = f.type == kGoaway || (f.stream == stream && f.type != kWindowUpdate);
    if (ends) {
      put_back(std::move(f));
      return sent;
    }
  }
}

H2Outcome H2Peer::outcome(std::uint32_t stream, std::chrono::milliseconds timeout,
                          std::chrono::milliseconds linger) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + timeout;
  H2Outcome out;
  bool ended = false;
  const auto end_stream = [&] {
    if (!ended) deadline = std::min(deadline, Clock::now() + linger);
    ended = true;
  };
  // After the stream's end only the connection's fate is recorded.
  const auto stream_event = [&](std::string e) {
    if (!ended) out.events.push_back(std::move(e));
  };
  std::string block;  // a header block being continued
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return out;
    socket_.set_receive_timeout(left);
    H2Frame f;
    try {
      f = read_frame();
    } catch (const std::runtime_error&) {
      socket_.set_receive_timeout(std::chrono::milliseconds(1));
      out.closed = socket_.closed_by_server();
      if (out.closed) out.events.emplace_back("closed");
      return out;
    }
    switch (f.type) {
      case kSettings:
        if (!(f.flags & kAck) && !silent_) send(h2_frame(kSettings, kAck, 0, ""));
        break;
      case kPing:
        if (!(f.flags & kAck) && !silent_) send(h2_frame(kPing, kAck, 0, f.payload));
        break;
      case kGoaway:
        if (f.payload.size() >= 8)
          out.events.push_back("GOAWAY " + h2_error_name(get_u32(f.payload.substr(4))));
        break;
      case kRstStream:
        if (f.stream == stream && f.payload.size() >= 4) {
          stream_event("RST_STREAM " + h2_error_name(get_u32(f.payload)));
          end_stream();
        }
        break;
      case kHeaders:
      case kContinuation:
        block += f.payload;
        if (f.flags & kEndHeaders) {
          H2Headers fields;
          hpack_->decode(block, fields);
          block.clear();
          if (f.stream != stream) break;  // another stream's, decoded for HPACK's state
          for (const auto& [name, value] : fields) {
            if (name == ":status" && value != "200") stream_event("HTTP " + value);
            if (name == "grpc-status") stream_event("grpc-status " + grpc_status_name(value));
          }
          if (!ended) out.headers.insert(out.headers.end(), fields.begin(), fields.end());
        }
        if (f.stream == stream && (f.flags & kEndStream)) end_stream();
        break;
      case kData:
        if (f.stream == stream) {
          out.data += f.payload;
          if (f.flags & kEndStream) end_stream();
        }
        break;
      default:
        break;
    }
  }
}

H2Outcome H2Peer::call(std::uint32_t stream, std::string_view method, std::string_view message) {
  send_headers(stream, grpc_request_headers(method), false);
  send_data(stream, message, true);
  return outcome(stream);
}

}  // namespace wsb::testing
