#include "load/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "harness/stats.h"

namespace wsb::load {
namespace {

constexpr int kExactBits = Histogram::kSubBucketBits + 1;  // values below 256 have a bucket each

// Bits a value is shifted right by to find its sub-bucket.
int shift_of(std::uint64_t value) {
  const int width = std::bit_width(value);
  return width <= kExactBits ? 0 : width - kExactBits;
}

constexpr std::size_t kBucketCount =
    (64 - kExactBits) * Histogram::kSubBuckets + 2 * Histogram::kSubBuckets;

}  // namespace

Histogram::Histogram() : buckets_(kBucketCount, 0) {}

std::size_t Histogram::index_of(std::uint64_t value) {
  const int shift = shift_of(value);
  return static_cast<std::size_t>(shift) * kSubBuckets + (value >> shift);
}

std::uint64_t Histogram::lowest_in(std::size_t index) {
  if (index < 2 * kSubBuckets) return index;
  const std::uint64_t shift = index / kSubBuckets - 1;
  return (index - shift * kSubBuckets) << shift;
}

std::uint64_t Histogram::highest_in(std::size_t index) {
  if (index < 2 * kSubBuckets) return index;
  const std::uint64_t shift = index / kSubBuckets - 1;
  return lowest_in(index) + ((std::uint64_t{1} << shift) - 1);
}

void Histogram::record(std::uint64_t value) {
  ++buckets_[index_of(value)];
  if (count_ == 0 || value < min_) min_ = value;
  if (value > max_) max_ = value;
  ++count_;
  const auto v = static_cast<double>(value);
  sum_ += v;
  sum_squares_ += v * v;
}

void Histogram::merge(const Histogram& other) {
  if (other.count_ == 0) return;
  for (std::size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  if (count_ == 0 || other.min_ < min_) min_ = other.min_;
  if (other.max_ > max_) max_ = other.max_;
  count_ += other.count_;
  sum_ += other.sum_;
  sum_squares_ += other.sum_squares_;
}

double Histogram::mean() const {
  return count_ == 0 ? kNotReported : sum_ / static_cast<double>(count_);
}

double Histogram::stddev() const {
  if (count_ < 2) return kNotReported;
  const auto n = static_cast<double>(count_);
  const double variance = (sum_squares_ - sum_ * sum_ / n) / (n - 1);
  return std::sqrt(variance > 0 ? variance : 0);
}

double Histogram::percentile(double percent) const {
  if (count_ == 0) return kNotReported;
  if (percent < 100) {
    // The stats rule for whole percents, extended: p99.9 needs 1000 samples.
    const double needed = std::ceil(100.0 / (100.0 - percent) - 1e-9);
    if (static_cast<double>(count_) < needed) return kNotReported;
  }
  const auto rank = static_cast<std::uint64_t>(
      std::max(1.0, std::ceil(percent / 100.0 * static_cast<double>(count_) - 1e-9)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) return static_cast<double>(std::min(highest_in(i), max_));
  }
  return static_cast<double>(max_);
}

}  // namespace wsb::load
