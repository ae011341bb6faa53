// Slow and many clients against the grpc server, as raw HTTP/2 peers: a
// connection that never sends the preface (or stops inside it), a request
// trickled a byte at a time, a client that never reads its reply, and
// many idle connections. Each must leave the server answering a new
// client, and stop() must return promptly with them open. What the server
// does with each is in docs/servers/concurrency.md.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/payload.h"
#include "common/service.h"
#include "common/transport.h"
#include "fd_limit.h"
#include "grpc/grpc_stack.h"
#include "h2_peer.h"

namespace wsb {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using testing::grpc_message;
using testing::grpc_request_headers;
using testing::H2Peer;
using testing::kEchoMethod;
using testing::kGetMethod;
using testing::kPingMethod;

constexpr char kGrpc[] = "grpc";
// A fresh client's connect and ping while the slow ones hold the server.
constexpr milliseconds kFreshCallBound{1000};
// stop(): gRPC's Shutdown deadline (1 s) and the server's teardown.
constexpr milliseconds kStopBound{2500};

long long ms(Clock::duration d) { return std::chrono::duration_cast<milliseconds>(d).count(); }

Clock::duration fresh_ping(const Endpoint& at) {
  const auto start = Clock::now();
  EXPECT_EQ(find_stack(kGrpc).connect(at, "protobuf")->ping(), kPingReply);
  return Clock::now() - start;
}

// A peer that has connected and sent `first` (maybe nothing), then
// nothing more, acknowledging nothing.
std::unique_ptr<H2Peer> silent_peer(const Endpoint& at, std::string_view first) {
  auto peer = std::make_unique<H2Peer>(at);
  peer->stay_silent();
  if (!first.empty()) {
    EXPECT_TRUE(peer->send(first));
  }
  return peer;
}

// What a peer that stopped before finishing the SETTINGS exchange sends.
struct Unfinished {
  const char* name;
  std::string first;
};
std::vector<Unfinished> unfinished_handshakes() {
  return {{"nothing", ""},
          {"half the preface", std::string(testing::kH2Preface.substr(0, 12))},
          {"the preface without SETTINGS", std::string(testing::kH2Preface)}};
}

// Get's request, wsbench.PayloadLabel, by hand: field 1 (a string).
std::string label_message(const PayloadSpec& spec) {
  const std::string label = spec.label();
  EXPECT_LT(label.size(), 128u) << "one varint byte";
  return std::string(1, '\x0a') + static_cast<char>(label.size()) + label;
}

using testing::raise_fd_limit;

// A peer past the SETTINGS exchange that has asked for a 1 MiB reply on
// stream 1 (Get of binary/1MiB).
std::unique_ptr<H2Peer> asking_for_a_mebibyte(const Endpoint& at) {
  auto peer = std::make_unique<H2Peer>(at);
  EXPECT_TRUE(peer->handshake());
  peer->send_headers(1, grpc_request_headers(kGetMethod), false);
  peer->send_data(1, grpc_message(label_message({Kind::binary, 1 << 20})), true);
  return peer;
}

// The server's peer timeout is the smaller of request_timeout_s and
// keepalive_timeout_s: 1 s here, where gRPC's own handshake timeout is
// 120 s.
TEST(GrpcSlowClients, AnUnfinishedHandshakeIsClosedWithinTheTimeout) {
  Service service;
  ServerOptions options;
  options.concurrency.request_timeout_s = 1;
  ASSERT_EQ(grpc_stack::peer_timeout_s(options), 1);
  const auto server = find_stack(kGrpc).start_server(service, options);
  for (const auto& [name, first] : unfinished_handshakes()) {
    SCOPED_TRACE(name);
    const auto start = Clock::now();
    const auto peer = silent_peer(server->endpoint(), first);
    const testing::H2Outcome got = peer->outcome(1, milliseconds(4000));
    const auto took = Clock::now() - start;
    EXPECT_TRUE(got.closed) << got.answer();
    EXPECT_EQ(got.answer(), "GOAWAY INTERNAL_ERROR, closed");
    EXPECT_GE(took, milliseconds(900));
    EXPECT_LT(took, milliseconds(2500)) << ms(took) << " ms";
  }
  EXPECT_LT(fresh_ping(server->endpoint()), kFreshCallBound);
}

// stop() with every kind of slow connection open returns within the
// Shutdown deadline, and closes each (the peers that ignore the first
// GOAWAY get a second and the close).
TEST(GrpcSlowClients, StopReturnsPromptlyWithSlowConnectionsOpen) {
  Service service;
  auto server = find_stack(kGrpc).start_server(service, ServerOptions{});
  const Endpoint at = server->endpoint();
  std::vector<std::unique_ptr<H2Peer>> peers;
  for (const auto& u : unfinished_handshakes()) peers.push_back(silent_peer(at, u.first));
  auto idle = std::make_unique<H2Peer>(at);
  ASSERT_TRUE(idle->handshake());
  peers.push_back(std::move(idle));
  auto midway = std::make_unique<H2Peer>(at);  // a request half sent
  ASSERT_TRUE(midway->handshake());
  midway->send_headers(1, grpc_request_headers(kEchoMethod), false);
  midway->send(grpc_message(std::string(100, 'x')).substr(0, 50));
  peers.push_back(std::move(midway));
  EXPECT_LT(fresh_ping(at), kFreshCallBound);

  const auto start = Clock::now();
  server->stop();
  const auto took = Clock::now() - start;
  EXPECT_LT(took, kStopBound) << ms(took) << " ms";
  RecordProperty("stop_ms", std::to_string(ms(took)));
  for (std::size_t i = 0; i < peers.size(); ++i)
    EXPECT_TRUE(peers[i]->outcome(1, milliseconds(1000)).closed) << "peer " << i;
}

// 20 streams each trickle an echo request a byte every 50 ms; meanwhile
// new clients are answered at once, and each trickled call is answered
// when its last byte comes. gRPC 1.51's server has no deadline of its own
// on a request's arrival (the client's grpc-timeout is gRPC's): a stream
// that trickles is held as long as it trickles.
TEST(GrpcSlowClients, TrickledRequestsHoldTheirStreamsNotTheServer) {
  constexpr int kCrowd = 20;
  Service service;
  const auto server = find_stack(kGrpc).start_server(service, ServerOptions{});
  const std::string message = grpc_message(std::string("\x0a\x05hello", 7));
  std::vector<std::unique_ptr<H2Peer>> crowd;
  for (int i = 0; i < kCrowd; ++i) {
    crowd.push_back(std::make_unique<H2Peer>(server->endpoint()));
    ASSERT_TRUE(crowd.back()->handshake());
    crowd.back()->send_headers(1, grpc_request_headers(kEchoMethod), false);
  }
  std::atomic<bool> sent{false};
  std::thread trickle([&] {
    for (std::size_t at = 0; at < message.size(); ++at) {
      for (auto& peer : crowd) peer->send_data(1, message.substr(at, 1), at + 1 == message.size());
      std::this_thread::sleep_for(milliseconds(50));
    }
    sent = true;
  });
  for (int i = 0; i < 3 && !sent; ++i) {
    const auto took = fresh_ping(server->endpoint());
    EXPECT_LT(took, kFreshCallBound) << "call " << i << " took " << ms(took) << " ms";
    std::this_thread::sleep_for(milliseconds(100));
  }
  trickle.join();
  for (auto& peer : crowd) {
    const testing::H2Outcome got = peer->outcome(1, milliseconds(5000), milliseconds(0));
    EXPECT_EQ(got.answer(), "grpc-status OK");
    EXPECT_NE(got.data.find("hello"), std::string::npos) << "the echo";
  }
}

// A client asks for a 1 MiB reply and never reads it nor opens its
// window: the server sends what the window allows and waits, a new client
// is answered meanwhile, and stop() ends the stalled call.
TEST(GrpcSlowClients, AClientThatNeverReadsHoldsOnlyItsStream) {
  Service service;
  auto server = find_stack(kGrpc).start_server(service, ServerOptions{});
  std::vector<std::unique_ptr<H2Peer>> stalled;
  for (int i = 0; i < 4; ++i) stalled.push_back(asking_for_a_mebibyte(server->endpoint()));
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_LT(fresh_ping(server->endpoint()), kFreshCallBound);
  // Its first 64 KiB (the default window), then nothing: the reply waits.
  const testing::H2Outcome first = stalled.front()->outcome(1, milliseconds(500));
  EXPECT_EQ(first.answer(), "no answer");
  EXPECT_EQ(first.data.size(), 65535u);

  const auto start = Clock::now();
  server->stop();
  EXPECT_LT(Clock::now() - start, kStopBound) << ms(Clock::now() - start) << " ms";
  for (auto& peer : stalled) EXPECT_TRUE(peer->outcome(1, milliseconds(1000)).closed);
}

// The same client with a peer timeout of 1 s: after 1 s without a byte
// from it the server sends a PING, and 1 s later, unanswered, ends the
// call (UNAVAILABLE) and closes the connection.
TEST(GrpcSlowClients, AClientThatNeverReadsIsClosedAfterThePeerTimeout) {
  Service service;
  ServerOptions options;
  options.concurrency.request_timeout_s = 1;
  const auto server = find_stack(kGrpc).start_server(service, options);
  const auto stalled = asking_for_a_mebibyte(server->endpoint());
  stalled->stay_silent();
  const auto start = Clock::now();
  const testing::H2Outcome got = stalled->outcome(1, milliseconds(5000));
  const auto took = Clock::now() - start;
  EXPECT_EQ(got.answer(), "grpc-status UNAVAILABLE, closed");
  EXPECT_EQ(got.data.size(), 65535u);
  EXPECT_GE(took, milliseconds(900)) << "at least the PING's wait";
  EXPECT_LT(took, milliseconds(4000)) << ms(took) << " ms";
  EXPECT_LT(fresh_ping(server->endpoint()), kFreshCallBound);
}

// 1,000 connections past the SETTINGS exchange and 1,000 that sent
// nothing: the server keeps answering, and one of the idle ones is served
// when it calls.
TEST(GrpcSlowClients, TwoThousandIdleConnectionsDoNotStopTheServer) {
  constexpr int kEach = 1000;
  if (!raise_fd_limit(4 * kEach + 512))
    GTEST_SKIP() << "the hard descriptor limit is below " << 4 * kEach + 512;
  Service service;
  const auto server = find_stack(kGrpc).start_server(service, ServerOptions{});
  std::vector<std::unique_ptr<H2Peer>> idle;
  for (int i = 0; i < kEach; ++i) {
    idle.push_back(std::make_unique<H2Peer>(server->endpoint()));
    ASSERT_TRUE(idle.back()->start());
    idle.push_back(silent_peer(server->endpoint(), ""));
  }
  for (int i = 0; i < 3; ++i) {
    const auto took = fresh_ping(server->endpoint());
    EXPECT_LT(took, milliseconds(5000)) << "call " << i << " took " << ms(took) << " ms";
  }
  H2Peer& speaker = *idle.front();
  EXPECT_EQ(speaker.call(1, kPingMethod, grpc_message("")).answer(), "grpc-status OK");
}

// An HTTP/2 connection idle for keepalive_timeout_s is sent a GOAWAY and
// closed (GRPC_ARG_MAX_CONNECTION_IDLE_MS; gRPC 1.51 gives it
// INTERNAL_ERROR).
TEST(GrpcSlowClients, AnIdleConnectionIsClosedAfterTheKeepaliveTimeout) {
  Service service;
  ServerOptions options;
  options.limits.keepalive_timeout_s = 1;
  const auto server = find_stack(kGrpc).start_server(service, options);
  H2Peer peer(server->endpoint());
  ASSERT_TRUE(peer.handshake());
  ASSERT_EQ(peer.call(1, kPingMethod, grpc_message("")).answer(), "grpc-status OK");
  const auto start = Clock::now();
  const testing::H2Outcome got = peer.outcome(3, milliseconds(4000));
  const auto took = Clock::now() - start;
  EXPECT_EQ(got.answer(), "GOAWAY INTERNAL_ERROR, closed");
  EXPECT_GE(took, milliseconds(900));
  EXPECT_LT(took, milliseconds(3000)) << ms(took) << " ms";
}

}  // namespace
}  // namespace wsb
