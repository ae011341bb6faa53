#include "harness/process_state.h"

#include <dirent.h>
#include <pthread.h>

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

}  // namespace

ProcessState ProcessState::now() {
  // The descriptor listing /proc/self/fd is itself open while it is read.
  const std::size_t files = entries("/proc/self/fd");
  return {entries("/proc/self/task"), files > 0 ? files - 1 : 0, current_affinity()};
}

std::string ProcessState::describe() const {
  return std::to_string(threads) + " threads, " + std::to_string(open_files) +
         " open descriptors, CPUs " + affinity;
}

ProcessState wait_for_state(const ProcessState& expected, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  ProcessState state = ProcessState::now();
  while (!(state == expected) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    state = ProcessState::now();
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
