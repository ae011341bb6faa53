#include "common/transport.h"

#include <charconv>

namespace wsb {

Endpoint parse_endpoint(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw std::invalid_argument("endpoint must be HOST:PORT, not '" + text + "'");
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);  // [::1]:8080
  unsigned port = 0;
  const char* begin = text.data() + colon + 1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc{} || ptr != end || begin == end || port > 65535)
    throw std::invalid_argument("bad port in '" + text + "'");
  return Endpoint{host, static_cast<std::uint16_t>(port)};
}

}  // namespace wsb
