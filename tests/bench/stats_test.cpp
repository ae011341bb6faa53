// The statistics every published figure goes through, against values
// worked out independently: binomial tables for the median's interval
// (Campbell & Gardner, BMJ 1988; Conover, Practical Nonparametric
// Statistics), hand computation for the rest.
#include "harness/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace wsb {
namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

std::vector<double> shuffled(std::vector<double> v) {
  std::mt19937 rng(7);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

TEST(Median, OddTakesTheMiddleEvenAveragesTheTwoMiddle) {
  const std::vector<double> odd = {1, 3, 8};
  const std::vector<double> even = {1, 3, 8, 10};
  EXPECT_EQ(median_of_sorted(odd), 3);
  EXPECT_EQ(median_of_sorted(even), 5.5);
  EXPECT_EQ(median_of_sorted(std::vector<double>{42}), 42);
  EXPECT_TRUE(std::isnan(median_of_sorted({})));
  EXPECT_EQ(summarize(shuffled(one_to(10))).median, 5.5);
  EXPECT_EQ(summarize(std::vector<std::int64_t>{9, 1, 5}).median, 5);
}

// Ranks (lo, hi) of x(lo) <= median <= x(hi) at >= 95%, as tabulated.
TEST(MedianCi, RanksMatchTheBinomialTable) {
  struct Row {
    std::size_t n, lo, hi;
  };
  for (const Row r : {Row{6, 1, 6}, Row{7, 1, 7}, Row{8, 1, 8}, Row{9, 2, 8}, Row{10, 2, 9},
                      Row{20, 6, 15}, Row{30, 10, 21}, Row{50, 18, 33}, Row{100, 40, 61}}) {
    const auto ci = median_ci_ranks(r.n);
    ASSERT_TRUE(ci.has_value()) << "n = " << r.n;
    EXPECT_EQ(ci->lo, r.lo) << "n = " << r.n;
    EXPECT_EQ(ci->hi, r.hi) << "n = " << r.n;
  }
}

// Coverage 1 - 2 P(B <= lo - 1) with the binomial sums done by hand:
// n = 6: 1 - 2/64; n = 10: 1 - 2 (1 + 10)/1024; n = 20: 1 - 2 (1 + 20 +
// 190 + 1140 + 4845 + 15504)/2^20.
TEST(MedianCi, CoverageIsTheExactBinomialProbability) {
  EXPECT_NEAR(median_ci_ranks(6)->coverage, 1 - 2.0 / 64, 1e-12);
  EXPECT_NEAR(median_ci_ranks(10)->coverage, 1 - 22.0 / 1024, 1e-12);
  EXPECT_NEAR(median_ci_ranks(20)->coverage, 1 - 2 * 21700.0 / 1048576, 1e-12);
  EXPECT_NEAR(median_ci_ranks(100)->coverage, 0.9648, 1e-4);
}

TEST(MedianCi, NoNinetyFivePercentIntervalBelowSixSamples) {
  // Even the full range covers only 1 - 2/2^n: 93.75% at n = 5.
  for (std::size_t n = 0; n < 6; ++n) EXPECT_FALSE(median_ci_ranks(n).has_value()) << n;
  const Summary s = summarize(one_to(5));
  EXPECT_TRUE(std::isnan(s.median_ci_lo));
  EXPECT_TRUE(std::isnan(s.median_ci_hi));
  // At 90% the range of 5 does qualify.
  EXPECT_EQ(median_ci_ranks(5, 0.90)->lo, 1u);
}

TEST(MedianCi, LargeSamplesAgreeWithTheNormalApproximation) {
  // n = 10^6: lo = n/2 - 1.96 sqrt(n)/2 = 499020 to within a rank or two;
  // 2^-n underflows here, so this checks the log-space sum.
  const auto ci = median_ci_ranks(1'000'000);
  ASSERT_TRUE(ci.has_value());
  EXPECT_NEAR(static_cast<double>(ci->lo), 499'020, 2);
  EXPECT_EQ(ci->lo + ci->hi, 1'000'001u);
  EXPECT_GE(ci->coverage, 0.95);
  EXPECT_LT(ci->coverage, 0.9502);
}

TEST(MedianCi, SummaryReportsTheOrderStatisticsAtThoseRanks) {
  const Summary ten = summarize(shuffled(one_to(10)));
  EXPECT_EQ(ten.median_ci_lo, 2);
  EXPECT_EQ(ten.median_ci_hi, 9);
  // 100 samples 10, 20, ..., 1000: ranks 40 and 61.
  std::vector<double> hundred = one_to(100);
  for (double& x : hundred) x *= 10;
  const Summary s = summarize(shuffled(hundred));
  EXPECT_EQ(s.median_ci_lo, 400);
  EXPECT_EQ(s.median_ci_hi, 610);
  EXPECT_EQ(s.median, 505);
}

TEST(Percentiles, MinimumSamplesLeaveOneSampleAboveTheRank) {
  EXPECT_EQ(min_samples_for_percentile(50), 2u);
  EXPECT_EQ(min_samples_for_percentile(90), 10u);
  EXPECT_EQ(min_samples_for_percentile(95), 20u);
  EXPECT_EQ(min_samples_for_percentile(99), 100u);
  // Where 100 / (100 - p) is not whole it rounds up: at n = 33, p97's rank
  // ceil(32.01) = 33 would be the maximum; likewise p70 at n = 3.
  EXPECT_EQ(min_samples_for_percentile(97), 34u);
  EXPECT_EQ(min_samples_for_percentile(70), 4u);
  EXPECT_TRUE(std::isnan(percentile_of_sorted(one_to(3), 70)));
  EXPECT_EQ(percentile_of_sorted(one_to(4), 70), 3);
  EXPECT_THROW(min_samples_for_percentile(100), std::invalid_argument);
  EXPECT_THROW(min_samples_for_percentile(0), std::invalid_argument);
}

TEST(Percentiles, NearestRankAndNotReportedBelowTheMinimum) {
  const std::vector<double> nine = one_to(9);
  const std::vector<double> ten = one_to(10);
  EXPECT_TRUE(std::isnan(percentile_of_sorted(nine, 90)));  // would be the max, 9
  EXPECT_EQ(percentile_of_sorted(ten, 90), 9);
  EXPECT_TRUE(std::isnan(percentile_of_sorted(ten, 99)));
  EXPECT_EQ(percentile_of_sorted(one_to(99), 90), 90);  // rank ceil(89.1) = 90
  EXPECT_TRUE(std::isnan(percentile_of_sorted(one_to(99), 99)));
  EXPECT_EQ(percentile_of_sorted(one_to(100), 99), 99);
  EXPECT_EQ(percentile_of_sorted(one_to(100), 90), 90);
  EXPECT_EQ(percentile_of_sorted(one_to(1000), 99), 990);
  EXPECT_EQ(percentile_of_sorted(one_to(1001), 99), 991);  // rank ceil(990.99)

  const Summary small = summarize(one_to(50));
  EXPECT_EQ(small.p90, 45);
  EXPECT_TRUE(std::isnan(small.p99));
  EXPECT_EQ(small.max, 50);
  const Summary large = summarize(shuffled(one_to(200)));
  EXPECT_EQ(large.p90, 180);
  EXPECT_EQ(large.p99, 198);
}

TEST(CoefficientOfVariation, SampleStandardDeviationOverMean) {
  // Mean 5, squared deviations 9+1+1+1+0+0+4+16 = 32, s = sqrt(32/7).
  const std::vector<double> data = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_NEAR(coefficient_of_variation(data), std::sqrt(32.0 / 7) / 5, 1e-15);
  EXPECT_NEAR(coefficient_of_variation(data), 0.427618, 1e-6);
  EXPECT_EQ(coefficient_of_variation(std::vector<double>{3, 3, 3}), 0);
  EXPECT_TRUE(std::isnan(coefficient_of_variation(std::vector<double>{3})));
  EXPECT_TRUE(std::isnan(coefficient_of_variation(std::vector<double>{-1, 1})));
  EXPECT_NEAR(summarize(data).cv, 0.427618, 1e-6);
  EXPECT_EQ(summarize(data).mean, 5);
}

TEST(Summary, EmptyIsAllNotReported) {
  const Summary s = summarize(std::vector<double>{});
  EXPECT_EQ(s.n, 0u);
  for (const double x :
       {s.median, s.median_ci_lo, s.median_ci_hi, s.mean, s.min, s.max, s.cv, s.p90, s.p99})
    EXPECT_TRUE(std::isnan(x));
}

}  // namespace
}  // namespace wsb
