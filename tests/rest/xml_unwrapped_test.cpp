// xml-unwrapped: the xml codec with base64 on one line. Its bodies are the
// xml codec's but for the line breaks libxml2 puts in base64, and every XML
// decoder reads both.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/codec.h"
#include "conformance_cases.h"
#include "test_helpers.h"

namespace wsb {
namespace {

// The text of the one element the binary travels in (<attachment>, or
// <binary> with its namespace declaration), from the end of its start tag to
// its end tag.
std::string base64_text(const std::string& wire, const std::string& element) {
  const auto tag = wire.find("<" + element);
  const auto begin = tag == std::string::npos ? tag : wire.find('>', tag);
  const auto end = wire.find("</" + element + ">");
  if (begin == std::string::npos || end == std::string::npos) return {};
  return wire.substr(begin + 1, end - begin - 1);
}

class XmlUnwrappedTest : public ::testing::Test {
 protected:
  std::string encode(Codec& codec, const Payload& payload) {
    std::string wire;
    codec.encode(payload, wire);
    return wire;
  }

  std::unique_ptr<Codec> wrapped_ = find_codec("xml").make();
  std::unique_ptr<Codec> unwrapped_ = find_codec("xml-unwrapped").make();
  std::unique_ptr<Codec> dom_ = find_codec("xml-dom").make();
};

TEST_F(XmlUnwrappedTest, IsRegisteredAsTheXmlCodecsAlternative) {
  const CodecEntry& entry = find_codec("xml-unwrapped");
  EXPECT_EQ(entry.alternative_of, "xml");
  EXPECT_EQ(entry.decode_path_of, "");  // it writes bytes of its own
  EXPECT_EQ(unwrapped_->content_type(), "application/xml");
  EXPECT_EQ(find_codec("json-simdjson").alternative_of, "json");
}

// The one difference, payload by payload: the wrapped body with its base64
// text's line breaks taken out is the unwrapped body, byte for byte; where
// no binary is, the bodies are equal.
TEST_F(XmlUnwrappedTest, BodyIsTheWrappedOneWithoutItsBase64LineBreaks) {
  const std::pair<const char*, const char*> cases[] = {{"message-b/128KiB", "attachment"},
                                                       {"message-b/1KiB", "attachment"},
                                                       {"binary/1MiB", "binary"},
                                                       {"binary/1KiB", "binary"},
                                                       {"message-a/100", nullptr},
                                                       {"ints/800", nullptr},
                                                       {"gml/10", nullptr}};
  for (const auto& [label, element] : cases) {
    SCOPED_TRACE(label);
    const Payload payload = generate(parse_spec(label));
    const std::string wrapped = encode(*wrapped_, payload);
    const std::string unwrapped = encode(*unwrapped_, payload);
    if (element == nullptr) {
      // So the benchmarks skip it, as they skip MTOM without a binary.
      EXPECT_EQ(unwrapped, wrapped);
      EXPECT_EQ(unwrapped_->not_applicable(payload),
                "no binary: xml-unwrapped output identical to xml");
      continue;
    }
    EXPECT_EQ(unwrapped_->not_applicable(payload), "");
    EXPECT_EQ(wrapped_->not_applicable(payload), "");
    const std::string wrapped_text = base64_text(wrapped, element);
    const std::string text = base64_text(unwrapped, element);
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.find_first_of("\r\n"), std::string::npos);
    // libxml2 ends each full line of 72 characters but the last with CRLF.
    std::string joined = wrapped_text;
    joined.erase(
        std::remove_if(joined.begin(), joined.end(), [](char c) { return c == '\r' || c == '\n'; }),
        joined.end());
    EXPECT_EQ(text, joined);
    const std::size_t lines = (text.size() + 71) / 72;
    EXPECT_EQ(wrapped_text.size() - joined.size(), 2 * (lines - 1));
    EXPECT_EQ(unwrapped.size() + 2 * (lines - 1), wrapped.size());
    std::string expected = wrapped;
    expected.replace(wrapped.find(wrapped_text), wrapped_text.size(), joined);
    EXPECT_EQ(unwrapped, expected);
  }
}

// Every XML decoder reads either body to the same payload, and each codec
// reads the other's.
TEST_F(XmlUnwrappedTest, DecodersReadBothBodies) {
  for (const char* label : {"message-b/128KiB", "binary/1MiB", "message-a/100", "gml/10"}) {
    SCOPED_TRACE(label);
    const Payload payload = generate(parse_spec(label));
    for (Codec* writer : {wrapped_.get(), unwrapped_.get()}) {
      const std::string wire = encode(*writer, payload);
      for (Codec* reader : {wrapped_.get(), unwrapped_.get(), dom_.get()}) {
        Payload decoded;
        reader->decode(wire, decoded);
        EXPECT_EQ(describe_difference(payload, decoded), "");
      }
    }
  }
}

// The conformance payloads (empty binaries, edge texts) round-trip, under
// both allocation policies.
TEST_F(XmlUnwrappedTest, ConformancePayloadsRoundTrip) {
  for (const Allocation allocation : {Allocation::reuse, Allocation::fresh}) {
    unwrapped_->set_allocation(allocation);
    for (const auto& [name, payload] : testing::conformance_payloads()) {
      SCOPED_TRACE(name);
      if (!unwrapped_->unsupported(payload).empty()) continue;
      const std::string wire = encode(*unwrapped_, payload);
      Payload decoded;
      unwrapped_->decode(wire, decoded);
      EXPECT_EQ(describe_difference(payload, decoded), "");
    }
  }
}

}  // namespace
}  // namespace wsb
