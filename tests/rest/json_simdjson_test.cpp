// json-simdjson against json (RapidJSON) on the same bytes: what one accepts
// the other accepts with the same payload, and what one refuses the other
// refuses, for the inputs that broke RapidJSON once and for what On Demand
// reads lazily (unknown members, duplicates, trailing content).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "common/codec.h"

namespace wsb {
namespace {

class JsonSimdjsonTest : public ::testing::Test {
 protected:
  // The payload `codec` decodes `wire` to, or the DecodeError's message.
  static std::pair<std::optional<Payload>, std::string> outcome(Codec& codec,
                                                                const std::string& wire) {
    Payload p;
    try {
      codec.decode(wire, p);
    } catch (const DecodeError& e) {
      return {std::nullopt, e.what()};
    }
    return {p, ""};
  }
  // Both decoders agree on `wire`; `accepted` says which way.
  void expect_agree(const std::string& wire, bool accepted) {
    SCOPED_TRACE(std::to_string(wire.size()) + " bytes: " + wire.substr(0, 200));
    const auto [by_rapidjson, rapidjson_error] = outcome(*json_, wire);
    const auto [by_simdjson, simdjson_error] = outcome(*simdjson_, wire);
    EXPECT_EQ(by_rapidjson.has_value(), accepted) << rapidjson_error;
    EXPECT_EQ(by_simdjson.has_value(), accepted) << simdjson_error;
    if (by_rapidjson && by_simdjson) {
      EXPECT_EQ(describe_difference(*by_rapidjson, *by_simdjson), "");
    }
    if (!by_simdjson) {
      EXPECT_EQ(simdjson_error.rfind("json-simdjson: ", 0), 0u) << simdjson_error;
    }
  }
  static std::string object(const std::string& members) {
    return R"({"objects":[{)" + members + "}]}";
  }
  static std::string value(const std::string& number) {
    return object(R"("id":1,"name":"a","value":)" + number + R"(,"active":true)");
  }

