// A round-trip case leaves the process as it found it: no server threads,
// no sockets, the thread's CPU mask restored, so the next case (codec or
// round trip) starts from the same state whatever ran before it.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "harness/process_state.h"
#include "rtt_bench.h"
#include "rtt_internal.h"

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

// Registers the round-trip cases `filter` selects, as bench does (their
// pilots depend on the filter), in place of any earlier test's, and runs
// them for 20 iterations each; returns how many ran.
std::size_t run_rtt_cases(const std::string& filter, RecordingReporter& reporter,
                          const std::vector<StackEntry>* stacks = nullptr) {
  std::string program = "case_isolation_test";
  std::string flag = "--benchmark_filter=" + filter;
  std::vector<char*> args = {program.data(), flag.data(), nullptr};
  int argc = 2;
  benchmark::Initialize(&argc, args.data());
  benchmark::ClearRegisteredBenchmarks();
  bench::RttOptions options;
  options.iterations = 20;
  options.stacks = stacks;
  bench::register_rtt_benchmarks(options);
  return benchmark::RunSpecifiedBenchmarks(&reporter);
}

TEST(CaseIsolation, RoundTripCasesLeaveThreadsDescriptorsAndAffinityAsFound) {
  const ProcessState before = ProcessState::now();
  RecordingReporter reporter;
  EXPECT_EQ(run_rtt_cases("^rtt/(beast/json|gsoap/soap|xmlrpc-c/xmlrpc)/ping/same", reporter), 3u);
  EXPECT_TRUE(reporter.errors.empty()) << reporter.errors.front();
  // Checked at once: the case itself waits until its server is gone.
  EXPECT_EQ(ProcessState::now(), before);
}

// TLS and new-connection rows: a connection per call ends in TIME_WAIT,
// which holds no descriptor, and the server's sessions end with their
// connections; nothing is reported and the process is left as found.
TEST(CaseIsolation, TlsAndNewConnectionCasesLeaveTheProcessAsFound) {
  testing::internal::CaptureStderr();
  const ProcessState before = ProcessState::now();
  RecordingReporter reporter;
  EXPECT_EQ(run_rtt_cases("^rtt/beast(-tls)?/json/(ping|echo/message-a/100)(/new-connection)?/same",
                          reporter),
            8u);
  const ProcessState after = ProcessState::now();
  const std::string diagnostics = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(reporter.errors.empty()) << reporter.errors.front();
  EXPECT_EQ(diagnostics.find("not released"), std::string::npos) << diagnostics;
  EXPECT_EQ(after, before);
}

// A thread-per-connection server (gSOAP's) under new-connection rows: each
// call's server thread has ended by the case's end, so its server is back
// to idle. The rows exist beside a TLS variant; a stand-in named
// gsoap-tls (gSOAP itself) makes the case table add them.
TEST(CaseIsolation, NewConnectionRowsOfAThreadPerConnectionServerLeaveItIdle) {
  testing::internal::CaptureStderr();
  const ProcessState before = ProcessState::now();
  StackEntry variant = find_stack("gsoap");
  variant.name = "gsoap-tls";
  const std::vector<StackEntry> stacks = {find_stack("gsoap"), variant};
  RecordingReporter reporter;
  EXPECT_EQ(run_rtt_cases("^rtt/gsoap/soap/(ping|echo/message-a/100)/new-connection/same", reporter,
                          &stacks),
            2u);
  const ProcessState after = ProcessState::now();
  const std::string diagnostics = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(reporter.errors.empty()) << reporter.errors.front();
  EXPECT_EQ(diagnostics.find("not released"), std::string::npos) << diagnostics;
  EXPECT_EQ(after, before);
}

// The negotiation check before timing, failing: a "-tls" stack whose
// server and client speak plaintext has no ServerHello on its connection,
// and its row fails verification instead of being timed. (A server
// configured to another suite or group: tests/bench/tls_floor_test.cpp.)
TEST(CaseIsolation, ATlsRowWithoutTlsFailsVerification) {
  StackEntry fake = find_stack("beast");
  fake.name = "beast-tls";
  fake.codecs = {"json"};
  const std::vector<StackEntry> stacks = {fake};
  RecordingReporter reporter;
  EXPECT_EQ(run_rtt_cases("^rtt/beast-tls/json/ping/same", reporter, &stacks), 1u);
  ASSERT_EQ(reporter.errors.size(), 1u);
  EXPECT_NE(reporter.errors.front().find("verification failed: no TLS ServerHello"),
            std::string::npos)
      << reporter.errors.front();
}

