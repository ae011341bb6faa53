// The one clock every timestamp in wsbench comes from.
#pragma once

#include <chrono>
#include <cstdint>

namespace wsb {

// steady_clock in nanoseconds (about 25 ns a call here). Comparable across
// threads of one process, so an in-process server's timestamps line up with
// its client's; across hosts only durations are meaningful.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace wsb
