// Every limit the servers hold against their input, by name and value: the
// settings (ServerLimits, ServiceLimits) and the constants where a library
// fixes one. The benchmark's context prints them (wsbench_server_limits);
// docs/servers/limits.md explains each.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/service.h"
#include "common/transport.h"

namespace wsb {

// (name, value) pairs, in docs/servers/limits.md's order.
std::vector<std::pair<std::string, std::string>> server_limits(const ServerLimits& server = {},
                                                               const ServiceLimits& service = {});

// "name=value, name=value, ...".
std::string describe_server_limits(const ServerLimits& server = {},
                                   const ServiceLimits& service = {});

}  // namespace wsb
