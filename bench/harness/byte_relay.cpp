#include "harness/byte_relay.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

#include "harness/loopback.h"

namespace wsb {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("byte relay: " + what + ": " + std::strerror(errno));
}

int connect_to(const Endpoint& target) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(target.port);
  if (getaddrinfo(target.host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr)
    throw std::runtime_error("byte relay: cannot resolve " + target.to_string());
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) fail("connect to " + target.to_string());
  set_nodelay(fd);
  return fd;
}

}  // namespace

bool ByteRelay::forward(int from, int to, bool towards_server) {
  std::array<char, 64 * 1024> buffer;
  const ssize_t got = ::recv(from, buffer.data(), buffer.size(), 0);
  if (got <= 0) return got < 0 && errno == EINTR;
  // Counted before forwarding: once the peer has the bytes, a reader of
  // the counts must see them too.
  (towards_server ? to_server_ : to_client_) += static_cast<std::uint64_t>(got);
  if (capture_) {
    const std::lock_guard lock(capture_mutex_);
    (towards_server ? captured_to_server_ : captured_to_client_)
        .append(buffer.data(), static_cast<std::size_t>(got));
  }
  return write_all(to, buffer.data(), static_cast<std::size_t>(got));
}

ByteRelay::ByteRelay(Endpoint target) : target_(std::move(target)) {
  std::uint16_t port = 0;
  listen_fd_ = listen_on_loopback(16, port, "byte relay");
  listen_ = Endpoint{"127.0.0.1", port};
  acceptor_ = std::thread([this] { accept_loop(); });
}

ByteRelay::~ByteRelay() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  {
    const std::lock_guard lock(mutex_);
    for (const int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : pumps_) t.join();
  for (const int fd : open_fds_) ::close(fd);
  ::close(listen_fd_);
}

bool ByteRelay::wait_until_closed(int timeout_ms) const {
  for (int waited = 0; open_connections_.load() > 0; ++waited) {
    if (waited >= timeout_ms) return false;
    ::poll(nullptr, 0, 1);
  }
  return true;
}

void ByteRelay::reset() {
  const std::lock_guard lock(capture_mutex_);
  to_server_ = 0;
  to_client_ = 0;
  captured_to_server_.clear();
  captured_to_client_.clear();
}

std::string ByteRelay::captured_to_server() const {
  const std::lock_guard lock(capture_mutex_);
  return captured_to_server_;
}

std::string ByteRelay::captured_to_client() const {
  const std::lock_guard lock(capture_mutex_);
  return captured_to_client_;
}

void ByteRelay::accept_loop() {
  while (!stopping_) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;
    }
    set_nodelay(fd);
    const std::lock_guard lock(mutex_);
    open_fds_.push_back(fd);
    ++open_connections_;
    pumps_.emplace_back([this, fd] {
      pump(fd);
      --open_connections_;
    });
  }
}

void ByteRelay::pump(int client_fd) {
  int server_fd = -1;
  try {
    server_fd = connect_to(target_);
  } catch (const std::exception&) {
    ::shutdown(client_fd, SHUT_RDWR);
    return;
  }
  {
    const std::lock_guard lock(mutex_);
    open_fds_.push_back(server_fd);
  }
  std::array<pollfd, 2> fds = {pollfd{client_fd, POLLIN, 0}, pollfd{server_fd, POLLIN, 0}};
  while (!stopping_) {
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) break;
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0 &&
        !forward(client_fd, server_fd, true))
      break;
    if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0 &&
        !forward(server_fd, client_fd, false))
      break;
  }
  ::shutdown(client_fd, SHUT_RDWR);
  ::shutdown(server_fd, SHUT_RDWR);
  // The fds are closed by their owner list when the relay is destroyed, so
  // a shutdown() racing with a reused descriptor number cannot happen.
}

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

[[noreturn]] void not_http(const std::string& why) {
  throw std::runtime_error("not an HTTP/1.1 stream: " + why);
}

constexpr std::string_view kHttp2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// An HTTP/1.1 message starts with a method or "HTTP/"; an HTTP/2 stream
// with the client preface or a frame, whose 24-bit length starts with a
// control byte (0 for every frame under 64 KiB).
bool is_http2(std::string_view stream) {
  return stream.starts_with(kHttp2Preface) ||
         (!stream.empty() && static_cast<unsigned char>(stream.front()) < 0x20);
}

