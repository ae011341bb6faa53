#include "payload_cache.h"

#include <map>
#include <mutex>

namespace wsb::bench {

const Payload& cached_payload(const PayloadSpec& spec) {
  static std::mutex mutex;
  static std::map<std::string, Payload> cache;
  const std::lock_guard lock(mutex);
  const std::string key = spec.label();
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, generate(spec)).first;
  return it->second;
}

}  // namespace wsb::bench
