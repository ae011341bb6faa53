// What the fuzz targets share (fuzz_targets.cpp) and the targets of each
// stack, defined in their own translation units (beast_target.cpp keeps
// Beast's slow headers to itself).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/payload.h"
#include "common/rpc_binding.h"
#include "common/service.h"
#include "common/transport.h"
#include "fuzz_targets.h"

namespace wsb::fuzz {

// Limits well below the defaults, so that no input makes the service
// generate megabytes (a fuzzer would spend its time there, not in parsing).
ServiceLimits service_limits();
ServerLimits server_limits();

// Small catalogue payloads, escaped strings included, and one of each
// model type.
std::vector<Payload> seed_payloads();

// One call of every operation, with every seed payload for echo.
std::vector<CallArgs> seed_calls(const std::vector<Payload>& payloads, const Message& message);

// "POST <path> HTTP/1.1" with Host, Content-Type, Content-Length and the
// extra header lines (each ending in CRLF) before the body.
std::string http_post(std::string_view path, std::string_view content_type,
                      std::string_view extra_headers, std::string_view body);

// Every call of seed_calls() as `codec`'s RPC binding writes it, posted to
// its path with its call header; extra_headers as for http_post.
std::vector<std::string> rpc_requests(const CodecEntry& codec, std::string_view extra_headers);

// Throws PropertyViolation unless `reply` begins with an HTTP/1.x status
// line whose status is not 5xx (but for a SOAP fault that blames the
// client): a client's bytes never make a server fail.
void check_http_reply(std::string_view target, std::string_view reply);

FuzzTarget beast_request_target();
std::vector<FuzzTarget> gsoap_targets();
std::vector<FuzzTarget> xmlrpc_targets();

}  // namespace wsb::fuzz
