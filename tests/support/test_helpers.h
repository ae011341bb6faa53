// Small libxml2 helpers shared by the tests that check XML independently of
// the code under test (xml_test, soap_test, gsoap_stack_test).
#pragma once

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wsb::testing {

inline std::string_view str(const xmlChar* s) {
  return s == nullptr ? std::string_view() : std::string_view(reinterpret_cast<const char*>(s));
}

struct DocDeleter {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};
using Doc = std::unique_ptr<xmlDoc, DocDeleter>;

inline std::vector<const xmlNode*> element_children(const xmlNode* n) {
  std::vector<const xmlNode*> out;
  for (const xmlNode* c = n->children; c != nullptr; c = c->next)
    if (c->type == XML_ELEMENT_NODE) out.push_back(c);
  return out;
}

// The text content of `n`; "<missing>" if there is no node.
inline std::string text_of(const xmlNode* n) {
  if (n == nullptr) return "<missing>";
  xmlChar* content = xmlNodeGetContent(n);
  std::string s(str(content));
  xmlFree(content);
  return s;
}

// The value of attribute `name` ("" if absent); "<missing>" if there is no
// node.
inline std::string attribute(const xmlNode* n, const char* name) {
  if (n == nullptr) return "<missing>";
  xmlChar* value = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
  std::string s(str(value));
  xmlFree(value);
  return s;
}

// The namespace prefixes a document declares but none of its elements and
// attributes is in, space-separated in document order ("" when each
// declaration is used).
inline std::string unused_declarations(const xmlDoc* doc) {
  std::vector<std::string> declared;
  std::vector<std::string> used;
  auto in = [](const std::vector<std::string>& v, std::string_view s) {
    for (const std::string& x : v)
      if (x == s) return true;
    return false;
  };
  auto walk = [&](auto& self, const xmlNode* n) -> void {
    for (const xmlNs* d = n->nsDef; d != nullptr; d = d->next)
      declared.emplace_back(str(d->prefix));
    if (n->ns != nullptr) used.emplace_back(str(n->ns->prefix));
    for (const xmlAttr* a = n->properties; a != nullptr; a = a->next)
      if (a->ns != nullptr) used.emplace_back(str(a->ns->prefix));
    for (const xmlNode* c : element_children(n)) self(self, c);
  };
  walk(walk, xmlDocGetRootElement(doc));
  std::string unused;
  for (const std::string& d : declared)
    if (!in(used, d)) unused += (unused.empty() ? "" : " ") + d;
  return unused;
}

}  // namespace wsb::testing
