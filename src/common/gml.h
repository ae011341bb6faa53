// What the GML 3 encodings of BuildingCollection share: the namespace, the
// coordinate reference system, the footprint as a gml:posList, and the
// constraints a building must meet to be a valid GML feature. The element
// layout each codec writes is described in docs/reference/payloads.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/payload.h"

namespace wsb::gml {

inline constexpr const char* kNamespace = "http://www.opengis.net/gml";
// ETRS89 / TM35FIN, the projected system the generated coordinates lie in
// (eastings 380,000-390,000 m, northings 6,670,000-6,680,000 m).
inline constexpr const char* kSrsName = "urn:ogc:def:crs:EPSG::3067";
inline constexpr const char* kSrsDimension = "2";

// Why `b` cannot be written as a GML building feature, or empty: its id
// must be an NCName (it becomes gml:id, an xs:ID; ASCII letters, digits,
// '_', '-' and '.', not starting with a digit, '-' or '.'), and its
// footprint a closed ring of at least 4 points (a gml:LinearRing).
std::string problem(const Building& b);

// Appends "x1 y1 x2 y2 ..." (shortest round-trip form of each double), the
// content of a gml:posList with srsDimension 2.
void append_pos_list(const std::vector<Point>& ring, std::string& out);

// Parses a gml:posList with srsDimension 2 into `out` (appending). Returns
// why it is not one (a token that is not a number, an odd count), or empty.
std::string parse_pos_list(std::string_view text, std::vector<Point>& out);

}  // namespace wsb::gml
