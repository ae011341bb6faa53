// Every fuzz target (fuzz/fuzz_targets.h) over its seeds and its committed
// regression inputs (fuzz/regressions/<target>/), in the ordinary build: an
// input that once crashed a target, or broke its property, fails the tests
// even where clang and libFuzzer are absent.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "common/codec.h"
#include "common/service.h"
#include "fuzz_targets.h"
#include "raw_http.h"
#include "soap/soap_binding.h"
#include "soap/soap_stack.h"
#include "target_parts.h"

namespace wsb::fuzz {
namespace {

std::string read_input(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::filesystem::path regressions(const std::string& target) {
  return std::filesystem::path(WSBENCH_FUZZ_REGRESSIONS) / target;
}

std::vector<std::string> target_names() {
  std::vector<std::string> out;
  for (const auto& target : all_fuzz_targets()) out.push_back(target.name);
  return out;
}

void run_input(const FuzzTarget& target, const std::string& input, const std::string& what) {
  try {
    target.run(input);
  } catch (const std::exception& e) {
    ADD_FAILURE() << target.name << " on " << what << ": " << e.what();
  }
}

class FuzzCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzCorpus, SeedsPass) {
  const FuzzTarget& target = *find_fuzz_target(GetParam());
  const auto seeds = target.seeds();
  EXPECT_FALSE(seeds.empty());
  for (std::size_t i = 0; i < seeds.size(); ++i)
    run_input(target, seeds[i], "seed " + std::to_string(i));
}

TEST_P(FuzzCorpus, RegressionInputsPass) {
  const FuzzTarget& target = *find_fuzz_target(GetParam());
  const std::filesystem::path dir = regressions(target.name);
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no regression inputs in " << dir;
  for (const auto& file : std::filesystem::directory_iterator(dir))
    run_input(target, read_input(file.path()), file.path().filename().string());
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus, ::testing::ValuesIn(target_names()),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (auto& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// The gsoap target's premise: served from memory, the server answers as it
// does over a socket, pipelined calls included, and refuses non-HTTP.
TEST(GsoapFromMemory, AnswersPipelinedCallsInOrder) {
  Service service;
  const auto calls = rpc_requests(find_codec("soap"), "");
  const std::string reply = soap::serve_bytes(service, ServerLimits{}, calls.at(0) + calls.at(0));
  const auto first = reply.find("HTTP/1.1 200 OK");
  ASSERT_NE(first, std::string::npos) << reply;
  EXPECT_NE(reply.find("HTTP/1.1 200 OK", first + 1), std::string::npos) << reply;
  EXPECT_NE(reply.find("pong"), std::string::npos) << reply;
}

TEST(GsoapFromMemory, RefusesGarbageWith400) {
  Service service;
  const std::string reply = soap::serve_bytes(service, ServerLimits{}, "\x01\x02 garbage\r\n\r\n");
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 400")) << reply;
}

// Found by gsoap-request: a multipart body whose MIME boundary gSOAP cannot
// find makes it close the connection, and the fault that followed went
// through gSOAP's I/O without a socket, to the server process's stdout.
TEST(FuzzFindings, GsoapWritesNoReplyToStdout) {
  Service service;
  const auto server = find_stack("gsoap").start_server(service, ServerOptions{});
  const std::string input =
      read_input(regressions("gsoap-request") / "mtom-bad-boundary-reply-to-stdout");
  ASSERT_FALSE(input.empty());
  ::testing::internal::CaptureStdout();
  {
    wsb::testing::RawConnection connection(server->endpoint());
    connection.send(input);
    connection.shutdown_write();
    connection.set_receive_timeout(std::chrono::seconds(5));
    connection.closed_by_server();
  }
  server->stop();
  const std::string written = ::testing::internal::GetCapturedStdout();
  EXPECT_TRUE(written.empty()) << written;
}

// Found by decode-soap-mtom: an empty GML attachment reached memcpy with a
// null source (undefined even for no bytes; UBSan stops on it).
TEST(FuzzFindings, EmptySoapInputTakesNothing) {
  std::string_view empty;
  char buf[8];
  EXPECT_EQ(soap::take_input(empty, buf, sizeof buf), 0u);
}

// Found by decode-protobuf: a NaN coordinate round-trips, yet compared
// unequal to itself, so verification called the payload changed.
TEST(FuzzFindings, NanComesBackAsTheSameValue) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Building building;
  building.height = nan;
  building.footprint = {{nan, 1.0}};
  const Payload sent = BuildingCollection{{building}};
  EXPECT_EQ(describe_difference(sent, sent), "");
  EXPECT_EQ(describe_difference(sent, sent, DoubleFidelity{1e-15, 1e-300}), "");
  Building other = building;
  other.height = 1.0;
  EXPECT_NE(describe_difference(sent, BuildingCollection{{other}}), "");
}

}  // namespace
}  // namespace wsb::fuzz
