// The per-call gaps of one phase check over a bench row (common/phases.h,
// docs/methodology.md, "Phases"): their distribution, sign kept, never a mean, in which
// gaps of opposite sign would cancel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/phases.h"

namespace wsb {

class GapSamples {
 public:
  void add(const PhaseCheck& check);
  std::size_t size() const { return gaps_ns_.size(); }

  // The row's counters, named <prefix>_<figure>: p05_us, p50_us, p95_us,
  // min_us, max_us (the gap), share_p50 (the median of gap / measured
  // time) and failed (the fraction of calls outside the tolerance, 0 when
  // none). None without samples; a percentile the count cannot support is
  // left out as stats.h leaves it out (p05 and p95 need a sample beyond
  // them: n >= 21 and n >= 20).
  std::vector<std::pair<std::string, double>> counters(const std::string& prefix) const;

 private:
  std::vector<double> gaps_ns_;
  std::vector<double> shares_;
  std::size_t failed_ = 0;
};

}  // namespace wsb
