// bench's own core against the faults it guards: a codec and a stack that
// answer wrong (registered here, not in the shipped registries) make their
// cases skip through the real registration instead of being timed; a round
// trip collects its 200 samples; --wire-sizes reports the bytes of a request
// written out here by hand.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_runs.h"
#include "codec_bench.h"
#include "common/codec.h"
#include "common/transport.h"
#include "forwarding_client.h"
#include "rtt_bench.h"

namespace wsb {
namespace {

// The json codec with one fault: decode adds 1 to the first int of an array.
class OffByOneCodec final : public Codec {
 public:
  void encode(const Payload& in, std::string& out) override { json_->encode(in, out); }
  void decode(std::string_view wire, Payload& out) override {
    json_->decode(wire, out);
    if (auto* ints = std::get_if<IntArray>(&out); ints != nullptr && !ints->values.empty())
      ++ints->values.front();
  }
  std::string content_type() const override { return json_->content_type(); }

 private:
  std::unique_ptr<Codec> json_ = find_codec("json").make();
};

// A second decode path of json's bytes (json-simdjson) that drops a field:
// every object's name, as if it skipped the member.
class DropsNameCodec final : public Codec {
 public:
  void encode(const Payload& in, std::string& out) override { simdjson_->encode(in, out); }
  void decode(std::string_view wire, Payload& out) override {
    simdjson_->decode(wire, out);
    if (auto* objects = std::get_if<ObjectArray>(&out))
      for (auto& o : objects->values) o.name.clear();
  }
  std::string content_type() const override { return simdjson_->content_type(); }

 private:
  std::unique_ptr<Codec> simdjson_ = find_codec("json-simdjson").make();
};

// Registered here only: bench's registry never holds them.
const std::vector<CodecEntry>& faulty_codecs() {
  static const std::vector<CodecEntry> codecs = {
      {"off-by-one", "json whose decode gets the first int wrong",
       [] { return std::make_unique<OffByOneCodec>(); }, nullptr},
      {"drops-name", "json-simdjson whose decode drops each object's name",
       [] { return std::make_unique<DropsNameCodec>(); }, nullptr, "json"},
      // Right itself, but beside a primary decode that is wrong.
      {"simdjson-of-off-by-one", "json-simdjson reading off-by-one's bytes",
       find_codec("json-simdjson").make, nullptr, "off-by-one"}};
  return codecs;
}

TEST(FaultyCodec, ItsEncodeAndDecodeCasesSkipWithVerificationFailed) {
  const auto rows = run_cases("^(encode|decode)/off-by-one/ints/200$", [] {
    bench::register_codec_benchmarks(faulty_codecs(), bench::Sweep::standard, Strings::plain, 0,
                                     Allocation::reuse);
  });
  ASSERT_EQ(rows.size(), 4u) << "two cases, two repetitions each";
  for (const auto& row : rows) {
    EXPECT_TRUE(row.skipped) << row.name << " was timed";
    EXPECT_NE(row.message.find("verification failed"), std::string::npos)
        << row.name << ": " << row.message;
  }
}

TEST(FaultyCodec, ADecodePathThatDropsAFieldSkipsWithVerificationFailed) {
  const auto rows = run_cases("^(encode|decode)/drops-name/objects/200$", [] {
    bench::register_codec_benchmarks(faulty_codecs(), bench::Sweep::standard, Strings::plain, 0,
                                     Allocation::reuse);
  });
  ASSERT_EQ(rows.size(), 2u) << "a decode path has decode rows only, two repetitions";
  for (const auto& row : rows) {
    EXPECT_TRUE(row.skipped) << row.name << " was timed";
    EXPECT_NE(row.message.find("verification failed"), std::string::npos)
        << row.name << ": " << row.message;
  }
}

TEST(FaultyCodec, ADecodePathIsCheckedAgainstItsPrimaryCodecsDecode) {
  // json-simdjson decodes right; the primary it is compared with does not.
  const auto rows = run_cases("^decode/(json-simdjson|simdjson-of-off-by-one)/ints/200$", [] {
    bench::register_codec_benchmarks(faulty_codecs(), bench::Sweep::standard, Strings::plain, 0,
                                     Allocation::reuse);
    // Registration keeps references to the entries.
    static const std::vector<CodecEntry> simdjson = {find_codec("json-simdjson")};
    bench::register_codec_benchmarks(simdjson, bench::Sweep::standard, Strings::plain, 0,
                                     Allocation::reuse);
  });
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    if (row.name.find("off-by-one") == std::string::npos) {
      EXPECT_FALSE(row.skipped) << row.name << ": " << row.message;
      continue;
    }
    EXPECT_TRUE(row.skipped) << row.name << " was timed";
    EXPECT_NE(row.message.find("verification failed: the same bytes decode otherwise with "
                               "off-by-one"),
              std::string::npos)
        << row.name << ": " << row.message;
  }
}

const std::vector<StackEntry>& faulty_stacks() {
  static const std::vector<StackEntry> stacks = [] {
    const StackEntry& beast = find_stack("beast");
    return std::vector<StackEntry>{{"one-byte-off",
                                    "beast, every ping reply with its first byte changed",
                                    {"json"},
                                    beast.start_server,
                                    [&beast](const Endpoint& server, const std::string& codec) {
                                      return std::make_unique<testing::OneByteOffPing>(
                                          beast.connect(server, codec));
                                    }}};
  }();
  return stacks;
}

TEST(FaultyStack, ItsRoundTripSkipsWithVerificationFailed) {
  bench::RttOptions options;
  options.stacks = &faulty_stacks();
  // Sized by the pilot, as bench sizes it: the pilot's verification fails
  // first, then the case's own.
  const auto rows = run_cases("^rtt/one-byte-off/json/ping/same",
                              [&] { bench::register_rtt_benchmarks(options); });
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_TRUE(row.skipped) << row.name << " was timed";
    EXPECT_NE(row.message.find("verification failed: ping returned 'qong'"), std::string::npos)
        << row.name << ": " << row.message;
  }
}

