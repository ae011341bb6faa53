// HTTP/2 floods and HPACK abuse against the grpc and grpc-tls servers, one
// table: each row is sent as raw frames (h2_peer) to an in-process server,
// straight for grpc and through a local TLS relay for grpc-tls, with the
// answer each must give; after each, a new client's ping is answered.
// The "HTTP/2 floods" table of docs/servers/hostile-input.md is this
// table; a test keeps the two equal.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/service.h"
#include "common/transport.h"
#include "docs_table.h"
#include "h2_peer.h"
#include "h2_tls_relay.h"
#include "process_memory.h"

namespace wsb {
namespace {

using std::chrono::milliseconds;
using testing::grpc_message;
using testing::grpc_request_headers;
using testing::h2_frame;
using testing::H2Outcome;
using testing::H2Peer;
using testing::kPingMethod;

constexpr std::size_t kMaxMetadata = 2048;
constexpr int kFloodFrames = 200000;

ServerOptions small_limits() {
  ServerOptions options;
  options.limits.max_body_bytes = 4096;
  options.limits.max_header_bytes = kMaxMetadata;
  return options;
}

// A running server of `stack` and where a cleartext HTTP/2 peer reaches it.
struct Target {
  Service service;
  std::unique_ptr<Server> server;
  std::unique_ptr<testing::TlsRelay> relay;
  Target(const std::string& stack, const ServerOptions& options)
      : server(find_stack(stack).start_server(service, options)) {
    if (stack == "grpc-tls") relay = std::make_unique<testing::TlsRelay>(server->endpoint());
  }
  Endpoint h2() const { return relay ? relay->endpoint() : server->endpoint(); }
};

std::string u32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// RFC 7541 5.1: an integer with an `prefix`-bit prefix, its first byte's
// high bits `high`.
std::string hpack_int(std::uint8_t high, int prefix, std::size_t v) {
  const std::size_t most = (1u << prefix) - 1;
  if (v < most) return std::string(1, static_cast<char>(high | v));
  std::string out(1, static_cast<char>(high | most));
  for (v -= most; v >= 128; v >>= 7) out += static_cast<char>(0x80 | (v & 0x7f));
  return out + static_cast<char>(v);
}

std::string repeated(const std::function<std::string(int)>& frame, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += frame(i);
  return out;
}

std::string ping_flood(int n = kFloodFrames) {
  return repeated([](int i) { return h2_frame(testing::kPing, 0, 0, u32(0) + u32(i)); }, n);
}

struct Row {
  std::string id;
  std::string name;
  std::function<H2Outcome(H2Peer&)> send;
  std::string grpc;      // H2Outcome::answer()
  std::string grpc_tls;  // the same through the TLS relay
};

std::vector<Row> rows() {
  return {
      {"ping_flood", "200,000 PINGs in one write, their ACKs unread until the end",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         p.send(ping_flood());
         return p.outcome(1, milliseconds(3000));
       },
       "no answer", "no answer"},
      {"settings_flood", "200,000 SETTINGS frames, their ACKs unread until the end",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         p.send(repeated(
             [](int) {
               return h2_frame(testing::kSettings, 0, 0, std::string("\0\x4", 2) + u32(65535));
             },
             kFloodFrames));
         return p.outcome(1, milliseconds(3000));
       },
       "no answer", "no answer"},
      {"rapid_reset", "rapid reset: 20,000 HEADERS each followed by RST_STREAM, then a ping",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         std::string burst;
         for (std::uint32_t s = 1; s < 40000; s += 2)
           burst += h2_frame(testing::kHeaders, testing::kEndHeaders, s,
                             p.header_block(grpc_request_headers(kPingMethod))) +
                    h2_frame(testing::kRstStream, 0, s, u32(8));
         p.send(burst);
         // The resets take the server seconds on a loaded machine: the
         // ping waits for them, as long as they take.
         p.send_headers(40001, grpc_request_headers(kPingMethod), false);
         p.send_data(40001, grpc_message(""), true);
         return p.outcome(40001, milliseconds(30000));
       },
       "grpc-status OK", "grpc-status OK"},
      {"continuation_flood", "HEADERS then 100,000 CONTINUATION frames of 16-byte fields",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         std::string burst =
             h2_frame(testing::kHeaders, 0, 1, p.header_block(grpc_request_headers(kPingMethod)));
         for (int i = 0; i < 100000; ++i) {
           const std::string name = "x-" + std::to_string(i);
           burst += h2_frame(testing::kContinuation, 0, 1,
                             std::string(1, '\0') + hpack_int(0, 7, name.size()) + name +
                                 hpack_int(0, 7, 4) + "abcd");
         }
         p.send(burst);
         return p.outcome(1, milliseconds(3000));
       },
       "no answer", "no answer"},
      {"hpack_bomb",
       "HPACK bomb: a 4,000-byte field put in the dynamic table, then indexed 10,000 times in one "
       "block",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         std::string block = p.header_block(grpc_request_headers(kPingMethod));
         block += std::string(1, '\x40') + hpack_int(0, 7, 6) + "x-bomb" + hpack_int(0, 7, 4000) +
                  std::string(4000, 'b');
         block += std::string(10000, '\xbe');  // index 62: the newest entry
         p.send(h2_frame(testing::kHeaders, testing::kEndHeaders, 1, block));
         p.send_data(1, grpc_message(""), true);
         return p.outcome(1, milliseconds(3000));
       },
       "grpc-status RESOURCE_EXHAUSTED, closed", "grpc-status RESOURCE_EXHAUSTED, closed"},
      {"table_size_over_setting", "an HPACK table size update to 1 MiB (over the 4,096 advertised)",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         const std::string block =
             hpack_int(0x20, 5, 1 << 20) + p.header_block(grpc_request_headers(kPingMethod));
         p.send(h2_frame(testing::kHeaders, testing::kEndHeaders, 1, block));
         p.send_data(1, grpc_message(""), true);
         return p.outcome(1, milliseconds(3000));
       },
       "grpc-status UNAVAILABLE, closed", "grpc-status UNAVAILABLE, closed"},
      {"window_overflow", "WINDOW_UPDATE of 2^31-1 on the connection (window past 2^31-1)",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         p.send(h2_frame(testing::kWindowUpdate, 0, 0, u32(0x7fffffff)));
         return p.call(1, kPingMethod, grpc_message(""));
       },
       "grpc-status OK", "grpc-status OK"},
      {"stream_window_overflow", "WINDOW_UPDATE of 2^31-1 on an open stream",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         p.send_headers(1, grpc_request_headers(kPingMethod), false);
         p.send(h2_frame(testing::kWindowUpdate, 0, 1, u32(0x7fffffff)));
         p.send_data(1, grpc_message(""), true);
         return p.outcome(1);
       },
       "grpc-status OK", "grpc-status OK"},
      {"window_zero", "WINDOW_UPDATE of 0 on the connection",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         p.send(h2_frame(testing::kWindowUpdate, 0, 0, u32(0)));
         return p.call(1, kPingMethod, grpc_message(""));
       },
       "closed", "closed"},
      {"window_flood", "200,000 WINDOW_UPDATEs of 1 on the connection, then a ping",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         p.send(repeated([](int) { return h2_frame(testing::kWindowUpdate, 0, 0, u32(1)); },
                         kFloodFrames));
         return p.call(1, kPingMethod, grpc_message(""));
       },
       "grpc-status OK", "grpc-status OK"},
  };
}

