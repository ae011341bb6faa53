// What a benchmark case could leave behind for the next: threads, open
// file descriptors (sockets among them) and the calling thread's CPU
// affinity. Round-trip cases compare it before and after themselves.
#pragma once

#include <sched.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace wsb {

struct ProcessState {
  std::size_t threads = 0;
  std::size_t open_files = 0;
  std::string affinity;  // the calling thread's, e.g. "0-1"

  // `uncounted`: files whose descriptors are left out of open_files (state
  // a caller keeps open on purpose), as /proc shows their targets: absolute,
  // symbolic links resolved (std::filesystem::weakly_canonical).
  static ProcessState now(const std::vector<std::filesystem::path>& uncounted = {});
  std::string describe() const;
  bool operator==(const ProcessState&) const = default;
};

// Whether a comparison of states counts threads.
enum class Threads { counted, uncounted };

// Polls until the process is back at `expected` (threads of a stopped
// server may take a moment to exit) or `timeout` has passed; returns the
// last state seen; `uncounted` as in ProcessState::now; Threads::uncounted
// waits for the descriptors and the mask alone.
ProcessState wait_for_state(const ProcessState& expected, std::chrono::milliseconds timeout,
                            const std::vector<std::filesystem::path>& uncounted = {},
                            Threads threads = Threads::counted);

// The calling thread's CPU mask, restored by restore() or on destruction.
class ScopedAffinity {
 public:
  ScopedAffinity();
  ~ScopedAffinity() { restore(); }
  ScopedAffinity(const ScopedAffinity&) = delete;
  ScopedAffinity& operator=(const ScopedAffinity&) = delete;
  void restore();

 private:
  cpu_set_t set_{};
  bool saved_ = false;
};

}  // namespace wsb
