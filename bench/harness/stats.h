// Statistics over samples (per-iteration times, per-repetition results).
// A figure the sample count cannot support is NaN ("not reported"), never
// a stand-in: a p99 of 50 samples would only be their maximum renamed.
// scripts/summarize.py applies the same rules to repetitions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace wsb {

inline constexpr double kNotReported = std::numeric_limits<double>::quiet_NaN();

// The middle sample, or the mean of the two middle ones; NaN when empty.
double median_of_sorted(std::span<const double> sorted);

// Distribution-free confidence interval of the median: the order
// statistics x(lo) <= median <= x(hi) (1-based ranks, hi = n + 1 - lo)
// hold with probability coverage = 1 - 2 P(B <= lo - 1), B ~ Binomial(n,
// 1/2), for any continuous distribution of independent samples. lo is the
// largest rank with coverage >= confidence; nullopt when even the range
// (lo = 1) falls short, i.e. n < 6 at 95%.
struct RankInterval {
  std::size_t lo = 0, hi = 0;
  double coverage = 0;
};
std::optional<RankInterval> median_ci_ranks(std::size_t n, double confidence = 0.95);

// The samples a nearest-rank percentile needs: n >= 100 / (100 - percent)
// (p50: 2, p90: 10, p99: 100). From there on its rank ceil(percent * n /
// 100) is below n, so at least one sample lies above it; with fewer it
// would be the maximum under another name.
std::size_t min_samples_for_percentile(int percent);

// Nearest-rank percentile (the smallest sample with at least `percent`% of
// the samples at or below it), percent in 1..99; NaN when there are fewer
// samples than min_samples_for_percentile(percent).
double percentile_of_sorted(std::span<const double> sorted, int percent);

// Sample standard deviation (n - 1) over the mean; NaN for n < 2 or a mean
// that is not positive (times and sizes are).
double coefficient_of_variation(std::span<const double> samples);

struct Summary {
  std::size_t n = 0;
  double median = kNotReported;
  double median_ci_lo = kNotReported, median_ci_hi = kNotReported;  // 95%
  double mean = kNotReported, min = kNotReported, max = kNotReported;
  double cv = kNotReported;
  double p90 = kNotReported, p99 = kNotReported;
};
Summary summarize(std::vector<double> samples);
Summary summarize(const std::vector<std::int64_t>& samples);

}  // namespace wsb
