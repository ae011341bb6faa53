#pragma once

#include <cstdint>

#include "common/codec.h"
#include "sweep.h"

namespace wsb::bench {

// encode/<codec>/<payload>, decode/..., the bind/write/read/unbind stages
// where a codec has a representation of its own, and memcpy/<payload>.
// `iterations` > 0 fixes the iteration count (for instruction counting);
// 0 lets Google Benchmark choose. `strings` is the text of the payloads'
// generated strings; every codec runs with `allocation`.
void register_codec_benchmarks(Sweep sweep, Strings strings, std::int64_t iterations,
                               Allocation allocation);

}  // namespace wsb::bench
