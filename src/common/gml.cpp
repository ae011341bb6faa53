#include "common/gml.h"

#include <charconv>

namespace wsb::gml {
namespace {

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_xml_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_ncname(std::string_view s) {
  if (s.empty() || !(is_ascii_letter(s[0]) || s[0] == '_')) return false;
  for (const char c : s)
    if (!(is_ascii_letter(c) || is_digit(c) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

}  // namespace

std::string problem(const Building& b) {
  if (!is_ncname(b.id)) return "building id '" + b.id.substr(0, 40) + "' is not an NCName (gml:id)";
  if (b.footprint.size() < 4)
    return "building " + b.id + ": a gml:LinearRing needs at least 4 points, footprint has " +
           std::to_string(b.footprint.size());
  if (!(b.footprint.front() == b.footprint.back()))
    return "building " + b.id + ": footprint is not closed (first point != last point)";
  return {};
}

void append_pos_list(const std::vector<Point>& ring, std::string& out) {
  char buf[32];
  bool first = true;
  for (const auto& p : ring) {
    if (!first) out += ' ';
    first = false;
    out.append(buf, std::to_chars(buf, buf + sizeof buf, p.x).ptr);
    out += ' ';
    out.append(buf, std::to_chars(buf, buf + sizeof buf, p.y).ptr);
  }
}

std::string parse_pos_list(std::string_view s, std::vector<Point>& out) {
  double xy[2];
  int n = 0;
  std::size_t i = 0;
  for (;;) {
    while (i < s.size() && is_xml_space(s[i])) ++i;
    if (i == s.size()) break;
    const std::size_t start = i;
    while (i < s.size() && !is_xml_space(s[i])) ++i;
    const std::string_view token = s.substr(start, i - start);
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), xy[n]);
    if (ec != std::errc{} || end != token.data() + token.size())
      return "posList '" + std::string(token.substr(0, 40)) + "' is not a number";
    if (++n == 2) {
      out.push_back({xy[0], xy[1]});
      n = 0;
    }
  }
  if (n != 0) return "posList has an odd number of coordinates (srsDimension is 2)";
  return {};
}

}  // namespace wsb::gml
