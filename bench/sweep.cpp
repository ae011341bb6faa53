#include "sweep.h"

namespace wsb::bench {
namespace {

std::vector<PayloadSpec> with_strings(std::vector<PayloadSpec> specs, Strings strings) {
  for (auto& spec : specs) spec.strings = strings;
  return specs;
}

}  // namespace

std::vector<PayloadSpec> codec_payloads(Sweep sweep, Strings strings) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  const bool full = sweep == Sweep::full;
  std::vector<PayloadSpec> specs;
  if (full) specs.push_back({Kind::text, 0});
  // The standard sweep keeps the payloads of its round trips (get
  // ints/3200, echo message-a and message-b), so each codec row stands
  // beside a call that carries the same payload, and message-b's
  // attachment gives the MTOM and SwA codecs a figure. The size series
  // (six repetitions of every codec kernel on each) are --full's, so that
  // the default run fits in five minutes on two vCPUs.
  for (const Kind kind : {Kind::ints, Kind::strings, Kind::objects})
    for (const std::size_t n : {200, 400, 800, 1600, 3200})
      if (full || (kind == Kind::ints && n == 3200)) specs.push_back({kind, n});
  specs.push_back({Kind::message_a, 100});
  specs.push_back({Kind::message_b, 128 * 1024});
  if (!full) return with_strings(std::move(specs), strings);
  for (const std::size_t mib : {1, 4, 16, 32, 64}) specs.push_back({Kind::binary, mib * MiB});
  for (const std::size_t n : {1, 10, 100, 1000, 5000, 10000}) specs.push_back({Kind::gml, n});
  return with_strings(std::move(specs), strings);
}

}  // namespace wsb::bench
