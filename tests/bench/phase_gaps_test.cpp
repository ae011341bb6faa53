// The gap distribution a bench row reports (harness/phase_gaps.h) on known
// gaps, fed through the real check so the tolerance is the bench's.
#include "harness/phase_gaps.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace wsb {
namespace {

// A call measured at `measured_ns` whose one phase leaves `gap_ns`.
PhaseCheck call(std::int64_t measured_ns, std::int64_t gap_ns) {
  return *check_round_trip({{"phase", measured_ns - gap_ns}}, measured_ns);
}

std::map<std::string, double> counters(const GapSamples& gaps) {
  std::map<std::string, double> out;
  for (const auto& [name, value] : gaps.counters("phase_gap")) out[name] = value;
  return out;
}

TEST(PhaseGaps, DistributionOfKnownGaps) {
  // Gaps of 0.1, 0.2, ..., 10 us in calls of 10 us: the tolerance is 1 us,
  // so the 90 gaps above it fail.
  GapSamples gaps;
  for (int i = 100; i >= 1; --i) gaps.add(call(10'000, i * 100));
  const auto c = counters(gaps);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_p05_us"), 0.5);   // rank 5
  EXPECT_DOUBLE_EQ(c.at("phase_gap_p50_us"), 5.05);  // mean of ranks 50 and 51
  EXPECT_DOUBLE_EQ(c.at("phase_gap_p95_us"), 9.5);   // rank 95
  EXPECT_DOUBLE_EQ(c.at("phase_gap_min_us"), 0.1);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_max_us"), 10.0);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_share_p50"), 0.505);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_failed"), 0.9);
  EXPECT_EQ(c.size(), 7u);
}

TEST(PhaseGaps, OppositeSignsDoNotCancel) {
  // Half the calls miss 3 us, half count 3 us twice: their mean is 0.
  GapSamples gaps;
  for (int i = 0; i < 20; ++i) gaps.add(call(20'000, i % 2 == 0 ? 3'000 : -3'000));
  const auto c = counters(gaps);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_min_us"), -3.0);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_max_us"), 3.0);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_p95_us"), 3.0);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_failed"), 1.0) << "every call is off by 3 us";
}

TEST(PhaseGaps, SignAndShareOfEachCall) {
  GapSamples gaps;
  gaps.add(call(100'000, -10'000));
  gaps.add(call(100'000, -20'000));
  gaps.add(call(200'000, 2'000));
  const auto c = counters(gaps);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_p50_us"), -10.0);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_share_p50"), -0.1);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_failed"), 2.0 / 3.0);
}

TEST(PhaseGaps, FailedIsThereWhenNoneFailed) {
  GapSamples gaps;
  gaps.add(call(10'000, 200));
  const auto c = counters(gaps);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_failed"), 0.0);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_p50_us"), 0.2);
}

TEST(PhaseGaps, PercentilesNeedASampleBeyondThem) {
  GapSamples gaps;
  for (int i = 1; i <= 20; ++i) gaps.add(call(10'000, i));
  auto c = counters(gaps);
  EXPECT_FALSE(c.contains("phase_gap_p05_us")) << "of 20 it is the minimum";
  EXPECT_DOUBLE_EQ(c.at("phase_gap_p95_us"), 0.019);
  gaps.add(call(10'000, 21));
  c = counters(gaps);
  EXPECT_DOUBLE_EQ(c.at("phase_gap_p05_us"), 0.002);
  GapSamples two;
  two.add(call(10'000, 1));
  two.add(call(10'000, 2));
  c = counters(two);
  EXPECT_FALSE(c.contains("phase_gap_p95_us"));
  EXPECT_TRUE(c.contains("phase_gap_p50_us"));
  EXPECT_TRUE(GapSamples{}.counters("phase_gap").empty());
}

}  // namespace
}  // namespace wsb
