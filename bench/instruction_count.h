// Marks the timed loops for scripts/count: under callgrind (started with
// --instr-atstart=no) only the code between these marks is counted, in every
// thread (server threads included), so payload generation, verification and
// the reporter's output stay out of the count. Outside valgrind each mark is
// a few no-op instructions.
#pragma once

#include <valgrind/callgrind.h>

namespace wsb::bench {

struct CountedRegion {
  CountedRegion() { CALLGRIND_START_INSTRUMENTATION; }
  ~CountedRegion() { CALLGRIND_STOP_INSTRUMENTATION; }
  CountedRegion(const CountedRegion&) = delete;
  CountedRegion& operator=(const CountedRegion&) = delete;
};

// Inside a CountedRegion: work a timed loop must do but does not time (a
// consuming unbind's read) stays out of the count.
struct UncountedRegion {
  UncountedRegion() { CALLGRIND_TOGGLE_COLLECT; }
  ~UncountedRegion() { CALLGRIND_TOGGLE_COLLECT; }
  UncountedRegion(const UncountedRegion&) = delete;
  UncountedRegion& operator=(const UncountedRegion&) = delete;
};

}  // namespace wsb::bench
