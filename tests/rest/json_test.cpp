// The json codec's buildings: GeoJSON's FeatureCollection shape, checked in
// an independent RapidJSON DOM, and strict rejection of other shapes.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/codec.h"

namespace wsb {
namespace {

class JsonCodecTest : public ::testing::Test {
 protected:
  std::string encode(const Payload& p) {
    std::string wire;
    codec_->encode(p, wire);
    return wire;
  }
  void expect_rejected(const std::string& wire, const std::string& fragment) {
    Payload p;
    try {
      codec_->decode(wire, p);
      ADD_FAILURE() << "accepted: " << wire;
    } catch (const DecodeError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "'" << e.what() << "' lacks '" << fragment << "'";
    }
  }
  // The double an object's value decodes to, written as `number`.
  double value_of(const std::string& number) {
    Payload out;
    codec_->decode(R"({"objects":[{"id":1,"name":"a","value":)" + number + R"(,"active":true}]})",
                   out);
    return std::get<ObjectArray>(out).values.at(0).value;
  }
  static std::string feature(const std::string& type, const std::string& coordinates) {
    return R"({"buildings":{"type":"FeatureCollection","features":[{"type":"Feature","id":"b",)"
           R"("properties":{"name":"n","height":1.5,"floors":2},"geometry":{"type":")" +
           type + R"(","coordinates":)" + coordinates + "}}]}}";
  }

  std::unique_ptr<Codec> codec_ = find_codec("json").make();
};

// Found by the read-json fuzz target: RapidJSON 1.1 read 581e308 as
// -1.8e-306 (and 2e308 as NaN) without an error.
TEST_F(JsonCodecTest, NumbersBeyondTheDoubleRangeAreRefusedNotMisread) {
  for (const char* number : {"-581e308-0610459433", "581e308", "2e308", "1.8e308", "-1.8e308",
                             "0.0000000001e320", "1e99999999999"})
    // RapidJSON refuses some itself ("Number too big to be stored in double").
    expect_rejected(std::string(R"({"ints":[)") + number + "]}", "double");
  // In range, or inside a string, a number still decodes.
  const Payload text{Text{"9e999 \"1e400\" \\"}};
  Payload out;
  codec_->decode(encode(text), out);
  EXPECT_EQ(out, text);
  codec_->decode(R"({"ints":[1,-2,3]})", out);
  EXPECT_EQ(out, (Payload{IntArray{{1, -2, 3}}}));
  expect_rejected(R"({"ints":[1.7e308]})", "32-bit integer");
}

TEST_F(JsonCodecTest, LoneSurrogateEscapesAreRefusedSinceTheyAreNotUtf8) {
  // Found by the decode-json fuzz target: RapidJSON 1.1 decoded "\udc00" to
  // bytes that are not UTF-8, and the codec's own output was then refused.
  for (const char* text : {R"(a\udc00b)", R"(\uDFFF)", R"(\ud800\udc00\udc00)"})
    expect_rejected(std::string(R"({"strings":[")") + text + "\"]}", "surrogate");
  expect_rejected(R"({"strings":["\ud800x"]})", "surrogate");
  // A pair is one character, and the raw UTF-8 of U+FFFD (EF BF BD) passes.
  Payload out;
  codec_->decode(std::string(R"({"strings":["a\ud83d\ude00b","\uFFFD",")") + "\xEF\xBF\xBD\"]}",
                 out);
  EXPECT_EQ(out, (Payload{StringArray{{"a\xF0\x9F\x98\x80"
                                       "b",
                                       "\xEF\xBF\xBD", "\xEF\xBF\xBD"}}}));
}