// E8's define and put: Beast's I/O thread keeps its SQLite connection to
// the dictionary until the server stops (gSOAP's and Abyss's connection
// threads end with their connections); none of it is a leak, so nothing
// is reported, and the process is left as found.
TEST(CaseIsolation, DictionaryCasesReportNothingAndLeaveTheProcessAsFound) {
  testing::internal::CaptureStderr();
  const ProcessState before = ProcessState::now();
  RecordingReporter reporter;
  // Both operations on gSOAP, xmlrpc-c and at least one Beast codec.
  EXPECT_GE(
      run_rtt_cases("^rtt/(beast/[^/]+|gsoap/soap|xmlrpc-c/xmlrpc)/(define|put)/x1/same", reporter),
      6u);
  const ProcessState after = ProcessState::now();
  const std::string diagnostics = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(reporter.errors.empty()) << reporter.errors.front();
  EXPECT_EQ(diagnostics.find("not released"), std::string::npos) << diagnostics;
  EXPECT_EQ(after, before);
}

// The check still sees real leaks in a dictionary case: a descriptor on
// the dictionary's file that no connection holds outlives the server (the
// process check counts it), and a socket outlives the case's connections.
TEST(CaseIsolation, LeaksInADictionaryCaseAreReported) {
  bench::RttOptions options;
  bench::rtt::init_pool(options);
  const bench::rtt::RttCase c{&find_stack("beast"), "json", bench::rtt::Op::define, {}, 0,
                              Placement::same,      1};

  testing::internal::CaptureStderr();
  int file = -1;
  {
    const bench::rtt::CaseScope scope(c);
    file = ::open(bench::rtt::pool->service().dictionary().path().c_str(), O_RDONLY | O_CLOEXEC);
  }
  std::string diagnostics = testing::internal::GetCapturedStderr();
  ASSERT_GE(file, 0);
  ::close(file);
  EXPECT_EQ(diagnostics.find("its connections not released"), std::string::npos) << diagnostics;
  EXPECT_NE(diagnostics.find("rtt/beast/json/define/x1/same: the process not released"),
            std::string::npos)
      << diagnostics;

  testing::internal::CaptureStderr();
  int socket = -1;
  {
    const bench::rtt::CaseScope scope(c);
    socket = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  }
  diagnostics = testing::internal::GetCapturedStderr();
  ASSERT_GE(socket, 0);
  ::close(socket);
  EXPECT_NE(diagnostics.find("its connections not released"), std::string::npos) << diagnostics;
  EXPECT_NE(diagnostics.find("the process not released"), std::string::npos) << diagnostics;
}

// A stack whose library sizes its own thread pool by load (gRPC's): a
// thread it keeps is not its connections' leak, yet the process check,
// after the server stops, still counts every thread; a socket stays a leak
// of the connections either way.
TEST(CaseIsolation, PooledThreadsAreCountedOnlyOnceTheServerStops) {
  bench::RttOptions options;
  bench::rtt::init_pool(options);
  for (const bool pooled : {true, false}) {
    SCOPED_TRACE(pooled ? "library_thread_pool" : "threads counted");
    StackEntry stack = find_stack("beast");
    stack.library_thread_pool = pooled;
    const bench::rtt::RttCase c{&stack, "json", bench::rtt::Op::ping, {}, 0, Placement::same, 1};

    testing::internal::CaptureStderr();
    std::promise<void> release;
    std::thread kept;
    {
      const bench::rtt::CaseScope scope(c);
      kept = std::thread([done = release.get_future()] { done.wait(); });
    }
    std::string diagnostics = testing::internal::GetCapturedStderr();
    release.set_value();
    kept.join();
    EXPECT_EQ(diagnostics.find("its connections not released") == std::string::npos, pooled)
        << diagnostics;
    EXPECT_NE(diagnostics.find("the process not released"), std::string::npos) << diagnostics;

    testing::internal::CaptureStderr();
    int socket = -1;
    {
      const bench::rtt::CaseScope scope(c);
      socket = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    }
    diagnostics = testing::internal::GetCapturedStderr();
    ASSERT_GE(socket, 0);
    ::close(socket);
    EXPECT_NE(diagnostics.find("its connections not released"), std::string::npos) << diagnostics;
  }
}

}  // namespace
}  // namespace wsb
