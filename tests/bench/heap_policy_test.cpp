// The heap policy bench applies at start: with glibc's defaults a block
// above the largest mmap threshold (32 MiB) is unmapped when freed and its
// pages fault in again on the next iteration; with `retain` it stays mapped.
// Each test runs in a process of its own under ctest (mallopt is global).
#include "harness/heap_policy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <new>
#include <stdexcept>

namespace wsb {
namespace {

constexpr std::size_t kBlockBytes = std::size_t{40} << 20;  // above every mmap threshold
constexpr long kPages = static_cast<long>(kBlockBytes / 4096);
constexpr int kIterations = 5;

// Minor page faults per iteration of: allocate the block, touch every
// page, free it (after one untimed warm-up iteration).
long faults_per_iteration() {
  auto iteration = [] {
    void* block = ::operator new(kBlockBytes);
    std::memset(block, 1, kBlockBytes);
    asm volatile("" : : "r"(block) : "memory");  // the writes must happen
    ::operator delete(block);
  };
  iteration();
  const long before = thread_minor_faults();
  for (int i = 0; i < kIterations; ++i) iteration();
  return (thread_minor_faults() - before) / kIterations;
}

TEST(HeapPolicy, GlibcDefaultFaultsAFreedLargeBlockInAgain) {
  apply_heap_policy(HeapPolicy::glibc_default);
  EXPECT_GT(faults_per_iteration(), kPages / 2);
}

TEST(HeapPolicy, RetainKeepsAFreedLargeBlockMapped) {
  if (!heap_policy_supported()) GTEST_SKIP() << describe_heap_policy(HeapPolicy::retain);
  apply_heap_policy(HeapPolicy::retain);
  EXPECT_LT(faults_per_iteration(), 64);
}

TEST(HeapPolicy, NamesAndDescriptions) {
  EXPECT_EQ(parse_heap_policy("retain"), HeapPolicy::retain);
  EXPECT_EQ(parse_heap_policy("glibc-default"), HeapPolicy::glibc_default);
  EXPECT_THROW(parse_heap_policy("keep"), std::invalid_argument);
  EXPECT_NE(describe_heap_policy(HeapPolicy::retain)
                .find(heap_policy_supported() ? "M_MMAP_MAX=0" : "not applied"),
            std::string::npos);
  EXPECT_EQ(describe_heap_policy(HeapPolicy::glibc_default), "glibc-default");
}

}  // namespace
}  // namespace wsb
