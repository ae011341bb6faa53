// The "gsoap" stack: gSOAP 2.8's own HTTP engine end to end, registered in
// src/stacks.cpp. The server is the generated wsbenchService (request
// handling) behind an accept thread and a thread per connection; the client
// is the generated wsbenchProxy on one keep-alive connection. Carries soap
// and soap-mtom: one server serves both, answering MTOM in kind.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/transport.h"

namespace wsb::soap {

// soap_server.cpp. Throws std::runtime_error if it cannot listen.
std::unique_ptr<Server> start_gsoap_server(Service& service, const ServerOptions& options);

// soap_client.cpp: codec "soap" or "soap-mtom". Throws CallError if it cannot
// connect, std::invalid_argument for another codec.
std::unique_ptr<Client> connect_gsoap_client(const Endpoint& server, const std::string& codec);

// The WSDL soapcpp2 generated from wsbench_service.h, compiled in by
// embed_file.cmake. Its service location is soapcpp2's placeholder
// kWsdlLocationPlaceholder; the server puts its own endpoint there.
std::string_view wsbench_wsdl();
inline constexpr std::string_view kWsdlLocationPlaceholder = "http://localhost:80";
// The XOP schema (src/soap/xop.xsd) the WSDL imports from "xop.xsd", next
// to itself on the server, compiled in the same way.
std::string_view xop_schema();

}  // namespace wsb::soap
