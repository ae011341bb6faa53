#include "common/server_concurrency.h"

namespace wsb {

std::vector<std::pair<std::string, std::string>> describe(const ServerConcurrency& c) {
  return {
      {"io_threads", std::to_string(c.io_threads)},
      {"max_connections", std::to_string(c.max_connections)},
      {"backlog", std::to_string(c.backlog)},
      {"request_timeout_s", std::to_string(c.request_timeout_s)},
      {"max_keepalive_requests",
       c.max_keepalive_requests == 0 ? "unlimited" : std::to_string(c.max_keepalive_requests)},
  };
}

std::string describe_text(const ServerConcurrency& c) {
  std::string out;
  for (const auto& [name, value] : describe(c))
    out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

}  // namespace wsb