  std::unique_ptr<Codec> json_ = find_codec("json").make();
  std::unique_ptr<Codec> simdjson_ = find_codec("json-simdjson").make();
};

TEST_F(JsonSimdjsonTest, IsADecodePathOfJsonWithJsonsBytes) {
  EXPECT_EQ(find_codec("json-simdjson").decode_path_of, "json");
  const Payload p = generate(parse_spec("message-b/48"));
  std::string a, b;
  json_->encode(p, a);
  simdjson_->encode(p, b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(simdjson_->content_type(), json_->content_type());
}

TEST_F(JsonSimdjsonTest, NumbersDecodeAsRapidJsonsCheckedPathDoes) {
  for (const char* n : {"0.1234567890123e-337", "4.9e-324", "3e-324", "2e-324", "-1e-400",
                        "2.2250738585072014e-308", "0.30000000000000004", "1.7976931348623157e308",
                        "0e-30", "-0E-30", "0e40", "-0e+38", "10e40", "18446744073709551615.56",
                        "18446744073709551615", "-1844674407370955161.59e1", "7", "-0", "1E2"})
    expect_agree(value(n), true);
  for (const char* n : {"581e308", "2e308", "1.8e308", "-1.8e308", "1e99999999999", "01", "1.",
                        ".5", "-", "+1", "1e", "0x10", "NaN", "Infinity", "\"1\"", "true"})
    expect_agree(value(n), false);
  // Integers keep their types and limits.
  for (const char* id : {"-2147483648", "2147483647"})
    expect_agree(object(std::string(R"("id":)") + id + R"(,"name":"a","value":1,"active":true)"),
                 true);
  for (const char* id : {"2147483648", "-2147483649", "1.0", "1e2", "9223372036854775808", "null"})
    expect_agree(object(std::string(R"("id":)") + id + R"(,"name":"a","value":1,"active":true)"),
                 false);
}

TEST_F(JsonSimdjsonTest, StringsAndEscapesDecodeAlike) {
  for (const char* s : {R"(a\ud83d\ude00b)", R"(\uFFFD)", "\xEF\xBF\xBD", R"(\"\\\/\b\f\n\r\t)",
                        R"(\u0000)", "caf\xC3\xA9"})
    expect_agree(std::string(R"({"strings":[")") + s + "\"]}", true);
  for (const char* s : {R"(a\udc00b)", R"(\uDFFF)", R"(\ud800\udc00\udc00)", R"(\ud800x)",
                        R"(\x41)", R"(\u12)", "\x01", "\xC0\xAF", "\xED\xA0\x80", "\xFF"})
    expect_agree(std::string(R"({"strings":[")") + s + "\"]}", false);
}

TEST_F(JsonSimdjsonTest, MembersInAnyOrderDuplicatesAndUnknownOnesDecodeAlike) {
  expect_agree(object(R"("active":false,"value":2.5,"name":"n","id":3)"), true);
  // The first of duplicate members counts (RapidJSON's FindMember).
  expect_agree(object(R"("id":1,"name":"a","id":2,"value":1,"active":true)"), true);
  expect_agree(object(R"("id":1,"name":"a","value":1,"active":true,"id":"x")"), true);
  // Unknown members are ignored, but must be valid JSON.
  expect_agree(
      object(R"("id":1,"x":{"y":[1,null,true,"s",{}]},"name":"a","value":1,"active":true)"), true);
  for (const char* bad :
       {"tru", "[1,]", "{\"a\":01}", "nul", "[1 2]", "{\"a\"}", "\"\\q\"", "1e999"})
    expect_agree(
        object(std::string(R"("id":1,"x":)") + bad + R"(,"name":"a","value":1,"active":true)"),
        false);
  for (const char* number : {"123456789012345678901234567890", "-0.0e-999999", "1e308"})
    expect_agree(
        object(std::string(R"("id":1,"x":)") + number + R"(,"name":"a","value":1,"active":true)"),
        true);
  // An escaped member name is the name it spells.
  expect_agree(object(R"("\u0069d":1,"name":"a","value":1,"active":true)"), true);
  // Missing members, and optional ones absent.
  expect_agree(object(R"("id":1,"name":"a","value":1)"), false);
  expect_agree(R"({"message":{"recipient":"r","sender":"s","authToken":"t","timestamp":1}})", true);
  expect_agree(R"({"message":{"recipient":"r","sender":"s","authToken":"t"}})", false);
}

TEST_F(JsonSimdjsonTest, TheBodyIsOneObjectWithOneMemberAndNothingAfter) {
  expect_agree(R"({"ints":[1,2]})", true);
  expect_agree(" \t\r\n{\"ints\":[1,2]} \n", true);
  for (const char* body : {R"({"ints":[1,2]} x)", R"({"ints":[1,2]}{})", R"({"ints":[1,2]},)",
                           R"({"ints":[1],"ints":[2]})", R"({"ints":[1],"text":"a"})", "{}", "[]",
                           "null", "1", R"("text")", R"({"ints":[1,2])", R"({"ints":[1,2]]})",
                           R"({"unknown":1})", R"({"ints":{}})", R"({"ints":[1,[2]]})", ""})
    expect_agree(body, false);
  // RapidJSON alone stopped at a NUL byte and ignored what followed it.
  for (const std::string tail : {"x", "{}", ""})
    expect_agree(std::string(R"({"ints":[1]})") + '\0' + tail, false);
}

TEST_F(JsonSimdjsonTest, DeepNestingIsRefusedNotRecursedInto) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  expect_agree(object(R"("id":1,"x":)" + deep + R"(,"name":"a","value":1,"active":true)"), false);
  expect_agree(R"({"ints":)" + deep + "}", false);
  // json's limit counts from the root object (level 1): here the object
  // array and its object are levels 2 and 3, so 253 levels in x are the
  // most it takes.
  for (const std::size_t levels : {253, 254}) {
    const std::string nested = std::string(levels, '[') + std::string(levels, ']');
    expect_agree(object(R"("id":1,"x":)" + nested + R"(,"name":"a","value":1,"active":true)"),
                 levels == 253);
  }
  // In a message list's record: list 2, message 3, records 4, record 5.
  for (const std::size_t levels : {251, 252}) {
    const std::string nested = std::string(levels, '[') + std::string(levels, ']');
    expect_agree(R"({"messages":[{"recipient":"r","sender":"s","authToken":"t","timestamp":1,)"
                 R"("records":[{"title":"t","author":"a","body":"b","sequence":1,"created":2,)"
                 R"("priority":3,"category":4,"flags":5,"ttl":6,"x":)" +
                     nested + "}]}]}",
                 levels == 251);
  }
  const std::string shallow = std::string(200, '[') + std::string(200, ']');
  expect_agree(object(R"("id":1,"x":)" + shallow + R"(,"name":"a","value":1,"active":true)"), true);
}

TEST_F(JsonSimdjsonTest, BinariesAndBuildingsDecodeAlike) {
  expect_agree(R"({"binary":"AAEC"})", true);
  expect_agree(R"({"binary":"AA\/C"})", true);  // JSON's escaped solidus is a base64 '/'
  for (const char* bad : {R"({"binary":"AAE"})", R"({"binary":"A*EC"})", R"({"binary":1})"})
    expect_agree(bad, false);
  const std::string head =
      R"({"buildings":{"type":"FeatureCollection","features":[{"type":"Feature","id":"b",)"
      R"("properties":{"name":"n","height":1.5,"floors":2},"geometry":{"type":"Polygon",)"
      R"("coordinates":)";
  expect_agree(head + "[[[1,2],[3,4],[1,2]]]}}]}}", true);
  for (const char* rings : {"[[[1,2]],[[3,4]]]", "[]", "[[[1,2,3]]]", "[[[1]]]", "[[1,2]]"})
    expect_agree(head + rings + "}}]}}", false);
  expect_agree(R"({"buildings":{"type":"Feature","features":[]}})", false);
  expect_agree(R"({"buildings":[{"id":"b"}]})", false);
}

TEST_F(JsonSimdjsonTest, ErrorsNameTheMemberAndTheCodec) {
  Payload p;
  try {
    simdjson_->decode(object(R"("id":"1","name":"a","value":1,"active":true)"), p);
    ADD_FAILURE() << "accepted";
  } catch (const DecodeError& e) {
    EXPECT_STREQ(e.what(), "json-simdjson: id is not a 32-bit integer");
  }
  try {
    simdjson_->decode(object(R"("id":1,"value":1,"active":true)"), p);
    ADD_FAILURE() << "accepted";
  } catch (const DecodeError& e) {
    EXPECT_STREQ(e.what(), "json-simdjson: missing member 'name'");
  }
}

}  // namespace
}  // namespace wsb