TEST_F(JsonCodecTest, NumbersBelowTheDoubleRangeAreReadSafelyAsRapidJsonWouldHave) {
  // Found by the read-json fuzz target: RapidJSON 1.1's full-precision
  // conversion read outside its table of powers of ten for the first (a
  // crash of the server) and gave -2.1e301 for the second. Every double is
  // now converted from its text by std::from_chars.
  EXPECT_EQ(value_of("0.1234567890123e-337"), 0.0);
  EXPECT_EQ(value_of("0." + std::string(30, '0') + "1e-300"), 0.0);
  EXPECT_EQ(value_of("0." + std::string(650, '0') + "1"), 0.0);
  EXPECT_TRUE(std::signbit(value_of("-1e-400")));
  // Values in range are exact, down to the subnormals.
  EXPECT_EQ(value_of("4.9e-324"), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(value_of("3e-324"), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(value_of("2e-324"), 0.0);
  EXPECT_EQ(value_of("2.2250738585072014e-308"), std::numeric_limits<double>::min());
  EXPECT_EQ(value_of("1.5e-5"), 1.5e-5);
  EXPECT_EQ(value_of("0.30000000000000004"), 0.1 + 0.2);
  EXPECT_EQ(value_of("1.7976931348623157e308"), std::numeric_limits<double>::max());
  expect_rejected(R"({"objects":[{"id":1,"name":"e-","value":1e999,"active":true}]})", "double");
  // Integers keep their types and limits beside such numbers.
  Payload out;
  codec_->decode(R"({"objects":[{"id":-2147483648,"name":"e-","value":7,"active":true}]})", out);
  EXPECT_EQ(out, (Payload{ObjectArray{{Object{INT32_MIN, "e-", 7.0, true}}}}));
  expect_rejected(R"({"objects":[{"id":2147483648,"name":"e-","value":7,"active":true}]})",
                  "32-bit integer");
}

TEST_F(JsonCodecTest, ZerosWithExponentsAreZero) {
  // RapidJSON 1.1's full-precision conversion took a zero whose exponent is
  // beyond its fast path (below -22, above 37) to DiyFp::Normalize with a
  // zero significand (__builtin_clzll(0), undefined): "0e-30" read as
  // 9.6e-240 (found by decode-json), "0e40" as -2.4e229.
  EXPECT_EQ(value_of("0e-30"), 0.0);
  EXPECT_FALSE(std::signbit(value_of("0e-30")));
  EXPECT_EQ(value_of("-0E-30"), 0.0);
  EXPECT_TRUE(std::signbit(value_of("-0E-30")));
  EXPECT_EQ(value_of("0e40"), 0.0);
  EXPECT_EQ(value_of("0.0e300"), 0.0);
  EXPECT_EQ(value_of("-0e+38"), 0.0);
  EXPECT_TRUE(std::signbit(value_of("-0e+38")));
  // A zero digit before the exponent of a nonzero number.
  EXPECT_EQ(value_of("10e40"), 1e41);
}

TEST_F(JsonCodecTest, SignificandsThatRoundPastTwoToThe64AreExact) {
  // RapidJSON 1.1's full-precision conversion rounded the 20-digit
  // significand 18446744073709551615 up past 2^64 to zero, then reached
  // __builtin_clzll(0) (found by decode-json).
  EXPECT_EQ(value_of("18446744073709551615.56"), 18446744073709551615.56);
  EXPECT_EQ(value_of("-1844674407370955161.59e1"), -18446744073709551615.9);
  EXPECT_EQ(value_of("18446744073709551615"), 18446744073709551615.0);
}

TEST_F(JsonCodecTest, BuildingsAreAGeoJsonFeatureCollection) {
  const auto gml = std::get<BuildingCollection>(generate(parse_spec("gml/3")));
  rapidjson::Document d;
  d.Parse<rapidjson::kParseFullPrecisionFlag>(encode(gml).c_str());
  ASSERT_FALSE(d.HasParseError());
  const auto& collection = d["buildings"];
  EXPECT_STREQ(collection["type"].GetString(), "FeatureCollection");
  const auto features = collection["features"].GetArray();
  ASSERT_EQ(features.Size(), gml.buildings.size());
  for (rapidjson::SizeType i = 0; i < features.Size(); ++i) {
    const auto& f = features[i];
    const Building& b = gml.buildings[i];
    EXPECT_STREQ(f["type"].GetString(), "Feature");
    EXPECT_EQ(f["id"].GetString(), b.id);
    EXPECT_EQ(f["properties"]["name"].GetString(), b.name);
    EXPECT_EQ(f["properties"]["height"].GetDouble(), b.height);
    EXPECT_EQ(f["properties"]["floors"].GetInt(), b.floors);
    EXPECT_STREQ(f["geometry"]["type"].GetString(), "Polygon");
    const auto rings = f["geometry"]["coordinates"].GetArray();
    ASSERT_EQ(rings.Size(), 1u);
    const auto ring = rings[0].GetArray();
    ASSERT_EQ(ring.Size(), b.footprint.size());
    for (rapidjson::SizeType j = 0; j < ring.Size(); ++j) {
      ASSERT_EQ(ring[j].Size(), 2u);
      EXPECT_EQ(ring[j][0].GetDouble(), b.footprint[j].x);
      EXPECT_EQ(ring[j][1].GetDouble(), b.footprint[j].y);
    }
  }
}

TEST_F(JsonCodecTest, OtherShapesOfBuildingsAreRejected) {
  Payload p;
  codec_->decode(feature("Polygon", "[[[1,2],[3,4],[1,2]]]"), p);
  EXPECT_EQ(std::get<BuildingCollection>(p),
            (BuildingCollection{{{"b", "n", 1.5, 2, {{1, 2}, {3, 4}, {1, 2}}}}}));
  expect_rejected(feature("LineString", "[[[1,2]]]"), R"("type" must be "Polygon")");
  expect_rejected(feature("Polygon", "[[[1,2]],[[3,4]]]"), "exactly one ring");
  expect_rejected(feature("Polygon", "[[[1,2,3]]]"), "two coordinates");
  expect_rejected(R"({"buildings":[{"id":"b"}]})", "buildings");
  expect_rejected(R"({"buildings":{"type":"Feature","features":[]}})",
                  R"("type" must be "FeatureCollection")");
}

}  // namespace
}  // namespace wsb
