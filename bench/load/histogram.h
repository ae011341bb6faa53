// Latency histogram with HdrHistogram's log-linear layout: exact below 256,
// then 128 linear sub-buckets per power of two, so any recorded value is
// known within 1/128 (0.8%) at a fixed 60 KB, whatever the range. Debian
// ships HdrHistogram for Java and Go only, hence this small C++ one.
#pragma once

#include <cstdint>
#include <vector>

namespace wsb::load {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr std::uint64_t kSubBuckets = std::uint64_t{1} << kSubBucketBits;

  Histogram();

  void record(std::uint64_t value);
  void merge(const Histogram& other);

  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ == 0 ? 0 : min_; }
  std::uint64_t max() const { return max_; }
  double mean() const;
  // Sample standard deviation (n - 1), from exact sums; NaN for n < 2.
  double stddev() const;

  // Nearest-rank percentile (0 < percent <= 100) as the highest value its
  // bucket holds (clamped to the largest value recorded), as HdrHistogram
  // reports it; NaN when the count cannot support it
  // (min_samples_for_percentile, harness/stats.h) or is zero.
  double percentile(double percent) const;

  // The bucket of a value and the values a bucket holds (for tests).
  static std::size_t index_of(std::uint64_t value);
  static std::uint64_t lowest_in(std::size_t index);
  static std::uint64_t highest_in(std::size_t index);

 private:
  std::vector<std::uint64_t> buckets_;
  std::uint64_t count_ = 0;
  std::uint64_t min_ = 0, max_ = 0;
  double sum_ = 0, sum_squares_ = 0;
};

}  // namespace wsb::load
