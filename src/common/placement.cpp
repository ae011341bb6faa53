#include "common/placement.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <vector>

namespace wsb {
namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {0};
  std::vector<int> cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) cpus.push_back(i);
  return cpus;
}

// Resolved once, from the process's affinity at start, before any pinning.
const std::vector<int>& process_cpus() {
  static const std::vector<int> cpus = allowed_cpus();
  return cpus;
}

}  // namespace

std::string_view placement_name(Placement p) {
  switch (p) {
    case Placement::same:
      return "same";
    case Placement::split:
      return "split";
    case Placement::none:
      return "none";
  }
  return "?";
}

Placement parse_placement(std::string_view name) {
  if (name == "same") return Placement::same;
  if (name == "split") return Placement::split;
  if (name == "none") return Placement::none;
  throw std::invalid_argument("placement must be same, split or none, not '" + std::string(name) +
                              "'");
}

std::optional<int> client_cpu(Placement p) {
  if (p == Placement::none) return std::nullopt;
  return process_cpus().front();
}

std::optional<int> server_cpu(Placement p) {
  const auto& cpus = process_cpus();
  switch (p) {
    case Placement::none:
      return std::nullopt;
    case Placement::same:
      return cpus.front();
    case Placement::split:
      if (cpus.size() < 2) throw std::runtime_error("placement 'split' needs two vCPUs");
      return cpus[1];
  }
  return std::nullopt;
}

void pin_current_thread(std::optional<int> cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu) {
    CPU_SET(*cpu, &set);
  } else {
    for (const int c : process_cpus()) CPU_SET(c, &set);
  }
  if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set); rc != 0)
    throw std::runtime_error(std::string("pthread_setaffinity_np: ") + std::strerror(rc));
}

std::string current_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0) return "?";
  std::string out;
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (!CPU_ISSET(i, &set)) continue;
    int j = i;
    while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, &set)) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(i) + (j > i ? "-" + std::to_string(j) : "");
    i = j;
  }
  return out;
}

}  // namespace wsb
