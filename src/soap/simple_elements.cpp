// Which elements of wsbench's SOAP messages are of simple type, and which
// are xsd:base64Binary, read from the schema in the WSDL soapcpp2
// generated, so a new field is covered without a list to keep.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "soap/soap_binding.h"
#include "soap/soap_documents.h"
#include "soap/soap_stack.h"

namespace wsb::soap {
namespace {

// A few names, asked about for every start tag of a message: a sorted
// array, and the lengths they have as bits, so most tags are answered by
// one test of their name's length (a std::set cost a codec's base64 check
// a string comparison per level of the tree per tag).
class Names {
 public:
  explicit Names(std::vector<std::string> names) : names_(std::move(names)) {
    std::sort(names_.begin(), names_.end());
    names_.erase(std::unique(names_.begin(), names_.end()), names_.end());
    for (const std::string& name : names_)
      lengths_ |= name.size() < 64 ? std::uint64_t{1} << name.size() : kLong;
  }
  const std::vector<std::string>& all() const { return names_; }
  bool contains(std::string_view name) const {
    const std::uint64_t bit = name.size() < 64 ? std::uint64_t{1} << name.size() : kLong;
    return (lengths_ & bit) != 0 && std::binary_search(names_.begin(), names_.end(), name);
  }

 private:
  static constexpr std::uint64_t kLong = std::uint64_t{1} << 63;  // 63 and longer
  std::vector<std::string> names_;
  std::uint64_t lengths_ = 0;
};

// The elements of the WSDL's schema whose type attribute `matches`.
template <class Matches>
Names read_elements(std::vector<std::string> names, Matches matches) {
  const std::string_view wsdl = wsbench_wsdl();
  constexpr std::string_view kElement = "<element name=\"";
  for (auto at = wsdl.find(kElement); at != std::string_view::npos;
       at = wsdl.find(kElement, at + 1)) {
    const auto name_begin = at + kElement.size();
    const auto name_end = wsdl.find('"', name_begin);
    const auto tag_end = wsdl.find('>', name_begin);
    if (name_end == std::string_view::npos || tag_end == std::string_view::npos) break;
    const std::string_view tag = wsdl.substr(at, tag_end - at);
    if (matches(tag)) names.emplace_back(wsdl.substr(name_begin, name_end - name_begin));
  }
  return Names(std::move(names));
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

namespace {

const Names& base64_names() {
  static const Names names = read_elements({}, base64_type);
  return names;
}

}  // namespace

bool is_base64_element(std::string_view local_name) { return base64_names().contains(local_name); }

const std::vector<std::string>& base64_element_names() { return base64_names().all(); }

}  // namespace wsb::soap
