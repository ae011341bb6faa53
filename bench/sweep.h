// Which payloads a run covers: the registration tables.
#pragma once

#include <vector>

#include "common/payload.h"

namespace wsb::bench {

enum class Sweep { standard, full };

// The payload catalogue (docs/experiments/README.md). The standard sweep keeps
// ints, strings and objects at 200, 800 and 3200, message-a, message-b,
// binary/1MiB and gml at 10 and 1000, so its five repetitions fit in five
// minutes on two cores; the full sweep is the whole catalogue. `strings`
// picks the text of generated strings (plain: the studies' shape).
std::vector<PayloadSpec> codec_payloads(Sweep sweep, Strings strings = Strings::plain);

}  // namespace wsb::bench
