// Order statistics over per-iteration samples.
#pragma once

#include <cstdint>
#include <vector>

namespace wsb {

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  std::size_t count = 0;
};

// Nearest-rank percentiles; sorts `samples` in place. All zero when empty.
Percentiles percentiles(std::vector<std::int64_t>& samples);

}  // namespace wsb