// gRPC's length-prefixed messages in one stream's DATA payloads, which
// may cut a prefix or a message anywhere: a 1-byte flag and a 4-byte
// big-endian length, then that many bytes of message.
class GrpcMessages {
 public:
  void take(std::string_view data, Http2Split& split) {
    while (!data.empty()) {
      if (remaining_ == 0 && prefix_ < 5) {
        if (prefix_ == 0) length_ = 0;
        const std::size_t n = std::min<std::size_t>(5 - prefix_, data.size());
        for (std::size_t i = 0; i < n; ++i, ++prefix_)
          if (prefix_ > 0) length_ = (length_ << 8) | static_cast<unsigned char>(data[i]);
        split.prefixes += n;
        data.remove_prefix(n);
        if (prefix_ < 5) return;
        remaining_ = length_;
        if (remaining_ == 0) prefix_ = 0;  // an empty message: the next prefix follows
        continue;
      }
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, data.size()));
      split.messages += n;
      data.remove_prefix(n);
      remaining_ -= n;
      if (remaining_ == 0) prefix_ = 0;
    }
  }

 private:
  std::size_t prefix_ = 0;       // bytes of the current prefix read
  std::uint64_t length_ = 0;     // the current message's length, as read so far
  std::uint64_t remaining_ = 0;  // bytes of the current message still to come
};

// HTTP/2 frames: DATA payloads are bodies; everything else (the preface,
// frame headers, HPACK header blocks, SETTINGS, PING, WINDOW_UPDATE) is
// counted as headers, the protocol's cost of carrying the bodies; HEADERS
// frames are the messages (a gRPC reply has two: headers and trailers).
HttpSizes http2_sizes(std::string_view stream) {
  constexpr std::size_t kFrameHeader = 9;
  constexpr unsigned char kData = 0x0, kHeaders = 0x1, kContinuation = 0x9;
  HttpSizes sizes;
  sizes.is_http2 = true;
  Http2Split& split = sizes.http2;
  std::map<std::uint32_t, GrpcMessages> streams;
  if (stream.starts_with(kHttp2Preface)) {
    split.control += kHttp2Preface.size();
    stream.remove_prefix(kHttp2Preface.size());
  }
  while (!stream.empty()) {
    if (stream.size() < kFrameHeader) throw std::runtime_error("not an HTTP/2 stream: cut frame");
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(stream[i]); };
    const std::size_t length = (std::size_t{byte(0)} << 16) | (std::size_t{byte(1)} << 8) | byte(2);
    if (stream.size() < kFrameHeader + length)
      throw std::runtime_error("not an HTTP/2 stream: frame shorter than its length");
    const std::uint32_t id = ((std::uint32_t{byte(5)} & 0x7f) << 24) |
                             (std::uint32_t{byte(6)} << 16) | (std::uint32_t{byte(7)} << 8) |
                             byte(8);
    const std::string_view payload = stream.substr(kFrameHeader, length);
    split.frame_headers += kFrameHeader;
    if (byte(3) == kData) {
      // PADDED (0x8): a pad length byte and that much padding, not message.
      std::size_t pad = 0;
      if ((byte(4) & 0x8) != 0 && length > 0) pad = 1 + static_cast<unsigned char>(payload[0]);
      if (pad > length) throw std::runtime_error("not an HTTP/2 stream: padding past its frame");
      split.control += pad;
      streams[id].take(payload.substr(pad == 0 ? 0 : 1, length - pad), split);
    } else if (byte(3) == kHeaders || byte(3) == kContinuation) {
      split.header_blocks += length;
      if (byte(3) == kHeaders) ++sizes.messages;
    } else {
      split.control += length;
    }
    stream.remove_prefix(kFrameHeader + length);
  }
  sizes.headers = split.frame_headers + split.header_blocks + split.control;
  sizes.bodies = split.prefixes + split.messages;
  return sizes;
}

}  // namespace

HttpSizes http_sizes(std::string_view stream) {
  if (is_http2(stream)) return http2_sizes(stream);
  HttpSizes sizes;
  while (!stream.empty()) {
    const auto end = stream.find("\r\n\r\n");
    if (end == std::string_view::npos) not_http("header block without an end");
    const std::string_view head = stream.substr(0, end + 4);
    std::size_t content_length = 0;
    bool chunked = false;
    bool interim = head.starts_with("HTTP/1.1 1") || head.starts_with("HTTP/1.0 1");
    for (std::size_t pos = head.find("\r\n") + 2; pos < head.size();) {
      const auto eol = head.find("\r\n", pos);
      const std::string_view line = head.substr(pos, eol - pos);
      pos = eol + 2;
      const auto colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const std::string_view name = trim(line.substr(0, colon));
      const std::string_view value = trim(line.substr(colon + 1));
      if (iequals(name, "content-length")) {
        content_length = std::stoull(std::string(value));
      } else if (iequals(name, "transfer-encoding") && iequals(value, "chunked")) {
        chunked = true;
      }
    }
    sizes.headers += head.size();
    ++sizes.messages;
    stream.remove_prefix(head.size());
    if (interim) continue;
    if (chunked) {
      // Chunk framing counts as body bytes: it is what carries the body.
      std::size_t used = 0;
      while (true) {
        const auto eol = stream.find("\r\n", used);
        if (eol == std::string_view::npos) not_http("chunk size without an end");
        const std::size_t chunk =
            std::stoull(std::string(stream.substr(used, eol - used)), nullptr, 16);
        used = eol + 2 + chunk + 2;
        if (chunk == 0) break;
      }
      content_length = used;
    }
    if (content_length > stream.size()) not_http("body shorter than its length");
    sizes.bodies += content_length;
    stream.remove_prefix(content_length);
  }
  return sizes;
}

}  // namespace wsb

