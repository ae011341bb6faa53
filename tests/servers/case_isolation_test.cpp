// A round-trip case leaves the process as it found it: no server threads,
// no sockets, the thread's CPU mask restored, so the next case (codec or
// round trip) starts from the same state whatever ran before it.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "harness/process_state.h"
#include "rtt_bench.h"

namespace wsb {

void PrintTo(const ProcessState& s, std::ostream* os) { *os << s.describe(); }

namespace {

class RecordingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs)
      if (run.error_occurred) errors.push_back(run.benchmark_name() + ": " + run.error_message);
  }
  std::vector<std::string> errors;
};

TEST(CaseIsolation, RoundTripCasesLeaveThreadsDescriptorsAndAffinityAsFound) {
  const ProcessState before = ProcessState::now();
  std::string program = "case_isolation_test";
  std::string filter = "--benchmark_filter=^rtt/(beast/json|gsoap/soap|xmlrpc-c/xmlrpc)/ping/same";
  std::vector<char*> args = {program.data(), filter.data(), nullptr};
  int argc = 2;
  benchmark::Initialize(&argc, args.data());
  bench::RttOptions options;
  options.iterations = 20;
  bench::register_rtt_benchmarks(options);

  RecordingReporter reporter;
  EXPECT_EQ(benchmark::RunSpecifiedBenchmarks(&reporter), 3u);
  EXPECT_TRUE(reporter.errors.empty()) << reporter.errors.front();
  // Checked at once: the case itself waits until its server is gone.
  EXPECT_EQ(ProcessState::now(), before);
}

}  // namespace
}  // namespace wsb
