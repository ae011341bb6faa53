#include "harness/heap_policy.h"

#include <malloc.h>
#include <sys/resource.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace wsb {
namespace {

// No block is ever mmap'ed: the largest catalogue payload (binary/64MiB, about
// 86 MiB as base64 text) needs blocks above the largest mmap threshold glibc
// accepts (32 MiB on 64-bit), so only M_MMAP_MAX = 0 keeps them in the heap,
// where freeing does not unmap them.
constexpr int kMmapMax = 0;
// The heap top is trimmed only past 1 GiB free, more than the largest case of
// the full sweep frees at once; below it, freed pages stay mapped and warm.
// M_TOP_PAD stays glibc's: with nothing trimmed the heap only grows during a
// case's first iterations, which Google Benchmark does not time.
constexpr int kTrimThreshold = 1 << 30;

}  // namespace

bool heap_policy_supported() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#else
  return true;
#endif
}

HeapPolicy parse_heap_policy(std::string_view name) {
  if (name == "retain") return HeapPolicy::retain;
  if (name == "glibc-default") return HeapPolicy::glibc_default;
  throw std::invalid_argument("unknown heap policy '" + std::string(name) +
                              "' (expected retain or glibc-default)");
}

void apply_heap_policy(HeapPolicy policy) {
  if (policy == HeapPolicy::glibc_default || !heap_policy_supported()) return;
  if (mallopt(M_MMAP_MAX, kMmapMax) != 1 || mallopt(M_TRIM_THRESHOLD, kTrimThreshold) != 1)
    throw std::runtime_error("mallopt refused the heap policy");
}

std::string describe_heap_policy(HeapPolicy policy) {
  if (policy == HeapPolicy::glibc_default) return "glibc-default";
  if (!heap_policy_supported())
    return "retain not applied (AddressSanitizer's allocator replaces glibc's malloc)";
  return "retain (mallopt M_MMAP_MAX=" + std::to_string(kMmapMax) +
         " M_TRIM_THRESHOLD=" + std::to_string(kTrimThreshold) + ")";
}

long thread_minor_faults() {
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0)
    throw std::system_error(errno, std::generic_category(), "getrusage");
  return usage.ru_minflt;
}

}  // namespace wsb
