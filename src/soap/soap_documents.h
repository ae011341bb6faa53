// The documents a SOAP server publishes besides its replies: the WSDL
// soapcpp2 generated from wsbench_service.h and the XOP schema it imports,
// both compiled in by embed_file.cmake. The gsoap stack and the beast
// stack's soap route serve them at the same paths.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace wsb::soap {

// The WSDL as soapcpp2 wrote it; its service location is soapcpp2's
// placeholder kWsdlLocationPlaceholder.
std::string_view wsbench_wsdl();
inline constexpr std::string_view kWsdlLocationPlaceholder = "http://localhost:80";
// The XOP schema (src/soap/xop.xsd), imported by the WSDL from "xop.xsd",
// i.e. from next to itself.
std::string_view xop_schema();

// The document at `path` (path and query of a GET): the WSDL at /?wsdl and
// /wsbench.wsdl, its calls addressed to `location` (e.g.
// "http://127.0.0.1:8080/"); the XOP schema at /xop.xsd; nothing elsewhere.
std::optional<std::string> published_document(std::string_view path, std::string_view location);

}  // namespace wsb::soap
