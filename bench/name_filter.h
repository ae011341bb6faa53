// Google Benchmark's filter as it applies it, for registration choices made
// before it runs: which of a sweep's cases a filter will select.
#pragma once

#include <benchmark/benchmark.h>
#include <regex.h>

#include <string>

namespace wsb::bench {

// A POSIX extended regex searched for in the full name; empty or "all"
// selects everything, a leading '-' negates.
class NameFilter {
 public:
  NameFilter() {
    std::string spec = benchmark::GetBenchmarkFilter();
    if (spec.empty() || spec == "all") spec = ".";
    if (spec.front() == '-') {
      negate_ = true;
      spec.erase(0, 1);
    }
    // A bad regex selects nothing here; Google Benchmark reports it.
    compiled_ = regcomp(&re_, spec.c_str(), REG_EXTENDED | REG_NOSUB) == 0;
  }
  ~NameFilter() {
    if (compiled_) regfree(&re_);
  }
  NameFilter(const NameFilter&) = delete;
  NameFilter& operator=(const NameFilter&) = delete;

  bool selects(const std::string& name) const {
    return compiled_ && (regexec(&re_, name.c_str(), 0, nullptr, 0) == 0) != negate_;
  }

 private:
  regex_t re_{};
  bool compiled_ = false;
  bool negate_ = false;
};

}  // namespace wsb::bench
