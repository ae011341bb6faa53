// Hostile input against the grpc stack's server, one table: each row is a
// class of malformed HTTP/2 or gRPC framing, sent as raw bytes on a TCP
// socket (h2c, prior knowledge) to an in-process server, with the answer
// the server must give: a GOAWAY and its error code, a RST_STREAM, an HTTP
// status or a grpc-status. After each, a new client's ping is answered.
// The "gRPC" table of docs/servers/hostile-input.md is this table; a test
// keeps the two equal.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "common/service.h"
#include "common/transport.h"
#include "docs_table.h"
#include "grpc/grpc_stack.h"
#include "h2_peer.h"
#include "process_memory.h"

namespace wsb {
namespace {

using testing::grpc_message;
using testing::grpc_request_headers;
using testing::h2_frame;
using testing::h2_frame_header;
using testing::H2Outcome;
using testing::H2Peer;
using testing::kEchoMethod;
using testing::kPingMethod;

constexpr char kGrpc[] = "grpc";
// The server's limits in these tests: small, so a row over them is cheap.
constexpr std::size_t kMaxMessage = 4096;
constexpr std::size_t kMaxMetadata = 2048;

ServerOptions small_limits() {
  ServerOptions options;
  options.limits.max_body_bytes = kMaxMessage;
  options.limits.max_header_bytes = kMaxMetadata;
  return options;
}

struct Row {
  std::string id;    // the test's name
  std::string name;  // the docs' wording
  std::function<H2Outcome(H2Peer&)> send;
  std::string answer;  // H2Outcome::answer()
};

// A peer past the SETTINGS exchange.
H2Outcome started(H2Peer& peer, const std::function<void(H2Peer&)>& then,
                  std::uint32_t stream = 1) {
  EXPECT_TRUE(peer.handshake());
  then(peer);
  return peer.outcome(stream);
}

std::vector<Row> rows() {
  return {
      {"bad_preface", "a bad connection preface",
       [](H2Peer& p) {
         p.send("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + h2_frame(testing::kSettings, 0, 0, ""));
         return p.outcome(1);
       },
       "closed"},
      {"http1_request", "an HTTP/1.1 request instead of the preface",
       [](H2Peer& p) {
         p.send("POST /wsbench.Wsbench/Ping HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n");
         p.send(std::string(5, '\0'));
         return p.outcome(1);
       },
       "closed"},
      {"unknown_frame_type", "a frame of unknown type (0xfa), then a ping",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         p.send(h2_frame(0xfa, 0, 0, "whatever this is"));
         p.send(h2_frame(0xfa, 0, 1, "on a stream too"));
         return p.call(1, kPingMethod, grpc_message(""));
       },
       "grpc-status OK"},
      {"frame_over_max_size", "a DATA frame longer than the server's SETTINGS_MAX_FRAME_SIZE",
       [](H2Peer& p) {
         return started(p, [](H2Peer& q) {
           constexpr std::uint16_t kMaxFrameSize = 0x5;
           const std::uint32_t over = q.server_setting(kMaxFrameSize, 16384) + 1;
           q.send_headers(1, grpc_request_headers(kPingMethod), false);
           q.send(h2_frame_header(over, testing::kData, 0, 1) + std::string(1024, 'x'));
         });
       },
       "RST_STREAM PROTOCOL_ERROR, closed"},
      {"settings_bad_length", "a SETTINGS frame of 5 bytes (not a multiple of 6)",
       [](H2Peer& p) {
         return started(p, [](H2Peer& q) { q.send(h2_frame(testing::kSettings, 0, 0, "abcde")); });
       },
       "closed"},
      {"broken_hpack", "HEADERS whose HPACK block indexes past the tables",
       [](H2Peer& p) {
         return started(p, [](H2Peer& q) {
           // An indexed field (0x80 | index) with index 126, beyond the
           // static table's 61 and an empty dynamic table.
           q.send(h2_frame(testing::kHeaders, testing::kEndHeaders, 1, "\xfe"));
         });
       },
       "grpc-status UNAVAILABLE, closed"},
      {"data_on_idle_stream", "DATA on a stream never opened, then a ping on the connection",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         p.send_data(3, grpc_message(""), true);
         return p.call(5, kPingMethod, grpc_message(""));
       },
       "grpc-status OK"},
      {"prefix_beyond_data", "a message prefix claiming 100 bytes, 3 sent, then END_STREAM",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         return p.call(1, kEchoMethod, grpc_message("abc", false, 100));
       },
       "grpc-status INTERNAL"},
      {"prefix_over_limit", "a message prefix claiming 1 GiB (over the limit), 3 bytes sent",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         p.send_headers(1, grpc_request_headers(kEchoMethod), false);
         p.send_data(1, grpc_message("abc", false, 1u << 30), false);
         return p.outcome(1, std::chrono::milliseconds(1000));
       },
       "no answer"},
      {"flood_over_limit",
       "a message prefix claiming 1 GiB, then DATA as fast as the windows open (64 MiB at most)",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         p.send_headers(1, grpc_request_headers(kEchoMethod), false);
         p.send_data(1, grpc_message("", false, 1u << 30), false);
         p.flood(1, std::size_t{64} << 20);
         return p.outcome(1, std::chrono::milliseconds(1000));
       },
       "RST_STREAM ENHANCE_YOUR_CALM"},
      {"compressed_without_encoding", "the compressed flag set without grpc-encoding",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         return p.call(1, kEchoMethod, grpc_message("\x0a\x01x", true));
       },
       "grpc-status OK"},
      {"not_protobuf", "a message that is not protobuf (0xff bytes)",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         return p.call(1, kEchoMethod, grpc_message(std::string(16, '\xff')));
       },
       "grpc-status INTERNAL"},
      {"unknown_method", "an unknown method",
       [](H2Peer& p) {
         EXPECT_TRUE(p.handshake());
         return p.call(1, "/wsbench.Wsbench/Nothing", grpc_message(""));
       },
       "grpc-status UNIMPLEMENTED"},
      {"wrong_content_type", "content-type application/json",
       [](H2Peer& p) {
         return started(p, [](H2Peer& q) {
           auto headers = grpc_request_headers(kPingMethod);
           for (auto& [name, value] : headers)
             if (name == "content-type") value = "application/json";
           q.send_headers(1, headers, false);
           q.send_data(1, grpc_message(""), true);
         });
       },
       "grpc-status OK"},
      {"metadata_over_limit", "a header field longer than max_header_bytes",
       [](H2Peer& p) {
         return started(p, [](H2Peer& q) {
           auto headers = grpc_request_headers(kPingMethod);
           headers.emplace_back("x-big", std::string(2 * kMaxMetadata, 'a'));
           q.send_headers(1, headers, false);
           q.send_data(1, grpc_message(""), true);
         });
       },
       "grpc-status RESOURCE_EXHAUSTED, closed"},
  };
}

