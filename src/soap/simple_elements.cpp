// Which elements of wsbench's SOAP messages are of simple type, read from
// the schema in the WSDL soapcpp2 generated, so a new field is covered
// without a list to keep.
#include <set>
#include <string>
#include <string_view>

#include "soap/soap_binding.h"
#include "soap/soap_documents.h"
#include "soap/soap_stack.h"

namespace wsb::soap {
namespace {

std::set<std::string, std::less<>> read_simple_elements() {
  // GML's own leaves, from the GML schema the WSDL imports.
  std::set<std::string, std::less<>> names = {"name", "posList"};
  const std::string_view wsdl = wsbench_wsdl();
  constexpr std::string_view kElement = "<element name=\"";
  for (auto at = wsdl.find(kElement); at != std::string_view::npos;
       at = wsdl.find(kElement, at + 1)) {
    const auto name_begin = at + kElement.size();
    const auto name_end = wsdl.find('"', name_begin);
    const auto tag_end = wsdl.find('>', name_begin);
    if (name_end == std::string_view::npos || tag_end == std::string_view::npos) break;
    const std::string_view tag = wsdl.substr(at, tag_end - at);
    // xsd:base64Binary excluded: under MTOM it holds an <xop:Include>.
    if (tag.find("type=\"xsd:") != std::string_view::npos &&
        tag.find("xsd:base64Binary") == std::string_view::npos)
      names.emplace(wsdl.substr(name_begin, name_end - name_begin));
  }
  return names;
}

}  // namespace

bool is_simple_element(std::string_view local_name) {
  static const auto names = read_simple_elements();
  return names.contains(local_name);
}

}  // namespace wsb::soap
