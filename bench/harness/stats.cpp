#include "harness/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace wsb {

Percentiles percentiles(std::vector<std::int64_t>& samples) {
  Percentiles p;
  if (samples.empty()) return p;
  std::sort(samples.begin(), samples.end());
  const auto rank = [&](double q) {
    const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples.size())));
    return static_cast<double>(samples[std::clamp<std::size_t>(i, 1, samples.size()) - 1]);
  };
  p.p50 = rank(0.50);
  p.p90 = rank(0.90);
  p.p99 = rank(0.99);
  p.max = static_cast<double>(samples.back());
  p.mean =
      std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  p.count = samples.size();
  return p;
}

}  // namespace wsb
