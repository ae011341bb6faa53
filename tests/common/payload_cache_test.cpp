// The service's bounded payload cache: least recently used eviction within
// a byte and an entry budget, oversized payloads served but not kept, and
// payloads that outlive their eviction.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "common/payload.h"
#include "common/service.h"

namespace wsb {
namespace {

PayloadSpec binary(std::size_t n) { return PayloadSpec{Kind::binary, n}; }

TEST(PayloadCache, RepeatedGetsShareOnePayload) {
  PayloadCache cache(1000, 10);
  const auto first = cache.get(binary(100));
  EXPECT_EQ(cache.get(binary(100)), first);
  EXPECT_EQ(cache.cached_bytes(), 100u);
  EXPECT_EQ(cache.cached_entries(), 1u);
}

TEST(PayloadCache, EvictsLeastRecentlyUsedWithinTheByteBudget) {
  PayloadCache cache(300, 10);
  cache.get(binary(100));
  cache.get(binary(101));
  cache.get(binary(100));  // now 101 is the least recently used
  const auto kept = cache.get(binary(100));
  cache.get(binary(99));  // 300 bytes: fits exactly
  EXPECT_EQ(cache.cached_bytes(), 300u);
  cache.get(binary(50));  // 350 > 300: 101 goes, 100 stays
  EXPECT_FALSE(cache.contains(binary(101).label()));
  EXPECT_TRUE(cache.contains(binary(100).label()));
  EXPECT_TRUE(cache.contains(binary(99).label()));
  EXPECT_TRUE(cache.contains(binary(50).label()));
  EXPECT_EQ(cache.cached_bytes(), 249u);
  EXPECT_EQ(cache.get(binary(100)), kept);
}

TEST(PayloadCache, EvictsBeyondTheEntryBudget) {
  PayloadCache cache(1'000'000, 2);
  cache.get(binary(1));
  cache.get(binary(2));
  cache.get(binary(3));
  EXPECT_EQ(cache.cached_entries(), 2u);
  EXPECT_FALSE(cache.contains(binary(1).label()));
  EXPECT_EQ(cache.cached_bytes(), 5u);
}

TEST(PayloadCache, PayloadLargerThanTheBudgetIsServedButNotKept) {
  PayloadCache cache(100, 10);
  cache.get(binary(60));
  const auto big = cache.get(binary(1000));
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(raw_size(*big), 1000u);
  EXPECT_EQ(*big, generate(binary(1000)));
  EXPECT_FALSE(cache.contains(binary(1000).label()));
  EXPECT_TRUE(cache.contains(binary(60).label())) << "nothing evicted for it";
  EXPECT_EQ(cache.cached_bytes(), 60u);
}

TEST(PayloadCache, EvictedPayloadStaysValidForItsHolder) {
  PayloadCache cache(100, 10);
  const auto held = cache.get(binary(80));
  cache.get(binary(90));
  EXPECT_FALSE(cache.contains(binary(80).label()));
  EXPECT_EQ(*held, generate(binary(80)));
}

TEST(PayloadCache, ConcurrentGetsStayWithinBudget) {
  constexpr std::size_t kBudget = 4096;
  PayloadCache cache(kBudget, 16);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&cache, t] {
      for (std::size_t i = 0; i < 300; ++i) {
        const auto spec = binary(100 + (i * 7 + static_cast<std::size_t>(t)) % 40);
        const auto p = cache.get(spec);
        ASSERT_EQ(raw_size(*p), spec.n);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_LE(cache.cached_bytes(), kBudget);
  EXPECT_LE(cache.cached_entries(), 16u);
}

TEST(PayloadCache, ServiceUsesItsLimits) {
  ServiceLimits limits;
  limits.max_cached_payload_bytes = 1000;
  Service service(limits);
  for (std::size_t n = 100; n < 140; ++n) service.get(binary(n));
  EXPECT_LE(service.cached_bytes(), 1000u);
  EXPECT_GT(service.cached_bytes(), 0u);
}

}  // namespace
}  // namespace wsb
