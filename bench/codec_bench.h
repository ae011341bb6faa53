#pragma once

#include <cstdint>
#include <vector>

#include "common/codec.h"
#include "sweep.h"

namespace wsb::bench {

// encode/<codec>/<payload>, decode/..., the bind/write/read/unbind stages
// where a codec has a representation of its own, memcpy/<payload>, and,
// beside the soap codec's, encode-chunked/soap/<payload>: gSOAP's chunked
// output, without the counting pass its Content-Length takes.
// `iterations` > 0 fixes the iteration count (for instruction counting);
// 0 lets Google Benchmark choose. `strings` is the text of the payloads'
// generated strings; every codec runs with `allocation`.
void register_codec_benchmarks(Sweep sweep, Strings strings, std::int64_t iterations,
                               Allocation allocation);
// The same for `codecs` instead of every registered codec (tests pass their
// own); they must outlive the run.
void register_codec_benchmarks(const std::vector<CodecEntry>& codecs, Sweep sweep, Strings strings,
                               std::int64_t iterations, Allocation allocation);

}  // namespace wsb::bench
