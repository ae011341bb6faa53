// The round-trip rows of the codec library alternatives (xml-unwrapped,
// json-simdjson on beast): they exist in the full sweep only, their replies
// are verified (a client that corrupts one makes the row skip), and
// message-b's REST XML request is shorter unwrapped by exactly the CRLFs
// libxml2 puts in its base64.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "bench_runs.h"
#include "common/codec.h"
#include "common/transport.h"
#include "forwarding_client.h"
#include "rtt_bench.h"

namespace wsb {
namespace {

// message-b's attachment: 131,072 bytes are 174,764 base64 characters in
// 2,428 lines of at most 72, so libxml2 writes 2,427 CRLFs.
constexpr double kLineBreakBytes = 2 * 2427;

std::vector<StackEntry> beast_with(std::vector<std::string> codecs) {
  std::vector<StackEntry> stacks = {find_stack("beast")};
  stacks.front().codecs = std::move(codecs);
  return stacks;
}

double counter(const Row& row, const char* name) {
  const auto it = row.counters.find(name);
  return it == row.counters.end() ? -1.0 : it->second.value;
}

TEST(CodecAlternativeRows, BeastCarriesThemInTheFullSweepOnly) {
  const auto& beast = find_stack("beast").codecs;
  for (const char* codec : {"xml-unwrapped", "json-simdjson"})
    EXPECT_NE(std::find(beast.begin(), beast.end(), codec), beast.end()) << codec;
  EXPECT_EQ(std::find(beast.begin(), beast.end(), "xml-dom"), beast.end());
  const auto stacks = beast_with({"json", "json-simdjson", "xml-unwrapped"});
  bench::RttOptions options;
  options.iterations = 5;
  options.stacks = &stacks;
  // The filter names json's standard ping too, so the standard sweep is
  // not widened to the full one.
  for (const bench::Sweep sweep : {bench::Sweep::standard, bench::Sweep::full}) {
    options.sweep = sweep;
    const auto rows = run_cases("^rtt/beast/(json|json-simdjson|xml-unwrapped)/ping/same",
                                [&] { bench::register_rtt_benchmarks(options); });
    std::size_t alternative = 0;
    for (const auto& row : rows) {
      EXPECT_FALSE(row.skipped) << row.name << ": " << row.message;
      if (row.name.find("/json/") == std::string::npos) ++alternative;
    }
    EXPECT_EQ(alternative, sweep == bench::Sweep::full ? 4u : 0u)
        << "two cases, two repetitions each";
  }
}

// Echo sends message-b and checks the reply decoded; both directions carry
// the attachment, so both bodies lose the line breaks.
TEST(CodecAlternativeRows, MessageBEchoIsVerifiedAndUnwrappedIsShorterByTheLineBreaks) {
  const auto stacks = beast_with({"xml", "xml-unwrapped", "json", "json-simdjson"});
  bench::RttOptions options;
  options.sweep = bench::Sweep::full;
  options.iterations = 20;
  options.stacks = &stacks;
  const auto rows = run_cases("^rtt/beast/(xml|xml-unwrapped|json|json-simdjson)/echo/message-b/",
                              [&] { bench::register_rtt_benchmarks(options); });
  ASSERT_EQ(rows.size(), 8u) << "four cases, two repetitions each";
  std::map<std::string, const Row*> by_codec;
  for (const auto& row : rows) {
    EXPECT_FALSE(row.skipped) << row.name << ": " << row.message;
    by_codec[row.name.substr(std::string("rtt/beast/").size(),
                             row.name.find("/echo/") - std::string("rtt/beast/").size())] = &row;
  }
  ASSERT_EQ(by_codec.size(), 4u);
  const Row& xml = *by_codec["xml"];
  const Row& unwrapped = *by_codec["xml-unwrapped"];
  EXPECT_EQ(counter(xml, "request_body_bytes") - counter(unwrapped, "request_body_bytes"),
            kLineBreakBytes);
  EXPECT_EQ(counter(xml, "response_body_bytes") - counter(unwrapped, "response_body_bytes"),
            kLineBreakBytes);
  // simdjson reads RapidJSON's bytes: the bodies are json's.
  EXPECT_EQ(counter(*by_codec["json"], "request_body_bytes"),
            counter(*by_codec["json-simdjson"], "request_body_bytes"));
  EXPECT_GT(counter(xml, "request_body_bytes"), 0.0);
}

// A client with one fault: the echoed attachment comes back with its first
// byte changed.
class AttachmentOffByOne final : public testing::ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;
  void echo(const Payload& in, Payload& out) override {
    inner().echo(in, out);
    if (auto* m = std::get_if<Message>(&out); m != nullptr && !m->attachment.empty())
      m->attachment.front() ^= 0x01;
  }
};

TEST(CodecAlternativeRows, ACorruptedReplySkipsTheRowWithVerificationFailed) {
  static const std::vector<StackEntry> stacks = [] {
    const StackEntry& beast = find_stack("beast");
    return std::vector<StackEntry>{{"attachment-off",
                                    "beast, every echoed attachment with its first byte changed",
                                    {"xml-unwrapped", "json-simdjson"},
                                    beast.start_server,
                                    [&beast](const Endpoint& server, const std::string& codec) {
                                      return std::make_unique<AttachmentOffByOne>(
                                          beast.connect(server, codec));
                                    }}};
  }();
  bench::RttOptions options;
  options.sweep = bench::Sweep::full;
  options.iterations = 5;
  options.stacks = &stacks;
  const auto rows = run_cases("^rtt/attachment-off/[^/]+/echo/message-b/",
                              [&] { bench::register_rtt_benchmarks(options); });
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    EXPECT_TRUE(row.skipped) << row.name << " was timed";
    EXPECT_NE(row.message.find("verification failed"), std::string::npos)
        << row.name << ": " << row.message;
  }
}

}  // namespace
}  // namespace wsb
