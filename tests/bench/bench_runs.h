// Running bench's cases inside a test: register them as bench does, run
// them with Google Benchmark, and keep what each repetition reported.
#pragma once

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace wsb {

struct Row {
  std::string name;
  bool skipped = false;
  std::string message;
  double n = -1;  // the "n" counter (samples), -1 where the row has none
  std::string label;
  benchmark::UserCounters counters;
};

class RecordingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;  // the aggregates
      const auto n = run.counters.find("n");
      rows.push_back({run.benchmark_name(), run.error_occurred, run.error_message,
                      n == run.counters.end() ? -1.0 : n->second.value, run.report_label,
                      run.counters});
    }
  }
  std::vector<Row> rows;
};

// Registers cases with `register_cases` under `filter` (the round trips'
// pilot reads the filter as it registers) and runs them with bench's
// default min_time and two repetitions.
inline std::vector<Row> run_cases(const std::string& filter,
                                  const std::function<void()>& register_cases) {
  static char program[] = "bench_test";
  static char min_time[] = "--benchmark_min_time=0.03";
  static char repetitions[] = "--benchmark_repetitions=2";
  static const bool initialized = [] {
    char* args[] = {program, min_time, repetitions, nullptr};
    int argc = 3;
    benchmark::Initialize(&argc, args);
    return true;
  }();
  EXPECT_TRUE(initialized);
  benchmark::ClearRegisteredBenchmarks();
  benchmark::SetBenchmarkFilter(filter);
  register_cases();
  RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  return reporter.rows;
}

}  // namespace wsb
