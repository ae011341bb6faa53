// The measuring instruments themselves: the counting relay behind every
// bytes-on-the-wire figure, the HTTP header/body split, and the TCP floor
// every round trip is divided by. Expected sizes are counted by hand.
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/service.h"
#include "common/transport.h"
#include "harness/byte_relay.h"
#include "harness/loopback.h"
#include "harness/stack_sockets.h"
#include "harness/tcp_floor.h"

namespace wsb {

void PrintTo(const SocketState& s, std::ostream* os) {
  *os << "{nodelay " << s.nodelay << ", SO_SNDBUF " << s.send_buffer << ", SO_RCVBUF "
      << s.receive_buffer << "}";
}

namespace {

// Header block: 21 (request line) + 17 (Host) + 32 (Content-Type) + 20
// (Content-Length) + 2 (blank line) = 92; body {"ping":true} = 13.
const std::string kRequest =
    "POST /echo HTTP/1.1\r\n"
    "Host: 127.0.0.1\r\n"
    "Content-Type: application/json\r\n"
    "Content-Length: 13\r\n"
    "\r\n"
    "{\"ping\":true}";

// An interim 100 Continue (25 bytes, no body), then a chunked response:
// header block 17 + 28 + 26 + 2 = 73; body (chunk framing included, as it
// carries the body) "5\r\nhello\r\n" 10 + "6\r\n world\r\n" 11 + "0\r\n\r\n" 5
// = 26.
const std::string kInterim = "HTTP/1.1 100 Continue\r\n\r\n";
const std::string kResponse =
    "HTTP/1.1 200 OK\r\n"
    "Transfer-Encoding: chunked\r\n"
    "Content-Type: text/plain\r\n"
    "\r\n"
    "5\r\nhello\r\n"
    "6\r\n world\r\n"
    "0\r\n\r\n";

TEST(HttpSizes, SplitsAKnownRequestIntoHeadersAndBody) {
  ASSERT_EQ(kRequest.size(), 105u);
  const HttpSizes s = http_sizes(kRequest);
  EXPECT_EQ(s.headers, 92u);
  EXPECT_EQ(s.bodies, 13u);
  EXPECT_EQ(s.messages, 1u);
}

TEST(HttpSizes, CountsInterimResponsesAndChunkFraming) {
  ASSERT_EQ(kInterim.size() + kResponse.size(), 124u);
  const HttpSizes s = http_sizes(kInterim + kResponse);
  EXPECT_EQ(s.headers, 25u + 73u);
  EXPECT_EQ(s.bodies, 26u);
  EXPECT_EQ(s.messages, 2u);
}

TEST(HttpSizes, AddsUpPipelinedMessagesAndReadsFieldNamesInAnyCase) {
  const std::string lower =
      "GET /ping HTTP/1.1\r\n"  // 20
      "content-length: 2\r\n"   // 19
      "\r\n"                    // 2
      "ok";
  const HttpSizes s = http_sizes(kRequest + lower);
  EXPECT_EQ(s.headers, 92u + 41u);
  EXPECT_EQ(s.bodies, 13u + 2u);
  EXPECT_EQ(s.messages, 2u);
  EXPECT_EQ(http_sizes("").messages, 0u);
}

TEST(HttpSizes, RejectsWhatIsNotHttp) {
  EXPECT_THROW(http_sizes("garbage without a header end"), std::runtime_error);
  EXPECT_THROW(http_sizes(kRequest.substr(0, kRequest.size() - 1)), std::runtime_error);
  EXPECT_THROW(http_sizes(kResponse.substr(0, kResponse.size() - 5)), std::runtime_error);
}

// A frame: 24-bit length, type, flags, 31-bit stream id, payload.
std::string h2_frame(unsigned char type, std::uint32_t stream, const std::string& payload) {
  std::string f;
  f += static_cast<char>(payload.size() >> 16);
  f += static_cast<char>((payload.size() >> 8) & 0xff);
  f += static_cast<char>(payload.size() & 0xff);
  f += static_cast<char>(type);
  f += '\x04';
  for (int shift = 24; shift >= 0; shift -= 8) f += static_cast<char>((stream >> shift) & 0xff);
  return f + payload;
}

TEST(HttpSizes, SplitsHttp2FramesIntoDataAndTheRest) {
  const std::string preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";       // 24
  const std::string stream = preface + h2_frame(0x4, 0, "") +           // SETTINGS: 9
                             h2_frame(0x1, 1, "hpack") +                // HEADERS: 9 + 5
                             h2_frame(0x0, 1, std::string(300, 'd')) +  // DATA: 9 + 300
                             h2_frame(0x8, 0, "wind");                  // WINDOW_UPDATE: 9 + 4
  const HttpSizes s = http_sizes(stream);
  EXPECT_EQ(s.bodies, 300u);
  EXPECT_EQ(s.headers, 24u + 9u + 14u + 9u + 13u);
  EXPECT_EQ(s.messages, 1u);
  // Without the preface (a reply, or a capture started mid-connection).
  EXPECT_EQ(http_sizes(h2_frame(0x1, 1, "ab") + h2_frame(0x1, 1, "c")).messages, 2u);
  // A frame cut short is not HTTP/2.
  EXPECT_THROW(http_sizes(stream.substr(0, stream.size() - 1)), std::runtime_error);
  EXPECT_THROW(http_sizes(stream.substr(0, 30)), std::runtime_error);
}

// gRPC's 5-byte prefix (flag, big-endian length) before `message`.
std::string grpc_message(const std::string& message) {
  std::string m(4, '\0');
  m += static_cast<char>(message.size());
  return m + message;
}

TEST(HttpSizes, SplitsHttp2IntoFramesHpackControlPrefixesAndMessages) {
  const std::string preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  // Three messages on stream 1 cut across DATA frames anywhere: "abc", an
  // empty one, then "z" whose prefix straddles two frames; one on stream 3
  // in a PADDED frame (pad length byte 2, two bytes of padding).
  const std::string one = grpc_message("abc") + grpc_message("") + grpc_message("z");
  std::string padded = std::string(1, '\x02') + grpc_message("q") + std::string(2, '\0');
  std::string padded_frame = h2_frame(0x0, 3, padded);
  padded_frame[4] = '\x08';                                    // PADDED
  const std::string stream = preface + h2_frame(0x4, 0, "") +  // SETTINGS
                             h2_frame(0x1, 1, "hpack") +       // HEADERS: 5
                             h2_frame(0x9, 1, "xy") +          // CONTINUATION: 2
                             h2_frame(0x0, 1, one.substr(0, 6)) +
                             h2_frame(0x0, 1, one.substr(6, 10)) +
                             h2_frame(0x0, 1, one.substr(16)) + padded_frame +
                             h2_frame(0x8, 0, "wind") +     // WINDOW_UPDATE: 4
                             h2_frame(0x6, 0, "pingpong");  // PING: 8
  const HttpSizes s = http_sizes(stream);
  ASSERT_TRUE(s.is_http2);
  EXPECT_EQ(s.http2.frame_headers, 9u * 9u);
  EXPECT_EQ(s.http2.header_blocks, 5u + 2u);
  EXPECT_EQ(s.http2.control, 24u + 3u + 4u + 8u) << "preface, padding, WINDOW_UPDATE, PING";
  EXPECT_EQ(s.http2.prefixes, 4u * 5u);
  EXPECT_EQ(s.http2.messages, 3u + 0u + 1u + 1u);
  EXPECT_EQ(s.http2.total(), stream.size());
  EXPECT_TRUE(http2_split_matches(s, stream.size()));
  EXPECT_EQ(s.headers, s.http2.frame_headers + s.http2.header_blocks + s.http2.control);
  EXPECT_EQ(s.bodies, s.http2.prefixes + s.http2.messages);
  EXPECT_EQ(s.messages, 1u);
  // HTTP/1.1 has no split: nothing to match.
  EXPECT_FALSE(http_sizes("GET / HTTP/1.1\r\n\r\n").is_http2);
  EXPECT_TRUE(http2_split_matches(http_sizes("GET / HTTP/1.1\r\n\r\n"), 999));
  // Padding longer than its frame is not HTTP/2.
  std::string bad = h2_frame(0x0, 1, "\x09x");
  bad[4] = '\x08';
  EXPECT_THROW(http_sizes(bad), std::runtime_error);
}

// The check --wire-sizes makes of every HTTP/2 row fails where the split
// misses bytes the relay counted: here a frame the parse never saw.
TEST(HttpSizes, AnHttp2SplitMissingAFrameFailsTheCheck) {
  const std::string stream = h2_frame(0x1, 1, "hpack") + h2_frame(0x0, 1, grpc_message("abc"));
  const std::string lost = h2_frame(0x8, 0, "wind");
  EXPECT_TRUE(http2_split_matches(http_sizes(stream + lost), stream.size() + lost.size()));
  EXPECT_FALSE(http2_split_matches(http_sizes(stream), stream.size() + lost.size()));
}

// A server that answers each kRequest with kInterim and kResponse, written
// separately, the way a server sends an interim response.
class ScriptedServer {
 public:
  ScriptedServer() {
    listen_fd_ = listen_on_loopback(1, port_, "scripted server");
    thread_ = std::thread([this] {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      std::string request(kRequest.size(), '\0');
      while (read_exact(fd, request.data(), request.size()) && request == kRequest &&
             write_all(fd, kInterim.data(), kInterim.size()) &&
             write_all(fd, kResponse.data(), kResponse.size())) {
      }
      ::close(fd);
    });
  }
  ~ScriptedServer() {
    ::shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    ::close(listen_fd_);
  }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  Endpoint endpoint() const { return {"127.0.0.1", port_}; }

