#include "gml_structure.h"

#include <charconv>
#include <sstream>

#include "test_helpers.h"

namespace wsb::testing {
namespace {

const xmlChar* x(const char* s) { return reinterpret_cast<const xmlChar*>(s); }

class Checker {
 public:
  explicit Checker(const char* app_ns) : app_ns_(app_ns) {}

  // The only element child of `parent`, which must be `ns`:`name`.
  const xmlNode* only_child(const xmlNode* parent, const char* ns, const char* name) {
    const auto children = element_children(parent);
    if (children.size() != 1) {
      note(std::string(str(parent->name)) + " has " + std::to_string(children.size()) +
           " element children, expected only " + name);
      return nullptr;
    }
    return is(children[0], ns, name) ? children[0] : nullptr;
  }

  bool is(const xmlNode* n, const char* ns, const char* name) {
    const std::string_view uri = n->ns == nullptr ? std::string_view() : str(n->ns->href);
    if (str(n->name) == name && uri == ns) return true;
    note("found {" + std::string(uri) + "}" + std::string(str(n->name)) + ", expected {" + ns +
         "}" + name);
    return false;
  }

  // `n`'s attribute {ns}name must be `value` (ns nullptr: no namespace).
  void attribute_is(const xmlNode* n, const char* ns, const char* name, const std::string& value) {
    xmlChar* got = ns == nullptr ? xmlGetNoNsProp(n, x(name)) : xmlGetNsProp(n, x(name), x(ns));
    if (got == nullptr)
      note(std::string(str(n->name)) + " lacks attribute " + name);
    else if (str(got) != value)
      note(std::string(str(n->name)) + "/@" + name + " is '" + std::string(str(got)) +
           "', expected '" + value + "'");
    xmlFree(got);
  }

  void building(const xmlNode* member, const Building& b) {
    if (!is(member, kGmlNamespace, "featureMember")) return;
    const xmlNode* feature = only_child(member, app_ns_, "Building");
    if (feature == nullptr) return;
    attribute_is(feature, kGmlNamespace, "id", b.id);
    const auto props = element_children(feature);
    if (props.size() != 4) return note(b.id + ": expected name, height, floors, footprint");
    if (is(props[0], kGmlNamespace, "name") && text_of(props[0]) != b.name)
      note(b.id + ": gml:name differs");
    if (is(props[1], app_ns_, "height") && number(text_of(props[1])) != b.height)
      note(b.id + ": height differs");
    if (is(props[2], app_ns_, "floors") && text_of(props[2]) != std::to_string(b.floors))
      note(b.id + ": floors differs");
    if (!is(props[3], app_ns_, "footprint")) return;
    const xmlNode* polygon = only_child(props[3], kGmlNamespace, "Polygon");
    if (polygon == nullptr) return;
    attribute_is(polygon, nullptr, "srsName", "urn:ogc:def:crs:EPSG::3067");
    const xmlNode* exterior = only_child(polygon, kGmlNamespace, "exterior");
    const xmlNode* ring = exterior ? only_child(exterior, kGmlNamespace, "LinearRing") : nullptr;
    const xmlNode* pos_list = ring ? only_child(ring, kGmlNamespace, "posList") : nullptr;
    if (pos_list == nullptr) return;
    attribute_is(pos_list, nullptr, "srsDimension", "2");
    std::istringstream in(text_of(pos_list));
    std::vector<double> numbers;
    for (std::string token; in >> token;) numbers.push_back(number(token));
    if (numbers.size() != 2 * b.footprint.size()) {
      note(b.id + ": posList has " + std::to_string(numbers.size()) + " numbers for " +
           std::to_string(b.footprint.size()) + " points");
      return;
    }
    for (std::size_t i = 0; i < b.footprint.size(); ++i)
      if (numbers[2 * i] != b.footprint[i].x || numbers[2 * i + 1] != b.footprint[i].y)
        return note(b.id + ": posList point " + std::to_string(i) + " differs");
  }

  double number(const std::string& s) {
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) note("'" + s + "' is not a number");
    return v;
  }

  void note(const std::string& what) { problems_ += (problems_.empty() ? "" : "; ") + what; }
  const std::string& problems() const { return problems_; }

 private:
  const char* app_ns_;
  std::string problems_;
};

}  // namespace

std::string gml_collection_problems(const xmlNode* collection, const char* app_ns,
                                    const BuildingCollection& expected) {
  Checker check(app_ns);
  const auto members = element_children(collection);
  if (members.size() != expected.buildings.size())
    check.note(std::to_string(members.size()) + " feature members for " +
               std::to_string(expected.buildings.size()) + " buildings");
  else
    for (std::size_t i = 0; i < members.size(); ++i)
      check.building(members[i], expected.buildings[i]);
  return check.problems();
}

}  // namespace wsb::testing
