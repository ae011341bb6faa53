#include "soap/soap_documents.h"

namespace wsb::soap {

std::optional<std::string> published_document(std::string_view path, std::string_view location) {
  if (path == "/xop.xsd") return std::string(xop_schema());
  if (path != "/?wsdl" && path != "/wsbench.wsdl") return std::nullopt;
  std::string wsdl(wsbench_wsdl());
  if (const auto at = wsdl.find(kWsdlLocationPlaceholder); at != std::string::npos)
    wsdl.replace(at, kWsdlLocationPlaceholder.size(), location);
  return wsdl;
}

}  // namespace wsb::soap