namespace wsb {
namespace {

std::uint16_t be16(std::string_view s, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(s[at]) << 8) |
                                    static_cast<unsigned char>(s[at + 1]));
}

// RFC 8446 4.1.3: a HelloRetryRequest is a ServerHello with this random.
constexpr unsigned char kRetryRandom[32] = {
    0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
    0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C};

}  // namespace

std::optional<ServerHello> server_hello(std::string_view in) {
  // A handshake record (22) whose first message is a ServerHello (2); a
  // ServerHello fits in its first record.
  constexpr std::size_t kRecordHeader = 5, kMessageHeader = 4;
  if (in.size() < kRecordHeader + kMessageHeader || in[0] != 22) return std::nullopt;
  const std::size_t record = be16(in, 3);
  if (in.size() < kRecordHeader + record) return std::nullopt;
  std::string_view m = in.substr(kRecordHeader, record);
  if (m[0] != 2) return std::nullopt;
  const std::size_t length = (std::size_t{static_cast<unsigned char>(m[1])} << 16) | be16(m, 2);
  if (m.size() < kMessageHeader + length) return std::nullopt;
  m = m.substr(kMessageHeader, length);
  // legacy_version, random, legacy_session_id, cipher_suite,
  // legacy_compression_method, extensions.
  std::size_t at = 2 + 32;
  if (m.size() < at + 1) return std::nullopt;
  if (std::memcmp(m.data() + 2, kRetryRandom, sizeof kRetryRandom) == 0) return std::nullopt;
  at += 1 + static_cast<unsigned char>(m[at]);
  if (m.size() < at + 2 + 1 + 2) return std::nullopt;
  ServerHello hello;
  hello.cipher_suite = be16(m, at);
  at += 2 + 1;
  const std::size_t end = at + 2 + be16(m, at);
  if (m.size() < end) return std::nullopt;
  for (at += 2; at + 4 <= end;) {
    const std::uint16_t type = be16(m, at);
    const std::size_t size = be16(m, at + 2);
    at += 4;
    if (at + size > end) return std::nullopt;
    if (type == 0x002b && size >= 2) hello.version = be16(m, at);  // supported_versions
    if (type == 0x0033 && size >= 2) hello.group = be16(m, at);    // key_share
    at += size;
  }
  return hello;
}

namespace {

std::string hex(std::uint16_t v) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%04x", v);
  return text;
}

}  // namespace

ServerHello expected_hello(const std::string& stack) {
  ServerHello expected = kExpectedHello;
  if (stack == "grpc-tls") expected.group = 0x0017;
  return expected;
}

std::string describe(const ServerHello& hello) {
  const auto name = [](std::uint16_t code,
                       std::initializer_list<std::pair<std::uint16_t, const char*>> names) {
    for (const auto& [c, n] : names)
      if (c == code) return std::string(n);
    return hex(code);
  };
  return name(hello.version, {{0x0304, "TLSv1.3"}, {0x0303, "TLSv1.2"}}) + " " +
         name(hello.cipher_suite, {{0x1301, "TLS_AES_128_GCM_SHA256"},
                                   {0x1302, "TLS_AES_256_GCM_SHA384"},
                                   {0x1303, "TLS_CHACHA20_POLY1305_SHA256"}}) +
         " " +
         name(hello.group, {{0x001d, "x25519"}, {0x0017, "secp256r1"}, {0x0018, "secp384r1"}});
}

std::string hello_mismatch(const std::optional<ServerHello>& hello, const ServerHello& expected) {
  if (!hello) return "no TLS ServerHello on the connection";
  std::string diff;
  const auto check = [&](const char* what, std::uint16_t got, std::uint16_t want) {
    if (got != want)
      diff += (diff.empty() ? "" : ", ") + std::string(what) + " " + hex(got) + " (want " +
              hex(want) + ")";
  };
  check("cipher suite", hello->cipher_suite, expected.cipher_suite);
  check("key_share group", hello->group, expected.group);
  check("supported_versions", hello->version, expected.version);
  return diff.empty() ? diff : "the server negotiated " + diff;
}

}  // namespace wsb