class GrpcHostileInput : public ::testing::TestWithParam<Row> {};

TEST_P(GrpcHostileInput, GetsAClearAnswerAndTheNextClientIsServed) {
  const Row& row = GetParam();
  Service service;
  const auto server = find_stack(kGrpc).start_server(service, small_limits());
  {
    H2Peer peer(server->endpoint());
    const H2Outcome got = row.send(peer);
    EXPECT_EQ(got.answer(), row.answer) << "grpc-message: " << got.header("grpc-message");
  }
  EXPECT_EQ(find_stack(kGrpc).connect(server->endpoint(), "protobuf")->ping(), kPingReply);
}

INSTANTIATE_TEST_SUITE_P(Table, GrpcHostileInput, ::testing::ValuesIn(rows()),
                         [](const auto& p) { return p.param.id; });

// The peer itself: a well-formed call through it is answered OK, so a row's
// refusal is the row's bytes, not the peer's framing.
TEST(GrpcHostilePeer, AWellFormedCallIsAnsweredOk) {
  Service service;
  const auto server = find_stack(kGrpc).start_server(service, small_limits());
  H2Peer peer(server->endpoint());
  ASSERT_TRUE(peer.handshake());
  const H2Outcome got = peer.call(1, kPingMethod, grpc_message(""));
  EXPECT_EQ(got.answer(), "grpc-status OK");
  EXPECT_EQ(got.header(":status"), "200");
  EXPECT_EQ(got.header("content-type"), "application/grpc");
  EXPECT_GT(got.data.size(), 5u) << "a reply message after its prefix";
}

// A stream whose prefix claims 1 GiB and whose DATA comes as fast as the
// windows open: the server's transport quota cuts it off (without one,
// gRPC 1.51 took all 256 MiB for a 4 KiB limit), and the process's peak
// RSS grows by no more than the quota and the windows' slack.
TEST(GrpcHostileMemory, AFloodOverTheLimitIsCutOffWithinTheTransportQuota) {
  constexpr std::size_t kTried = std::size_t{256} << 20;
  constexpr std::size_t kSlack = std::size_t{16} << 20;  // windows and read buffers in flight
  Service service;
  const ServerOptions options = small_limits();
  const auto server = find_stack(kGrpc).start_server(service, options);
  const std::size_t quota = grpc_stack::transport_quota(options.limits);
  ASSERT_TRUE(testing::reset_peak_rss()) << "cannot reset the peak RSS (/proc/self/clear_refs)";
  const std::uint64_t before_kb = testing::status_kb("VmRSS");
  {
    H2Peer peer(server->endpoint());
    ASSERT_TRUE(peer.handshake());
    peer.send_headers(1, grpc_request_headers(kEchoMethod), false);
    peer.send_data(1, grpc_message("", false, 1u << 30), false);
    const std::size_t sent = peer.flood(1, kTried);
    RecordProperty("bytes_taken", std::to_string(sent));
    EXPECT_LE(sent, quota + kSlack) << "the server took " << (sent >> 20) << " MiB";
    EXPECT_EQ(peer.outcome(1, std::chrono::milliseconds(1000)).answer(),
              "RST_STREAM ENHANCE_YOUR_CALM");
  }
  const std::uint64_t peak_kb = testing::status_kb("VmHWM");
  const std::uint64_t grown = (peak_kb > before_kb ? peak_kb - before_kb : 0) * 1024;
  RecordProperty("peak_rss_growth_bytes", std::to_string(grown));
#if !defined(__SANITIZE_ADDRESS__)  // ASan's quarantine keeps freed blocks resident
  EXPECT_LE(grown, quota + kSlack) << "peak RSS grew by " << (grown >> 20) << " MiB";
#endif
  EXPECT_EQ(find_stack(kGrpc).connect(server->endpoint(), "protobuf")->ping(), kPingReply);
}

// ---- docs/servers/hostile-input.md ----

std::string docs_table() {
  std::ostringstream out;
  out << "| class | grpc |\n|---|---|\n";
  for (const Row& row : rows()) out << "| " << row.name << " | " << row.answer << " |\n";
  return out.str();
}

TEST(GrpcHostileInputDocs, TableIsTheTestTable) {
  EXPECT_TRUE(testing::page_holds_table(WSB_SOURCE_DIR "/docs/servers/hostile-input.md",
                                        "## gRPC\n", docs_table()));
}

}  // namespace
}  // namespace wsb
