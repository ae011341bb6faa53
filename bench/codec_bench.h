#pragma once

#include "sweep.h"

namespace wsb::bench {

// encode/<codec>/<payload>, decode/..., the bind/write/read/unbind stages
// where a codec has a representation of its own, and memcpy/<payload>.
void register_codec_benchmarks(Sweep sweep);

}  // namespace wsb::bench
