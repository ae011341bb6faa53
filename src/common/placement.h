// CPU placement of client and server threads. On this class of machine a
// small loopback round trip takes ~16 us with both ends on one vCPU and
// ~80 us across vCPUs (the cross-vCPU wake-up), so placement is chosen,
// applied and recorded, never left to chance.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace wsb {

enum class Placement {
  same,   // client and server threads pinned to one vCPU
  split,  // client on one vCPU, server threads on another
  none,   // unpinned: the scheduler decides
};

std::string_view placement_name(Placement p);
// Throws std::invalid_argument for anything but same, split, none.
Placement parse_placement(std::string_view name);

// The vCPU each side is pinned to under a placement (nullopt: unpinned).
// split needs two online vCPUs and throws std::runtime_error otherwise.
std::optional<int> client_cpu(Placement p);
std::optional<int> server_cpu(Placement p);

// Pins the calling thread (threads it creates later inherit the mask).
// Throws std::runtime_error if the kernel refuses.
void pin_current_thread(std::optional<int> cpu);

// The vCPUs the calling thread may run on, e.g. "0" or "0-1".
std::string current_affinity();

}  // namespace wsb
