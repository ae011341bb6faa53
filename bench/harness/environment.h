// What a benchmark run records about the machine and the process it ran in,
// beside build_info(): a cited figure must say which source, kernel, CPU,
// libraries and command line produced it, and how noisy the machine was
// while it ran.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/source_stamp.h"

namespace wsb {

using ContextPairs = std::vector<std::pair<std::string, std::string>>;

// Aggregate CPU time of the "cpu" line of /proc/stat, in clock ticks.
struct CpuTicks {
  std::uint64_t total = 0;  // user + nice + system + idle + iowait + irq + softirq + steal
  std::uint64_t steal = 0;  // time the hypervisor ran someone else on our vCPUs
};

// Parses the text of /proc/stat; nullopt if it has no aggregate cpu line.
std::optional<CpuTicks> parse_proc_stat(std::string_view text);
std::optional<CpuTicks> read_cpu_ticks();
// Steal as a percentage of all CPU time between two snapshots (0 if no
// time passed).
double steal_percent(const CpuTicks& before, const CpuTicks& after);

// The first "model name" of /proc/cpuinfo text, or "unavailable".
std::string cpu_model(std::string_view proc_cpuinfo);
// uname(2): "<sysname> <release> <version> <machine>".
std::string kernel();

// Frequency scaling as the kernel reports it under `sys_cpu` (normally
// /sys/devices/system/cpu); each field is "unavailable" when the files do
// not exist, as on most VMs.
struct FrequencyState {
  std::string governor;  // per-CPU scaling_governor, e.g. "performance" or "0=performance,1=..."
  std::string driver;    // scaling_driver of the first CPU that has one
  std::string boost;     // "on" or "off" (cpufreq/boost or intel_pstate/no_turbo)
};
FrequencyState frequency_state(const std::filesystem::path& sys_cpu);

// The commit checked out in `dir` and whether tracked files differ from it;
// both "unknown" when `dir` is not the top of a git checkout or git is
// missing (the rules of cmake/SourceStamp.cmake).
GitState git_state(const std::filesystem::path& dir);

// The checkout a run compares its build with: $WSBENCH_CHECKOUT_DIR if set,
// else the source directory the binary was configured from.
std::filesystem::path checkout_dir();

// The real path of every shared object mapped into this process (the
// versioned file, e.g. .../libxml2.so.2.9.14), in load order.
std::vector<std::string> loaded_libraries();

// The libraries' own answers to "which version are you", asked at run time
// of whatever copy was loaded ("not loaded" if the process has none).
ContextPairs runtime_library_versions();

// argv as one line a POSIX shell splits back into exactly these words.
std::string shell_quote(const std::vector<std::string>& argv);

// Bytes of the process environment (strings and terminators): it sits above
// the stack, so its size moves every stack address.
std::size_t environment_bytes();

// Noise calibration: times `samples` runs of a fixed integer loop (about
// 1 ms here) on the calling thread, pinned to `cpu` if given (the mask is
// restored afterwards). Returns nanoseconds per sample.
inline constexpr int kCalibrationSamples = 30;
inline constexpr std::uint64_t kCalibrationLoopIterations = 750'000;
std::vector<std::int64_t> calibrate(int samples, std::optional<int> cpu);
bool running_under_valgrind();

// Everything above that is known before the run, as context pairs, with the
// provenance of the build (source_stamp.h). A provenance warning is also
// printed to stderr, prefixed with argv[0]'s file name.
ContextPairs environment(const std::vector<std::string>& argv);

// What is known only after the run.
struct RunAftermath {
  std::optional<CpuTicks> ticks_before;
  std::optional<CpuTicks> ticks_after;
  std::vector<std::int64_t> calibration_before_ns;
  std::vector<std::int64_t> calibration_after_ns;
  std::vector<std::string> loaded_libraries;
};

// The aftermath as a JSON object (steal_during_run_pct, the tick counts,
// both calibrations as arrays, loaded_libraries as an array unless empty).
std::string aftermath_json(const RunAftermath& aftermath);

// Adds the aftermath's members to the "context" object of a Google Benchmark
// JSON file, replacing same-named entries (the string forms written before
// the run). Returns an empty string on success, else the reason.
std::string patch_context(const std::filesystem::path& json_file, const RunAftermath& aftermath);

// "1,2,3": how the calibration goes into the context before the run, when
// Google Benchmark takes only strings.
std::string join_samples(const std::vector<std::int64_t>& samples);

}  // namespace wsb
