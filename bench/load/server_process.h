// wsbench-server as a child process during load, so the CPU time and
// memory it uses are its own, sampled from /proc while the load runs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/transport.h"

namespace wsb::load {

// What /proc says of a process at one moment.
struct ProcessUsage {
  double cpu_s = 0;               // user + system, all threads
  std::uint64_t rss_kb = 0;       // VmRSS
  std::uint64_t peak_rss_kb = 0;  // VmHWM
};
// Parses /proc/<pid>/stat (utime, stime) and /proc/<pid>/status texts;
// nullopt if either lacks its fields.
std::optional<ProcessUsage> parse_usage(std::string_view stat, std::string_view status,
                                        long ticks_per_second);
std::optional<ProcessUsage> read_usage(pid_t pid);

// Starts `binary` serving only `stacks` on 127.0.0.1 ephemeral ports,
// pinned to `cpu` if given, with `extra_args` (--dictionary-size x10);
// waits up to `startup_limit` for its endpoints (a server checks its
// dictionary database before it serves). Throws std::runtime_error if it
// does not come up. The destructor stops it (SIGTERM, then SIGKILL after a
// few seconds).
class ServerProcess {
 public:
  ServerProcess(const std::filesystem::path& binary, const std::vector<std::string>& stacks,
                std::optional<int> cpu, const std::vector<std::string>& extra_args = {},
                std::chrono::seconds startup_limit = std::chrono::seconds(10));
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  Endpoint endpoint(const std::string& stack) const;
  pid_t pid() const { return pid_; }
  // Kills it at once: clients stuck in a call see their connection end.
  void kill_now();

 private:
  void stop();
  pid_t pid_ = -1;
  std::map<std::string, Endpoint> endpoints_;
};

// Samples a process's usage every `period` on a thread of its own.
class UsageSampler {
 public:
  struct Sample {
    double t_s;  // since start
    ProcessUsage usage;
  };
  UsageSampler(pid_t pid, std::chrono::milliseconds period);
  ~UsageSampler();
  UsageSampler(const UsageSampler&) = delete;
  UsageSampler& operator=(const UsageSampler&) = delete;
  // Stops sampling (after one last sample) and returns the samples.
  std::vector<Sample> finish();
  // The moment samples' t_s count from.
  std::chrono::steady_clock::time_point start() const { return start_; }

 private:
  void sample();
  pid_t pid_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::vector<Sample> samples_;
  bool stopping_ = false;
  std::thread thread_;
};

// A run's figures from its samples: CPU seconds used between the first
// and last sample, the largest RSS sampled, and the steady RSS (the median
// of the second half of the samples).
struct ServerFigures {
  double cpu_s = 0;
  double wall_s = 0;
  std::uint64_t peak_rss_kb = 0;
  std::uint64_t steady_rss_kb = 0;
  std::size_t samples = 0;
};
ServerFigures server_figures(const std::vector<UsageSampler::Sample>& samples);

}  // namespace wsb::load
