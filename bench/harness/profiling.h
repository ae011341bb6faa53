// Switches for the profilers scripts/count and scripts/flamegraph run the
// bench under, so that they see only what a row measures: callgrind counts
// each measured call (in every thread, servers included) and nothing
// between calls; perf samples the timed loops, not set-up, verification or
// the floor. Outside a profiler each switch is one predictable branch.
#pragma once

#include <valgrind/callgrind.h>

#include <cstdlib>
#include <string>

namespace wsb {

// Set once at start-up: callgrind's client requests are a few instructions
// each, which a memcpy row of 800 bytes would notice if always executed.
inline const bool kCountingInstructions = [] { return RUNNING_ON_VALGRIND != 0; }();

// Under scripts/count --floor (WSBENCH_COUNT_FLOOR set): a round-trip
// row counts its floor's exchanges in place of its calls, so that a row
// and its floor, and two rows' floors, compare by instructions.
inline const bool kCountingFloor = [] {
  return kCountingInstructions && std::getenv("WSBENCH_COUNT_FLOOR") != nullptr;
}();

// Instrumentation on for exactly one measured call. Under callgrind
// (--instr-atstart=no) only code between these marks is counted.
//
// A call served by other threads of the process (a round trip's server)
// waits for them at both marks: valgrind runs one thread at a time, and a
// server's work after its reply (returning to its read) would otherwise
// fall before or after the mark depending on when valgrind switches
// threads, or into the next call's count.
class CountedCall {
 public:
  enum class Threads { this_one, others_too };
  // `counted` false: not this call (the other of a row and its floor).
  explicit CountedCall(Threads threads = Threads::this_one, bool counted = true)
      : on_(kCountingInstructions && counted), settle_(on_ && threads == Threads::others_too) {
    if (!on_) return;
    if (settle_) let_other_threads_block();
    CALLGRIND_START_INSTRUMENTATION;
  }
  ~CountedCall() {
    if (!on_) return;
    if (settle_) let_other_threads_block();
    CALLGRIND_STOP_INSTRUMENTATION;
  }
  CountedCall(const CountedCall&) = delete;
  CountedCall& operator=(const CountedCall&) = delete;

 private:
  // Sleeps long enough for the other threads to run until they block.
  static void let_other_threads_block();
  bool on_;
  bool settle_;
};

// perf's control fifos (perf record --control fifo:CTL,ACK -D -1), named by
// the environment variable WSBENCH_PERF_CONTROL as "CTL:ACK". Without it,
// sampling is not controlled and enable/disable do nothing.
class PerfControl {
 public:
  static constexpr const char* kEnvironment = "WSBENCH_PERF_CONTROL";
  // Opens the fifos the variable names; throws std::runtime_error saying
  // which one failed.
  PerfControl();
  ~PerfControl();
  PerfControl(const PerfControl&) = delete;
  PerfControl& operator=(const PerfControl&) = delete;

  bool active() const { return control_fd_ >= 0; }
  // Sends the command and waits for perf's acknowledgement, so no sample
  // of what follows is lost or misattributed. Throws if perf has gone.
  void enable() { command("enable"); }
  void disable() { command("disable"); }

 private:
  void command(const std::string& what);
  int control_fd_ = -1;
  int ack_fd_ = -1;
};

// The process's controller, opened on first use.
PerfControl& perf_control();

// Samples taken only while one of these exists (nesting is not supported:
// regions are one timed loop or one block of it).
class SampledRegion {
 public:
  SampledRegion() : control_(perf_control()) {
    if (control_.active()) control_.enable();
  }
  ~SampledRegion() {
    if (control_.active()) control_.disable();
  }
  SampledRegion(const SampledRegion&) = delete;
  SampledRegion& operator=(const SampledRegion&) = delete;

 private:
  PerfControl& control_;
};

}  // namespace wsb
