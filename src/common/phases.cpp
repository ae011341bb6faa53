#include "common/phases.h"

namespace wsb {

void ServerProbe::begin_request() {
  const std::lock_guard lock(mutex_);
  points_.fill(0);
}

void ServerProbe::mark(Mark point, std::int64_t ns) {
  const std::lock_guard lock(mutex_);
  points_[point] = ns;
}

void ServerProbe::collect(Timeline& t) const {
  const std::lock_guard lock(mutex_);
  for (std::size_t p = kRequestReceived; p <= kMarshalled; ++p) t[p] = points_[p];
}

ServerProbe& server_probe() {
  static ServerProbe probe;
  return probe;
}

bool in_order(const Timeline& t) {
  std::int64_t last = 0;
  for (const std::int64_t point : t) {
    if (point == 0) continue;
    if (point < last) return false;
    last = point;
  }
  return true;
}

std::vector<Phase> phases_of(const Timeline& t) {
  std::vector<Phase> phases;
  if (t[kInvoke] == 0 || t[kDecoded] == 0) return phases;
  std::size_t from = kInvoke;
  std::string name;
  for (std::size_t p = kInvoke + 1; p < kPointCount; ++p) {
    name += (name.empty() ? "" : "+") + std::string(kPhaseNames[p]);
    // A point is usable if present and not before the last one used (an
    // in-process server's clock is the client's; a remote one's is not).
    if (t[p] == 0 || t[p] < t[from]) continue;
    phases.push_back({name, t[p] - t[from]});
    name.clear();
    from = p;
  }
  return phases;
}

}  // namespace wsb
