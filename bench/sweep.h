// Which payloads a run covers: the registration tables.
#pragma once

#include <vector>

#include "common/payload.h"

namespace wsb::bench {

enum class Sweep { standard, full };

// The payload catalogue (docs/experiments.md). The standard sweep leaves out
// only the largest entries (16-64 MiB binaries, 5000 and 10000 buildings)
// so the default run fits in a few minutes on two cores.
std::vector<PayloadSpec> codec_payloads(Sweep sweep);

}  // namespace wsb::bench
