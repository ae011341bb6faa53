#include "harness/process_state.h"

#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <thread>

#include "common/placement.h"

namespace wsb {
namespace {

// Entries of a /proc directory, "." and ".." aside; 0 if it cannot be read.
std::size_t entries(const char* path) {
  DIR* dir = ::opendir(path);
  if (dir == nullptr) return 0;
  std::size_t n = 0;
  while (const dirent* entry = ::readdir(dir))
    if (entry->d_name[0] != '.') ++n;
  ::closedir(dir);
  return n;
}

// Open descriptors, those on `uncounted` aside, in one pass over
// /proc/self/fd (so the two counts are of the same moment).
std::size_t count_open_files(const std::vector<std::filesystem::path>& uncounted) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  std::size_t n = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    ++n;
    if (uncounted.empty()) continue;
    char target[4096];
    const ssize_t length = ::readlinkat(::dirfd(dir), entry->d_name, target, sizeof target);
    if (length <= 0 || static_cast<std::size_t>(length) == sizeof target) continue;
    const std::string_view seen(target, static_cast<std::size_t>(length));
    if (std::any_of(uncounted.begin(), uncounted.end(),
                    [&](const std::filesystem::path& file) { return file.native() == seen; }))
      --n;
  }
  ::closedir(dir);
  // The descriptor listing /proc/self/fd is itself open while it is read.
  return n > 0 ? n - 1 : 0;
}

}  // namespace

ProcessState ProcessState::now(const std::vector<std::filesystem::path>& uncounted) {
  return {entries("/proc/self/task"), count_open_files(uncounted), current_affinity()};
}

std::string ProcessState::describe() const {
  return std::to_string(threads) + " threads, " + std::to_string(open_files) +
         " open descriptors, CPUs " + affinity;
}

ProcessState wait_for_state(const ProcessState& expected, std::chrono::milliseconds timeout,
                            const std::vector<std::filesystem::path>& uncounted, Threads threads) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto reached = [&](const ProcessState& state) {
    if (threads == Threads::counted) return state == expected;
    return state.open_files == expected.open_files && state.affinity == expected.affinity;
  };
  ProcessState state = ProcessState::now(uncounted);
  while (!reached(state) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    state = ProcessState::now(uncounted);
  }
  return state;
}

ScopedAffinity::ScopedAffinity() {
  saved_ = pthread_getaffinity_np(pthread_self(), sizeof set_, &set_) == 0;
}

void ScopedAffinity::restore() {
  if (saved_) pthread_setaffinity_np(pthread_self(), sizeof set_, &set_);
}

}  // namespace wsb
