#include "server_limits.h"

#include "common/codec.h"
#include "grpc/grpc_stack.h"
#include "soap/soap_binding.h"
#include "xmlrpc/xmlrpc_limits.h"

namespace wsb {

std::vector<std::pair<std::string, std::string>> server_limits(const ServerLimits& server,
                                                               const ServiceLimits& service) {
  auto n = [](auto v) { return std::to_string(v); };
  return {
      {"max_body_bytes", n(server.max_body_bytes)},
      {"max_header_bytes", n(server.max_header_bytes)},
      {"max_header_fields", n(server.max_header_fields)},
      {"keepalive_timeout_s", n(server.keepalive_timeout_s)},
      {"idle_release_ms", n(server.idle_release_ms)},
      {"max_nesting_depth", n(kMaxNestingDepth)},
      {"gsoap_max_level", n(soap::kMaxLevel)},
      {"gsoap_max_occurs", n(server.max_body_bytes / 16)},
      {"xmlrpc_xml_size_limit", n(xmlrpc::kXmlSizeLimit)},
      {"xmlrpc_max_struct_members", n(xmlrpc::kMaxStructMembers)},
      {"abyss_header_buffer_bytes", n(xmlrpc::kAbyssHeaderBufferBytes)},
      {"grpc_transport_quota_bytes", n(grpc_stack::transport_quota(server))},
      {"max_cached_payload_bytes", n(service.max_cached_payload_bytes)},
      {"max_cached_payloads", n(service.max_cached_payloads)},
      {"max_array_items", n(service.max_array_items)},
      {"max_records", n(service.max_records)},
      {"max_binary_bytes", n(service.max_binary_bytes)},
      {"max_buildings", n(service.max_buildings)},
      {"max_primes", n(service.max_primes)},
      {"max_queues", n(service.max_queues)},
      {"max_messages_per_queue", n(service.max_messages_per_queue)},
  };
}

std::string describe_server_limits(const ServerLimits& server, const ServiceLimits& service) {
  std::string out;
  for (const auto& [name, value] : server_limits(server, service))
    out += (out.empty() ? "" : ", ") + name + "=" + value;
  return out;
}

}  // namespace wsb