class GrpcFlood : public ::testing::TestWithParam<Row> {};

TEST_P(GrpcFlood, GetsItsAnswerAndTheNextClientIsServed) {
  const Row& row = GetParam();
  for (const std::string stack : {"grpc", "grpc-tls"}) {
    SCOPED_TRACE(stack);
    Target target(stack, small_limits());
    {
      H2Peer peer(target.h2());
      const H2Outcome got = row.send(peer);
      EXPECT_EQ(got.answer(), stack == "grpc" ? row.grpc : row.grpc_tls)
          << "grpc-message: " << got.header("grpc-message");
    }
    EXPECT_EQ(find_stack(stack).connect(target.server->endpoint(), "protobuf")->ping(), kPingReply);
  }
}

INSTANTIATE_TEST_SUITE_P(Table, GrpcFlood, ::testing::ValuesIn(rows()),
                         [](const auto& p) { return p.param.id; });

// How much the process's peak RSS grows while a peer that never reads
// sends `bytes` after the SETTINGS exchange: a thread sends them as far as
// the server takes them, for at most 5 s (then its socket is shut, which
// ends a send the server no longer reads).
std::uint64_t peak_growth_bytes(const Target& target, const std::string& bytes, int peers = 1) {
  std::vector<std::unique_ptr<H2Peer>> flooding;
  for (int i = 0; i < peers; ++i) {
    flooding.push_back(std::make_unique<H2Peer>(target.h2()));
    EXPECT_TRUE(flooding.back()->handshake());
  }
  EXPECT_TRUE(testing::reset_peak_rss()) << "cannot reset the peak RSS (/proc/self/clear_refs)";
  const std::uint64_t before_kb = testing::status_kb("VmRSS");
  std::atomic<int> done{0};
  std::vector<std::thread> senders;
  for (auto& peer : flooding)
    senders.emplace_back([&, p = peer.get()] {
      p->send(bytes);
      ++done;
    });
  for (int i = 0; i < 50 && done < peers; ++i) std::this_thread::sleep_for(milliseconds(100));
  std::this_thread::sleep_for(milliseconds(500));  // what is in the sockets gets read
  for (auto& peer : flooding) peer->socket().shutdown_write();
  for (auto& t : senders) t.join();
  const std::uint64_t peak_kb = testing::status_kb("VmHWM");
  return (peak_kb > before_kb ? peak_kb - before_kb : 0) * 1024;
}

