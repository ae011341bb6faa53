#include "harness/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace wsb {

double median_of_sorted(std::span<const double> sorted) {
  const std::size_t n = sorted.size();
  if (n == 0) return kNotReported;
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

std::optional<RankInterval> median_ci_ranks(std::size_t n, double confidence) {
  if (n == 0 || !(confidence > 0 && confidence < 1)) return std::nullopt;
  const double alpha = 1 - confidence;
  const auto nd = static_cast<double>(n);
  // P(B = k) in log space: 2^-n underflows from n = 1075 on. Terms more
  // than 10 sqrt(n) (20 standard deviations) below n/2 are below e^-200
  // and left out, which keeps large n cheap.
  const double log_norm = std::lgamma(nd + 1) - nd * std::log(2.0);
  const double start = std::max(0.0, std::floor(nd / 2 - 10 * std::sqrt(nd)));
  double cdf = 0;  // P(B <= k - 1)
  std::optional<RankInterval> best;
  for (auto k = static_cast<std::size_t>(start); k <= n / 2; ++k) {
    const auto kd = static_cast<double>(k);
    cdf += std::exp(log_norm - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1));
    // cdf is now P(B <= k): rank lo = k + 1 holds if 2 P(B <= lo - 1) <= alpha.
    if (2 * cdf > alpha) break;
    best = RankInterval{k + 1, n - k, 1 - 2 * cdf};
  }
  return best;
}

std::size_t min_samples_for_percentile(int percent) {
  if (percent <= 0 || percent >= 100) throw std::invalid_argument("percentile must be in 1..99");
  const auto above = static_cast<std::size_t>(100 - percent);
  return (100 + above - 1) / above;
}

double percentile_of_sorted(std::span<const double> sorted, int percent) {
  const std::size_t n = sorted.size();
  if (n < min_samples_for_percentile(percent)) return kNotReported;
  const std::size_t rank = (static_cast<std::size_t>(percent) * n + 99) / 100;  // ceil(p n / 100)
  return sorted[rank - 1];
}

double coefficient_of_variation(std::span<const double> samples) {
  const std::size_t n = samples.size();
  if (n < 2) return kNotReported;
  const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  if (!(mean > 0)) return kNotReported;
  double squares = 0;
  for (const double x : samples) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / static_cast<double>(n - 1)) / mean;
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.median = median_of_sorted(samples);
  if (const auto ci = median_ci_ranks(s.n)) {
    s.median_ci_lo = samples[ci->lo - 1];
    s.median_ci_hi = samples[ci->hi - 1];
  }
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.n);
  s.min = samples.front();
  s.max = samples.back();
  s.cv = coefficient_of_variation(samples);
  s.p90 = percentile_of_sorted(samples, 90);
  s.p99 = percentile_of_sorted(samples, 99);
  return s;
}

Summary summarize(const std::vector<std::int64_t>& samples) {
  return summarize(std::vector<double>(samples.begin(), samples.end()));
}

}  // namespace wsb
