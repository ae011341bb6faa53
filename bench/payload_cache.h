// Payloads are generated on first use, outside any timed region, and shared
// by every case that needs them (a 64 MiB binary is made once per run).
#pragma once

#include "common/payload.h"

namespace wsb::bench {

const Payload& cached_payload(const PayloadSpec& spec);

}  // namespace wsb::bench