// PING floods whose ACKs are never read: 200,000 in one write from one
// peer and from two at once. Before the server set no ping strikes, gRPC
// 1.51's GOAWAY for every PING past the strikes grew the plain server's
// peak RSS by 63-67 MiB for one peer and twice that for two. Each case is
// the first flood its process sees: what an earlier one freed stays
// resident and would hide the next one's growth (ctest runs each test in
// its own process).
struct Flood {
  std::string stack;
  int peers;
};

class GrpcFloodMemory : public ::testing::TestWithParam<Flood> {};

TEST_P(GrpcFloodMemory, APingFloodStaysWithin64MiB) {
  [[maybe_unused]] constexpr std::uint64_t kBound = std::uint64_t{64} << 20;
  const Flood& flood = GetParam();
  Target target(flood.stack, small_limits());
  const std::uint64_t grown = peak_growth_bytes(target, ping_flood(), flood.peers);
  RecordProperty("peak_rss_growth_bytes", std::to_string(grown));
#if !defined(__SANITIZE_ADDRESS__)  // ASan's quarantine keeps freed blocks resident
  EXPECT_LE(grown, kBound) << "peak RSS grew by " << (grown >> 20) << " MiB";
#endif
  EXPECT_EQ(find_stack(flood.stack).connect(target.server->endpoint(), "protobuf")->ping(),
            kPingReply);
}

INSTANTIATE_TEST_SUITE_P(Stacks, GrpcFloodMemory,
                         ::testing::Values(Flood{"grpc", 1}, Flood{"grpc", 2}, Flood{"grpc-tls", 1},
                                           Flood{"grpc-tls", 2}),
                         [](const auto& p) {
                           return (p.param.stack == "grpc" ? std::string("grpc") : "grpc_tls") +
                                  "_peers_" + std::to_string(p.param.peers);
                         });

// ---- docs/servers/hostile-input.md ----

TEST(GrpcFloodDocs, TableIsTheTestTable) {
  std::ostringstream table;
  table << "| class | grpc | grpc-tls |\n|---|---|---|\n";
  for (const Row& row : rows())
    table << "| " << row.name << " | " << row.grpc << " | " << row.grpc_tls << " |\n";
  EXPECT_TRUE(testing::page_holds_table(WSB_SOURCE_DIR "/docs/servers/hostile-input.md",
                                        "### HTTP/2 floods and HPACK abuse\n", table.str()));
}

}  // namespace
}  // namespace wsb
