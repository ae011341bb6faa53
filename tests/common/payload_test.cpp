#include "common/payload.h"

#include <gtest/gtest.h>

#include "common/base64.h"
#include "common/codec.h"
#include "conformance_cases.h"

namespace wsb {
namespace {

TEST(Payload, GenerationIsDeterministicAndSeedDependent) {
  for (const char* label : {"ints/200", "strings/400", "objects/800", "message-a/100",
                            "message-b/128KiB", "binary/1KiB", "gml/10"}) {
    const PayloadSpec spec = parse_spec(label);
    EXPECT_TRUE(generate(spec) == generate(spec)) << label;
    EXPECT_FALSE(generate(spec, 1) == generate(spec, 2)) << label;
  }
}

TEST(Payload, CatalogueShapesMatchThePapers) {
  const auto a = std::get<Message>(generate(parse_spec("message-a/100")));
  ASSERT_EQ(a.records.size(), 100u);
  EXPECT_TRUE(a.attachment.empty());
  for (const auto& r : a.records) EXPECT_EQ(r.title.size() + r.author.size() + r.body.size(), 150u);
  // 100 records x (150 text + 30 integer bytes) plus the metadata.
  EXPECT_EQ(
      raw_size(a) - (a.meta.recipient.size() + a.meta.sender.size() + a.meta.auth_token.size() + 8),
      18000u);

  const auto b = std::get<Message>(generate(parse_spec("message-b/128KiB")));
  EXPECT_TRUE(b.records.empty());
  EXPECT_EQ(b.attachment.size(), 131072u);
  EXPECT_EQ(b.meta.auth_token.size(), a.meta.auth_token.size());

  EXPECT_EQ(std::get<IntArray>(generate(parse_spec("ints/3200"))).values.size(), 3200u);
  EXPECT_EQ(std::get<Binary>(generate(parse_spec("binary/1MiB"))).data.size(), 1u << 20);
  const auto gml = std::get<BuildingCollection>(generate(parse_spec("gml/10")));
  ASSERT_EQ(gml.buildings.size(), 10u);
  for (const auto& bldg : gml.buildings) {
    EXPECT_EQ(bldg.footprint.front(), bldg.footprint.back()) << "ring must be closed";
  }
}

TEST(Payload, PlainStringsAreTheStudiesAsciiText) {
  for (const char* label : {"strings/800", "objects/200", "message-a/100", "gml/10"}) {
    const Payload p = generate(parse_spec(label));
    std::vector<std::string> texts;
    if (const auto* s = std::get_if<StringArray>(&p)) texts = s->values;
    if (const auto* o = std::get_if<ObjectArray>(&p))
      for (const auto& v : o->values) texts.push_back(v.name);
    if (const auto* m = std::get_if<Message>(&p)) {
      texts = {m->meta.recipient, m->meta.sender, m->meta.auth_token};
      for (const auto& r : m->records) texts.insert(texts.end(), {r.title, r.author, r.body});
    }
    if (const auto* g = std::get_if<BuildingCollection>(&p))
      for (const auto& b : g->buildings) texts.push_back(b.name);
    ASSERT_FALSE(texts.empty()) << label;
    for (const auto& t : texts)
      EXPECT_EQ(t.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "0123456789 "),
                std::string::npos)
          << label << ": '" << t << "'";
  }
}

TEST(Payload, EscapedVariantDiffersOnlyWhereThereAreStrings) {
  EXPECT_FALSE(generate(parse_spec("message-a/100")) ==
               generate(parse_spec("message-a/100:escaped")));
  PayloadSpec ints = parse_spec("ints/200");
  PayloadSpec escaped_ints = ints;
  escaped_ints.strings = Strings::escaped;
  EXPECT_TRUE(generate(ints) == generate(escaped_ints));
  EXPECT_EQ(escaped_ints.label(), "ints/200") << "the suffix only where the payload changes";
}

TEST(Payload, AFixedFractionOfEscapedStringsNeedsEscaping) {
  const auto strings = std::get<StringArray>(generate(parse_spec("strings/800:escaped"))).values;
  std::size_t special = 0;
  for (const auto& s : strings)
    if (s.find_first_of("<>&\"'\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f"
                        "\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f"
                        "\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xab\xac\xad\xae\xaf"
                        "\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xbb\xbc\xbd\xbe\xbf") !=
        std::string::npos)
      ++special;
  // Every kSpecialStringPeriod-th string is special; a short one may draw
  // no special token, so allow a little slack below the exact fraction.
  EXPECT_LE(special, strings.size() / kSpecialStringPeriod);
  EXPECT_GE(special, strings.size() / kSpecialStringPeriod * 8 / 10);
  for (const auto& s : strings) {
    EXPECT_NE(s.front(), ' ');
    EXPECT_NE(s.back(), ' ');
  }
}

TEST(Payload, LabelsRoundTripAndBadLabelsAreRejected) {
  for (const char* label :
       {"text", "ints/200", "message-a/100", "message-b/128KiB", "binary/64MiB", "gml/10000",
        "strings/800:escaped", "message-b/128KiB:escaped", "gml/10:escaped"})
    EXPECT_EQ(parse_spec(label).label(), label);
  EXPECT_EQ(parse_spec("binary/1048576").label(), "binary/1MiB");
  EXPECT_EQ(parse_spec("objects/200:escaped").strings, Strings::escaped);
  EXPECT_EQ(parse_spec("objects/200").strings, Strings::plain);
  for (const char* bad :
       {"", "ints", "ints/", "ints/x", "nope/3", "text/3", "binary/1GiBx", "ints/200:escaped",
        "binary/1MiB:escaped", "text:escaped", "strings/8:plain", "strings:escaped"})
    EXPECT_THROW(parse_spec(bad), std::invalid_argument) << bad;
}

TEST(Payload, DifferencesAreLocated) {
  IntArray a{{1, 2, 3}};
  IntArray b{{1, 5, 3}};
  EXPECT_EQ(describe_difference(a, a), "");
  EXPECT_EQ(describe_difference(a, b), "ints[1] differs");
  EXPECT_EQ(describe_difference(a, Text{"x"}), "payload types differ");
}

TEST(Base64, RoundTripsEveryByteAndRejectsJunk) {
  const Bytes all = testing::all_byte_values();
  const std::string text = base64_encode(all);
  EXPECT_EQ(text.size(), 344u);
  Bytes back;
  base64_decode(text, back);
  EXPECT_EQ(back, all);
  base64_decode("", back);
  EXPECT_TRUE(back.empty());
  base64_decode("QUJD\nREVG\r\n", back);  // MIME-style line breaks are fine
  EXPECT_EQ(back, (Bytes{'A', 'B', 'C', 'D', 'E', 'F'}));
  EXPECT_THROW(base64_decode("QUJ*", back), DecodeError);
  EXPECT_THROW(base64_decode("QUJDR", back), DecodeError);
  EXPECT_THROW(base64_decode("QQ=", back), DecodeError);
}

}  // namespace
}  // namespace wsb
