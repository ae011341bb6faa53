// Content negotiation's shortcut for an Accept of exactly one media type
// against the general reading of the same ranges.

#include "rest/http_negotiation.h"

#include <gtest/gtest.h>

#include <string>

namespace wsb::rest {
namespace {

constexpr Format kFormats[] = {Format::json, Format::xml, Format::protobuf, Format::text};

// An Accept of exactly one media type picks what the same range does when
// it carries a parameter (";q=1", which the shortcut does not take), for
// every preference and whether text is allowed or not.
TEST(HttpNegotiation, ExactMediaTypeAgreesWithTheGeneralReading) {
  for (const Format asked : kFormats) {
    const std::string exact(media_type(asked));
    const std::string with_q = exact + ";q=1";
    for (const Format preferred : kFormats)
      for (const bool text_allowed : {false, true}) {
        const auto general = negotiate(with_q, text_allowed, preferred);
        EXPECT_EQ(negotiate(exact, text_allowed, preferred), general) << exact;
        ASSERT_TRUE(general.has_value() || (asked == Format::text && !text_allowed)) << exact;
        if (general) {
          EXPECT_EQ(*general, asked);
        }
      }
  }
}

TEST(HttpNegotiation, TypesDifferingFromTheExactOnesAreReadInFull) {
  EXPECT_EQ(negotiate("APPLICATION/XML", true, Format::json), Format::xml);
  EXPECT_EQ(negotiate("application/json;q=0, application/xml", true, Format::json), Format::xml);
  EXPECT_EQ(negotiate("application/json, */*;q=0.1", false, Format::xml), Format::json);
  EXPECT_EQ(negotiate("application/jsonx", true, Format::json), std::nullopt);
}

}  // namespace
}  // namespace wsb::rest
