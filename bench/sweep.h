// Which payloads a run covers: the registration tables.
#pragma once

#include <vector>

#include "common/payload.h"

namespace wsb::bench {

enum class Sweep { standard, full };

// The payload catalogue (docs/experiments/README.md). The standard sweep
// keeps ints/3200, message-a and message-b, the payloads of its round
// trips, so that the default run fits in five minutes on two cores; the
// full sweep is the whole catalogue. `strings` picks the text of generated
// strings (plain: the studies' shape).
std::vector<PayloadSpec> codec_payloads(Sweep sweep, Strings strings = Strings::plain);

}  // namespace wsb::bench