 private:
  std::uint16_t port_ = 0;
  int listen_fd_ = -1;
  std::thread thread_;
};

int connect_to(const Endpoint& e) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(e.port);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("connect to " + e.to_string());
  // A relay that loses bytes must fail the test, not hang it.
  const timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

std::string exchange(int fd) {
  EXPECT_TRUE(write_all(fd, kRequest.data(), kRequest.size()));
  std::string reply(kInterim.size() + kResponse.size(), '\0');
  EXPECT_TRUE(read_exact(fd, reply.data(), reply.size()));
  return reply;
}

TEST(ByteRelay, CountsAndCapturesExactlyTheBytesOfAKnownExchange) {
  ScriptedServer server;
  ByteRelay relay(server.endpoint());
  relay.set_capture(true);
  const int fd = connect_to(relay.endpoint());

  EXPECT_EQ(exchange(fd), kInterim + kResponse);
  EXPECT_EQ(relay.counts().to_server, 105u);
  EXPECT_EQ(relay.counts().to_client, 124u);
  EXPECT_EQ(relay.captured_to_server(), kRequest);
  EXPECT_EQ(relay.captured_to_client(), kInterim + kResponse);
  const HttpSizes response = http_sizes(relay.captured_to_client());
  EXPECT_EQ(response.headers, 98u);
  EXPECT_EQ(response.bodies, 26u);

  // After a reset, only the next call's bytes, on the same connection.
  relay.reset();
  EXPECT_EQ(relay.counts().to_server, 0u);
  EXPECT_EQ(relay.captured_to_client(), "");
  exchange(fd);
  exchange(fd);
  EXPECT_EQ(relay.counts().to_server, 2 * 105u);
  EXPECT_EQ(relay.counts().to_client, 2 * 124u);
  EXPECT_EQ(http_sizes(relay.captured_to_server()).messages, 2u);
  ::close(fd);
}

TEST(ByteRelay, CountsWithoutCapturing) {
  ScriptedServer server;
  ByteRelay relay(server.endpoint());
  const int fd = connect_to(relay.endpoint());
  exchange(fd);
  EXPECT_EQ(relay.counts().to_server, 105u);
  EXPECT_EQ(relay.counts().to_client, 124u);
  EXPECT_EQ(relay.captured_to_server(), "");
  ::close(fd);
}

// The floor with a counting relay between its client and its server.
// Members go in reverse order: the floor before the relay it talks through.
struct RelayedFloor {
  std::unique_ptr<ByteRelay> relay;
  std::unique_ptr<TcpFloor> floor;

