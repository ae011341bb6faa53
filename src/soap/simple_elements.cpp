// Which elements of wsbench's SOAP messages are of simple type, and which
// are xsd:base64Binary, read from the schema in the WSDL soapcpp2
// generated, so a new field is covered without a list to keep.
#include <set>
#include <string>
#include <string_view>

#include "soap/soap_binding.h"
#include "soap/soap_documents.h"
#include "soap/soap_stack.h"

namespace wsb::soap {
namespace {

using Names = std::set<std::string, std::less<>>;

// The elements of the WSDL's schema whose type attribute `matches`.
template <class Matches>
Names read_elements(Names names, Matches matches) {
  const std::string_view wsdl = wsbench_wsdl();
  constexpr std::string_view kElement = "<element name=\"";
  for (auto at = wsdl.find(kElement); at != std::string_view::npos;
       at = wsdl.find(kElement, at + 1)) {
    const auto name_begin = at + kElement.size();
    const auto name_end = wsdl.find('"', name_begin);
    const auto tag_end = wsdl.find('>', name_begin);
    if (name_end == std::string_view::npos || tag_end == std::string_view::npos) break;
    const std::string_view tag = wsdl.substr(at, tag_end - at);
    if (matches(tag)) names.emplace(wsdl.substr(name_begin, name_end - name_begin));
  }
  return names;
}

bool base64_type(std::string_view tag) {
  return tag.find("type=\"xsd:base64Binary\"") != std::string_view::npos;
}

}  // namespace

bool is_simple_element(std::string_view local_name) {
  // GML's own leaves, from the GML schema the WSDL imports. xsd:base64Binary
  // excluded: under MTOM it holds an <xop:Include>.
  static const Names names = read_elements({"name", "posList"}, [](std::string_view tag) {
    return tag.find("type=\"xsd:") != std::string_view::npos && !base64_type(tag);
  });
  return names.contains(local_name);
}

bool is_base64_element(std::string_view local_name) {
  static const Names names = read_elements({}, base64_type);
  return names.contains(local_name);
}

}  // namespace wsb::soap
