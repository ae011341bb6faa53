// The text/plain codec: a Text as its UTF-8 bytes and nothing else. The
// conformance suite covers its round trips; here, what it refuses.
#include <gtest/gtest.h>

#include "common/codec.h"

namespace wsb {
namespace {

TEST(TextCodec, AnyUtf8IsATextAndTheBytesAreTheWire) {
  auto codec = find_codec("text").make();
  for (const std::string& body :
       {std::string(), std::string("not a document at all"), std::string("<b>&amp;</b> {\"x\":1}"),
        std::string("caf\xC3\xA9 \xF0\x9F\x98\x80"), std::string("a\0b", 3)}) {
    Payload out;
    codec->decode(body, out);
    EXPECT_EQ(out, Payload{Text{body}});
    std::string wire;
    codec->encode(out, wire);
    EXPECT_EQ(wire, body);
  }
  EXPECT_EQ(codec->content_type(), "text/plain; charset=utf-8");
}

TEST(TextCodec, BytesThatAreNotUtf8AreRefused) {
  auto codec = find_codec("text").make();
  for (const std::string& body : {std::string("stray \xFF byte"), std::string("..\xC0\xAF.."),
                                  std::string("cut \xE2\x82"), std::string("\xED\xA0\x80")}) {
    Payload out;
    EXPECT_THROW(codec->decode(body, out), DecodeError) << body;
  }
}

TEST(TextCodec, CarriesOnlyTexts) {
  const auto& entry = find_codec("text");
  EXPECT_TRUE(entry.texts_only);
  auto codec = entry.make();
  EXPECT_EQ(codec->unsupported(Text{"x"}), "");
  const Payload ints = IntArray{{1, 2}};
  EXPECT_NE(codec->unsupported(ints), "");
  std::string wire;
  EXPECT_THROW(codec->encode(ints, wire), std::invalid_argument);
  // Every other codec has a syntax.
  for (const auto& other : all_codecs()) {
    if (other.name != "text") {
      EXPECT_FALSE(other.texts_only) << other.name;
    }
  }
}

}  // namespace
}  // namespace wsb
