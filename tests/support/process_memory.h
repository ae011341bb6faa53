// This process's resident memory from /proc/self/status, for tests that
// bound what a server holds while refusing a body.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace wsb::testing {

// A /proc/self/status field in kB ("VmRSS", "VmHWM"), or 0.
inline std::uint64_t status_kb(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
  return 0;
}

// Resets the process's peak RSS (VmHWM) to its current RSS.
inline bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return clear.good();
}

}  // namespace wsb::testing