  RelayedFloor(std::size_t request, std::size_t response) {
    floor = std::make_unique<TcpFloor>(
        request, response, ConnectionOptions{}, std::nullopt, [this](std::uint16_t port) {
          relay = std::make_unique<ByteRelay>(Endpoint{"127.0.0.1", port});
          return relay->endpoint().port;
        });
  }
};

TEST(TcpFloor, MovesExactlyTheRequestedBytesAndNothingElse) {
  RelayedFloor f(1000, 5000);
  ASSERT_NE(f.relay, nullptr);
  const int warm = f.floor->warm_up();
  EXPECT_GE(warm, 1);
  EXPECT_LE(warm, TcpFloor::kWarmUp);
  for (int i = 0; i < 50; ++i) EXPECT_GT(f.floor->round_trip(), 0);
  // No framing of its own: the sizes are fixed for the floor's life.
  const std::uint64_t exchanges = 50 + static_cast<std::uint64_t>(warm);
  EXPECT_EQ(f.relay->counts().to_server, exchanges * 1000);
  EXPECT_EQ(f.relay->counts().to_client, exchanges * 5000);
}

// Long exchanges (a shaped link, a large body) end the warm-up early: the
// budget spent, one exchange is enough; with time to spare, all are made.
TEST(TcpFloor, WarmUpStopsWhenItsBudgetIsSpent) {
  RelayedFloor f(100, 100);
  ASSERT_NE(f.relay, nullptr);
  EXPECT_EQ(f.floor->warm_up(0), 1);
  EXPECT_EQ(f.relay->counts().to_server, 100u);
  EXPECT_EQ(f.floor->warm_up(std::int64_t{60} * 1'000'000'000), TcpFloor::kWarmUp);
  EXPECT_EQ(f.relay->counts().to_server, 100u * (1 + TcpFloor::kWarmUp));
}

TEST(TcpFloor, SmallestExchangeIsOneByteEachWay) {
  RelayedFloor f(0, 0);
  for (int i = 0; i < 7; ++i) f.floor->round_trip();
  EXPECT_EQ(f.relay->counts().to_server, 7u);
  EXPECT_EQ(f.relay->counts().to_client, 7u);
}

// A message the kernel delivers whole takes one recv() on each side, as
// it does for a stack reading into a buffer large enough for it.
TEST(TcpFloor, ReceivesOncePerMessageWhenDeliveredWhole) {
  TcpFloor floor(300, 700, ConnectionOptions{}, std::nullopt);
  for (int i = 0; i < 20; ++i) floor.round_trip();
  EXPECT_EQ(floor.client_receives(), 20u);
  EXPECT_EQ(floor.server_receives(), 20u);
}

TEST(TcpFloor, SetsTheSocketOptionsItIsGivenOnBothEnds) {
  const SocketOptions small{true, 65536, 32768};
  TcpFloor floor(10, 10, {small, small}, std::nullopt);
  floor.round_trip();
  // Linux reports twice the size set (the rest is its bookkeeping).
  const SocketState expected{true, 2 * 65536, 2 * 32768};
  EXPECT_EQ(floor.client_socket(), expected);
  ASSERT_TRUE(floor.server_socket().has_value());
  EXPECT_EQ(*floor.server_socket(), expected);

  TcpFloor plain(10, 10, ConnectionOptions{}, std::nullopt);
  plain.round_trip();
  EXPECT_TRUE(plain.client_socket().nodelay);
  EXPECT_NE(plain.client_socket().send_buffer, 2 * 65536);
}

// The port of an IPv4 or IPv6 address (gRPC's sockets are IPv6 with
// IPv4-mapped addresses); -1 for another family.
int port_of(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  if (address.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  return -1;
}

// A connected TCP socket of this process with local port `local` and peer
// port `peer` (0: any); -1 if none.
int find_socket(std::uint16_t local, std::uint16_t peer) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (const dirent* entry = ::readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    sockaddr_storage mine{}, theirs{};
    socklen_t a = sizeof mine, b = sizeof theirs;
    if (fd <= 2 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &a) != 0 ||
        ::getpeername(fd, reinterpret_cast<sockaddr*>(&theirs), &b) != 0 || port_of(mine) < 0)
      continue;
    if ((local == 0 || port_of(mine) == local) && (peer == 0 || port_of(theirs) == peer)) {
      found = fd;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

// The floor under a stack's round trips sets what that stack's own sockets
// have, on both ends, after a call of about the same size.
TEST(StackSockets, FloorSocketsMatchEachStacksLiveSockets) {
  for (const auto& stack : all_stacks()) {
    SCOPED_TRACE(stack.name);
    Service service;
    const auto server = stack.start_server(service, ServerOptions{});
    const auto client = stack.connect(server->endpoint(), stack.codecs.front());
    ASSERT_EQ(client->ping(), kPingReply);
    const int client_fd = find_socket(0, server->endpoint().port);
    ASSERT_GE(client_fd, 0) << "no client socket";
    const int server_fd = find_socket(server->endpoint().port, 0);
    ASSERT_GE(server_fd, 0) << "no server socket";

    TcpFloor floor(200, 200, stack_socket_options(stack.name), std::nullopt);
    floor.round_trip();
    EXPECT_EQ(floor.client_socket(), socket_state(client_fd));
    ASSERT_TRUE(floor.server_socket().has_value());
    EXPECT_EQ(*floor.server_socket(), socket_state(server_fd));
  }
  EXPECT_THROW(stack_socket_options("no-such-stack"), std::invalid_argument);
}

TEST(InterleavedFloor, AlternatesEqualBlocksOfFloorAndCaseCalls) {
  std::string order;
  InterleavedFloor floor(
      [&order] {
        order += 'F';
        return std::int64_t{7};
      },
      3);
  for (int call = 0; call < 8; ++call) {
    if (floor.block_due()) floor.run_block();
    floor.count_call();
    order += 'C';
  }
  EXPECT_EQ(order, "FFFCCCFFFCCCFFFCC");
  EXPECT_EQ(floor.samples(), std::vector<std::int64_t>(9, 7));
}

}  // namespace
}  // namespace wsb
