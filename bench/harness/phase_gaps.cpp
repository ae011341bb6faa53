#include "harness/phase_gaps.h"

#include <algorithm>
#include <cmath>

#include "harness/stats.h"

namespace wsb {

void GapSamples::add(const PhaseCheck& check) {
  gaps_ns_.push_back(static_cast<double>(check.gap_ns));
  shares_.push_back(check.share());
  if (!check.passed) ++failed_;
}

std::vector<std::pair<std::string, double>> GapSamples::counters(const std::string& prefix) const {
  std::vector<std::pair<std::string, double>> out;
  if (gaps_ns_.empty()) return out;
  std::vector<double> gaps = gaps_ns_;
  std::vector<double> shares = shares_;
  std::sort(gaps.begin(), gaps.end());
  std::sort(shares.begin(), shares.end());
  const double n = static_cast<double>(gaps.size());
  const double us = 1e-3;
  const auto add = [&](const char* figure, double value) {
    if (!std::isnan(value)) out.emplace_back(prefix + "_" + figure, value);
  };
  // Nearest rank from below: the p05 of 20 samples would be their minimum.
  add("p05_us", gaps.size() * 5 > 100 ? percentile_of_sorted(gaps, 5) * us : kNotReported);
  add("p50_us", median_of_sorted(gaps) * us);
  add("p95_us", percentile_of_sorted(gaps, 95) * us);
  add("min_us", gaps.front() * us);
  add("max_us", gaps.back() * us);
  add("share_p50", median_of_sorted(shares));
  add("failed", static_cast<double>(failed_) / n);
  return out;
}

}  // namespace wsb
