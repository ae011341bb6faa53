// An independent check that XML carries a BuildingCollection as GML 3,
// walked in a libxml2 DOM (xml_test and soap_test use it on their codecs'
// output).
#pragma once

#include <libxml/tree.h>

#include <string>

#include "common/payload.h"

namespace wsb::testing {

inline constexpr const char* kGmlNamespace = "http://www.opengis.net/gml";

// Every way `collection` (the element holding the gml:featureMember
// children) differs from `expected` written as GML 3 building features of
// the application namespace `app_ns`: gml:featureMember/Building[@gml:id]
// with gml:name, height, floors and
// footprint/gml:Polygon[@srsName]/gml:exterior/gml:LinearRing/
// gml:posList[@srsDimension=2] holding 2 numbers per point. Empty if none.
std::string gml_collection_problems(const xmlNode* collection, const char* app_ns,
                                    const BuildingCollection& expected);

}  // namespace wsb::testing
