// What HTTP/1.1 framing costs a server in memory (issue 32, "memory
// bounded for every framing"), on every HTTP/1.1 stack, plaintext and TLS:
// - a chunked body's trailer section, a chunk extension, a chunk-size line
//   and a request line, each sent on for hundreds of MiB without the CRLF
//   that would end it, are refused with the status their limit names and
//   the connection closed, within 1.5 x max_body_bytes + max_header_bytes
//   of peak RSS growth (none of these lines is a body);
// - a body just under max_body_bytes, declared, chunked or with a trailer,
//   is accepted within the same bound (a body buffer that doubles past the
//   limit fails it).
// The refused oversized body is body_memory_test's.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/service.h"
#include "common/transport.h"
#include "padded_calls.h"

namespace wsb {
namespace {

using testing::Framing;
using testing::kMemoryMaxBody;
using testing::kMemoryMaxHeader;
using testing::kRssMeasurable;
using testing::kRssUnderAsan;
using testing::mib;
using testing::PeakRss;
using testing::WireEnd;
using testing::WirePeer;

// What the client sends at most: far past either limit.
constexpr std::size_t kEndless = std::size_t{256} << 20;
constexpr std::size_t kUnit = 64 * 1024;  // sent a unit at a time

enum class Endless { trailer, extension, size_zeros, size_hex, request_line };

struct EndlessCase {
  const char* name;
  Endless kind;
  std::vector<int> statuses;  // the refusals that name the limit
};

const EndlessCase kCases[] = {
    {"trailer", Endless::trailer, {431, 400}},
    {"chunk_extension", Endless::extension, {400, 431}},
    {"chunk_size_zeros", Endless::size_zeros, {400, 431}},
    {"chunk_size_hex", Endless::size_hex, {400, 431}},
    {"request_line", Endless::request_line, {414, 431, 400}},
};

// What precedes the endless part, and the unit it repeats.
struct Attack {
  std::string start;
  std::string unit;
};

Attack attack_of(const std::string& stack, Endless kind) {
  const testing::PaddedCall call = testing::padded_ping(stack);
  // Not empty: a chunk of size 0 would be the last chunk.
  const std::string body =
      call.before.empty() && call.after.empty() ? "x" : call.before + call.after;
  const std::string chunked_head = call.request_line + "\r\nHost: localhost\r\n" + call.fields +
                                   "Transfer-Encoding: chunked\r\n\r\n";
  switch (kind) {
    case Endless::trailer: {
      // A whole chunked body, its last chunk, then 1 KiB field lines.
      std::string lines;
      while (lines.size() < kUnit) lines += "X-T: " + std::string(1017, 'a') + "\r\n";
      return {chunked_head + testing::chunk_size_line(body.size()) + body + "\r\n0\r\n", lines};
    }
    case Endless::extension:
      return {chunked_head + "1;ext=", std::string(kUnit, 'a')};
    case Endless::size_zeros:
      return {chunked_head, std::string(kUnit, '0')};
    case Endless::size_hex:
      return {chunked_head, std::string(kUnit, 'f')};
    case Endless::request_line:
      return {"GET /", std::string(kUnit, 'a')};
  }
  return {};
}

struct Param {
  std::string stack;
  EndlessCase endless;
};

class EndlessFraming : public ::testing::TestWithParam<Param> {};

TEST_P(EndlessFraming, IsRefusedWithinTheBodyAndHeaderLimits) {
  if (!testing::kRssMeasurable) GTEST_SKIP() << testing::kRssUnderAsan;
  const Param& p = GetParam();
  Service service;
  const auto server = find_stack(p.stack).start_server(service, testing::memory_test_options());
  const Attack attack = attack_of(p.stack, p.endless.kind);
  WirePeer peer(server->endpoint(), testing::is_tls_stack(p.stack));
  ASSERT_TRUE(peer.connected());

  const testing::PeakRss rss;
  ASSERT_TRUE(rss.reset()) << "cannot reset the peak RSS (/proc/self/clear_refs)";
  // Sent on until the server answers or stops reading (or all of it).
  std::size_t sent = 0;
  bool open = peer.send(attack.start);
  for (; open && sent < kEndless && !peer.readable(); sent += attack.unit.size())
    open = peer.send(attack.unit);
  WireEnd end;
  const auto reply = peer.read_reply(end);
  const std::uint64_t grown = rss.grown_bytes();
  RecordProperty("peak_rss_growth_bytes", std::to_string(grown));
  RecordProperty("sent_bytes", std::to_string(sent));

  ASSERT_TRUE(reply) << "no reply after " << mib(sent) << ": " << to_string(end);
  std::vector<int> statuses = p.endless.statuses;
  if (p.endless.kind != Endless::request_line && testing::refuses_chunked(p.stack))
    statuses.push_back(testing::kLengthRequired);
  EXPECT_TRUE(std::ranges::find(statuses, reply->status) != statuses.end())
      << "after " << mib(sent) << ": " << reply->head;
  EXPECT_LE(grown, kMemoryMaxBody + kMemoryMaxBody / 2 + kMemoryMaxHeader)
      << "peak RSS grew by " << mib(grown) << " for " << mib(sent) << " of " << p.endless.name;
  std::string rest;
  end = peer.read_to_end(rest);
  EXPECT_NE(end, WireEnd::timeout) << "the connection stays open after the refusal";
  EXPECT_TRUE(testing::serves_ping(p.stack, server->endpoint()));
}

std::vector<Param> params() {
  std::vector<Param> out;
  for (const auto& stack : testing::http1_stacks())
    for (const auto& c : kCases) out.push_back({stack, c});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Stacks, EndlessFraming, ::testing::ValuesIn(params()), [](const auto& p) {
  return testing::stack_test_name(p.param.stack) + "_" + p.param.endless.name;
});

// ---- accepted bodies just under the limit ----

struct AcceptedCase {
  std::string stack;
  Framing framing;
};

constexpr const char* kFramingNames[] = {"declared", "chunked", "chunked_trailer"};

class AcceptedBody : public ::testing::TestWithParam<AcceptedCase> {};

// A ping whose body is the limit less 64 KiB (room for chunk framing,
// whichever way a server counts it): the padding is read and dropped, so
// what the server holds is its framing's buffers.
TEST_P(AcceptedBody, PeaksWithinOneAndAHalfTimesTheLimitAndTheHeader) {
  if (!kRssMeasurable) GTEST_SKIP() << kRssUnderAsan;
  const AcceptedCase& c = GetParam();
  Service service;
  const auto server = find_stack(c.stack).start_server(service, testing::memory_test_options());
  const testing::PaddedCall call = testing::padded_ping(c.stack);
  const std::size_t pad = kMemoryMaxBody - 64 * 1024 - call.before.size() - call.after.size();
  WirePeer peer(server->endpoint(), testing::is_tls_stack(c.stack));
  ASSERT_TRUE(peer.connected());

  const PeakRss rss;
  ASSERT_TRUE(rss.reset()) << "cannot reset the peak RSS (/proc/self/clear_refs)";
  ASSERT_TRUE(testing::send_padded(peer, call, pad, c.framing))
      << "the server stopped reading an accepted body (errno " << peer.send_errno() << ")";
  WireEnd end;
  const auto reply = peer.read_reply(end);
  ASSERT_TRUE(reply) << "no reply: " << to_string(end);
  const bool refused = c.framing != Framing::declared && testing::refuses_chunked(c.stack);
  EXPECT_EQ(reply->status, refused ? testing::kLengthRequired : 200) << reply->head << "\n"
                                                                     << reply->body.substr(0, 300);
  const std::uint64_t grown = rss.grown_bytes();
  RecordProperty("peak_rss_growth_bytes", std::to_string(grown));
  EXPECT_LE(grown, kMemoryMaxBody + kMemoryMaxBody / 2 + kMemoryMaxHeader)
      << "peak RSS grew by " << mib(grown) << " for a body of " << mib(pad) << " (limit "
      << mib(kMemoryMaxBody) << ")";
}

std::vector<AcceptedCase> accepted_cases() {
  std::vector<AcceptedCase> out;
  for (const auto& stack : testing::http1_stacks())
    for (const Framing f : {Framing::declared, Framing::chunked, Framing::chunked_trailer})
      out.push_back({stack, f});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Stacks, AcceptedBody, ::testing::ValuesIn(accepted_cases()),
                         [](const auto& p) {
                           return testing::stack_test_name(p.param.stack) + "_" +
                                  kFramingNames[static_cast<int>(p.param.framing)];
                         });

}  // namespace
}  // namespace wsb