// A round trip gets 200 timed calls in every repetition when 2 s allow
// them (docs/servers/README.md, "Calls per repetition"), the fast ones too,
// which min_time alone would leave to the luck of its trials: ping is each
// stack's fastest call.
TEST(RoundTripSamples, EveryRepetitionHasAtLeast200Calls) {
  bench::RttOptions options;
  const auto rows = run_cases("^rtt/(beast/json|gsoap/soap|xmlrpc-c/xmlrpc)/ping/same",
                              [&] { bench::register_rtt_benchmarks(options); });
  ASSERT_EQ(rows.size(), 6u) << "three cases, two repetitions each";
  for (const auto& row : rows) {
    EXPECT_FALSE(row.skipped) << row.name << ": " << row.message;
    EXPECT_GE(row.n, 200) << row.name;
    EXPECT_NE(row.name.find("/iterations:200/"), std::string::npos) << row.name;
  }
}

// beast/json's ping as its client writes it and its server answers,
// counted here by hand. The Host field carries the counting relay's
// ephemeral port: five digits while the kernel's range is (checked below).
constexpr char kPingRequest[] =
    "GET /ping HTTP/1.1\r\n"                                 // 20
    "Host: 127.0.0.1:NNNNN\r\n"                              // 23
    "User-Agent: wsbench-beast\r\n"                          // 27
    "Accept: application/json\r\n"                           // 26
    "\r\n";                                                  // 2: 98 bytes, no body
constexpr char kPingResponseBody[] = "{\"text\":\"pong\"}";  // 15
constexpr char kPingResponse[] =
    "HTTP/1.1 200 OK\r\n"                      // 17
    "Content-Type: application/json\r\n"       // 32
    "Content-Length: 15\r\n"                   // 20
    "Date: Sun, 29 Nov 2026 03:42:37 GMT\r\n"  // 37: IMF-fixdate is fixed-length
    "\r\n"                                     // 2
    "{\"text\":\"pong\"}";                     // 15: 123 bytes

TEST(WireSizes, BeastJsonPingIsTheRequestWrittenOutByHand) {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  ASSERT_TRUE(range >> low >> high);
  if (low < 10000 || high > 99999) GTEST_SKIP() << "ephemeral ports are not all five digits";
  std::vector<StackEntry> beast_json = {find_stack("beast")};
  beast_json.front().codecs = {"json"};
  bench::RttOptions options;
  options.stacks = &beast_json;

  ::testing::internal::CaptureStdout();
  const int status = bench::print_wire_sizes(options);
  const std::string table = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(status, 0) << table;
  // "beast/json  ping  <request> / <its body>  <response> / <its body>"
  std::istringstream lines(table);
  std::string line, who, op, slash;
  std::uint64_t request = 0, request_body = 0, response = 0, response_body = 0;
  while (std::getline(lines, line)) {
    std::istringstream row(line);
    if (row >> who >> op && who == "beast/json" && op == "ping") {
      row >> request >> slash >> request_body >> response >> slash >> response_body;
      break;
    }
  }
  ASSERT_EQ(op, "ping") << table;
  EXPECT_EQ(request, sizeof kPingRequest - 1) << table;
  EXPECT_EQ(request_body, 0u);
  EXPECT_EQ(response, sizeof kPingResponse - 1) << table;
  EXPECT_EQ(response_body, sizeof kPingResponseBody - 1);
}

}  // namespace
}  // namespace wsb
