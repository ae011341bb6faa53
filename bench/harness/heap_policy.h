// One heap policy for every case. By default glibc hands large freed blocks
// back to the kernel (munmap, or trimming the heap top), and the next
// iteration faults the same pages in again; whether a case pays for that
// depends on its allocation pattern, not its work. See docs/reference/codecs.md
// ("Heap and allocation policies") for the values and the measurements behind them.
#pragma once

#include <string>
#include <string_view>

namespace wsb {

enum class HeapPolicy {
  retain,         // freed memory stays in the process (the default)
  glibc_default,  // glibc's own thresholds, unchanged
};

// "retain" or "glibc-default"; throws std::invalid_argument otherwise.
HeapPolicy parse_heap_policy(std::string_view name);

// False when the process does not allocate with glibc's malloc (an
// AddressSanitizer build replaces it and refuses mallopt): then no policy
// is applied, and the context says so.
bool heap_policy_supported();

// Applies the policy to the process's allocator; call once, before any
// benchmark allocates. Throws std::runtime_error if glibc refuses a value.
void apply_heap_policy(HeapPolicy policy);

// What the JSON context records: the policy's name and its settings.
std::string describe_heap_policy(HeapPolicy policy);

// Minor page faults of the calling thread so far (getrusage RUSAGE_THREAD).
long thread_minor_faults();

}  // namespace wsb
