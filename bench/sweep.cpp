#include "sweep.h"

namespace wsb::bench {

std::vector<PayloadSpec> codec_payloads(Sweep sweep, Strings strings) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  const bool full = sweep == Sweep::full;
  std::vector<PayloadSpec> specs;
  if (full) specs.push_back({Kind::text, 0});
  // The standard sweep keeps the ends of the array range and its geometric
  // middle: five repetitions of every case must still fit in five minutes.
  for (const Kind kind : {Kind::ints, Kind::strings, Kind::objects})
    for (const std::size_t n : {200, 400, 800, 1600, 3200})
      if (full || n == 200 || n == 800 || n == 3200) specs.push_back({kind, n});
  specs.push_back({Kind::message_a, 100});
  specs.push_back({Kind::message_b, 128 * 1024});
  for (const std::size_t mib : {1, 4, 16, 32, 64})
    if (full || mib == 1) specs.push_back({Kind::binary, mib * MiB});
  for (const std::size_t n : {1, 10, 100, 1000, 5000, 10000})
    if (full || n == 10 || n == 1000) specs.push_back({Kind::gml, n});
  for (auto& spec : specs) spec.strings = strings;
  return specs;
}

}  // namespace wsb::bench
