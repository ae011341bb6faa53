#include "sweep.h"

namespace wsb::bench {

std::vector<PayloadSpec> codec_payloads(Sweep sweep) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  const bool full = sweep == Sweep::full;
  std::vector<PayloadSpec> specs = {{Kind::text, 0}};
  for (const Kind kind : {Kind::ints, Kind::strings, Kind::objects})
    for (const std::size_t n : {200, 400, 800, 1600, 3200}) specs.push_back({kind, n});
  specs.push_back({Kind::message_a, 100});
  specs.push_back({Kind::message_b, 128 * 1024});
  for (const std::size_t mib : {1, 4, 16, 32, 64})
    if (full || mib <= 4) specs.push_back({Kind::binary, mib * MiB});
  for (const std::size_t n : {1, 10, 100, 1000, 5000, 10000})
    if (full || n <= 1000) specs.push_back({Kind::gml, n});
  return specs;
}

}  // namespace wsb::bench
