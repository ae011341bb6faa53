// Every registered codec against the same bar: exact round trips of edge
// values and catalogue payloads, and clean errors for malformed input.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "common/codec.h"
#include "conformance_cases.h"

namespace wsb {
namespace {

// Protocol Buffers has no end marker: a body cut exactly at a field boundary
// is a valid, shorter message (HTTP's Content-Length is what detects that).
// For such formats truncation must not reproduce the original payload.
const std::set<std::string> kFormatsWithoutEndMarker = {"protobuf"};

std::vector<std::string> codec_names() {
  std::vector<std::string> names;
  for (const auto& entry : all_codecs()) names.push_back(entry.name);
  return names;
}

// The codecs with a syntax to break (text/plain has none: tests/rest/text_codec_test.cpp).
std::vector<std::string> codecs_with_syntax() {
  std::vector<std::string> names;
  for (const auto& entry : all_codecs())
    if (!entry.texts_only) names.push_back(entry.name);
  return names;
}

std::string param_name(const std::string& codec, const std::string& suffix) {
  std::string name = codec + "_" + suffix;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// A codec and the index of a conformance payload it carries.
using CodecPayload = std::tuple<std::string, std::size_t>;

// Every codec x conformance payload the codec carries (Codec::unsupported
// is empty) and `also` accepts: only those are instantiated, so no test
// registers a case that does not apply.
std::vector<CodecPayload> carried_payloads(
    const std::function<bool(Codec&, const Payload&)>& also = {}) {
  std::vector<CodecPayload> out;
  const auto& cases = testing::conformance_payloads();
  for (const auto& entry : all_codecs()) {
    const auto codec = entry.make();
    for (std::size_t i = 0; i < cases.size(); ++i)
      if (codec->unsupported(cases[i].payload).empty() && (!also || also(*codec, cases[i].payload)))
        out.emplace_back(entry.name, i);
  }
  return out;
}

std::string round_trip_name(const ::testing::TestParamInfo<CodecPayload>& p) {
  return param_name(std::get<0>(p.param),
                    testing::conformance_payloads()[std::get<1>(p.param)].name);
}

class RoundTrip : public ::testing::TestWithParam<CodecPayload> {
 protected:
  void SetUp() override {
    codec_ = find_codec(std::get<0>(GetParam())).make();
    const auto& cases = testing::conformance_payloads();
    payload_ = cases.at(std::get<1>(GetParam())).payload;
  }
  std::unique_ptr<Codec> codec_;
  Payload payload_;
};

TEST_P(RoundTrip, DecodeOfEncodeIsIdentity) {
  const DoubleFidelity fidelity = codec_->double_fidelity();
  std::string wire;
  codec_->encode(payload_, wire);
  // Only a bare text is empty on the wire when its payload is.
  if (!find_codec(std::get<0>(GetParam())).texts_only) {
    ASSERT_FALSE(wire.empty());
  }
  EXPECT_FALSE(codec_->content_type().empty());
  Payload decoded;
  ASSERT_NO_THROW(codec_->decode(wire, decoded)) << wire.substr(0, 2000);
  EXPECT_EQ(describe_difference(payload_, decoded, fidelity), "");
  if (fidelity.exact()) {
    EXPECT_TRUE(payload_ == decoded);
  }

  // A second encode with the same codec instance reuses its state: it must
  // not leak the previous call's content.
  std::string again;
  codec_->encode(payload_, again);
  Payload decoded_again;
  codec_->decode(again, decoded_again);
  EXPECT_EQ(describe_difference(payload_, decoded_again, fidelity), "");
}

// A bare Message (what the beast client sends without copying it into a
// Payload) encodes to bytes the decoder reads back as that message, and,
// but for a multipart boundary drawn anew per message, to the bytes of the
// Payload holding it. The decode is the check that can fail where both
// encodes share one message writer (the default encode_message, json's and
// xml's encode_model): comparing their bytes compares that writer with
// itself. Instantiated for the message payloads only.
class MessageRoundTrip : public RoundTrip {};

TEST_P(MessageRoundTrip, EncodeMessageIsTheMessage) {
  const auto* message = std::get_if<Message>(&payload_);
  ASSERT_NE(message, nullptr);
  const DoubleFidelity fidelity = codec_->double_fidelity();
  std::string bare;
  codec_->encode_message(*message, bare);
  const bool multipart = codec_->content_type().find("multipart") != std::string::npos;
  Payload decoded;
  ASSERT_NO_THROW(codec_->decode(bare, decoded));
  EXPECT_EQ(describe_difference(payload_, decoded, fidelity), "");
  if (!multipart) {
    std::string whole;
    codec_->encode(payload_, whole);
    EXPECT_EQ(bare, whole);
  }
}

TEST_P(RoundTrip, FreshAllocationGivesTheSameBytesAndPayload) {
  // The allocation policy changes what is kept between calls, never what is
  // written or read: both policies, alternated on one instance, agree.
  const DoubleFidelity fidelity = codec_->double_fidelity();
  std::string reused;
  codec_->encode(payload_, reused);
  for (const Allocation allocation : {Allocation::fresh, Allocation::reuse, Allocation::fresh}) {
    codec_->set_allocation(allocation);
    std::string wire;
    codec_->encode(payload_, wire);
    // An MTOM package's boundary differs from call to call.
    if (codec_->content_type().find("multipart") == std::string::npos) {
      EXPECT_EQ(wire, reused);
    }
    Payload decoded;
    ASSERT_NO_THROW(codec_->decode(wire, decoded));
    EXPECT_EQ(describe_difference(payload_, decoded, fidelity), "");
    Payload decoded_again;
    ASSERT_NO_THROW(codec_->decode(reused, decoded_again));
    EXPECT_EQ(describe_difference(payload_, decoded_again, fidelity), "");
  }
}

// What the stage rows time: write repeated on one binding, unbind repeated
// on one read (unless it consumes the read), each after another payload's
// bind or read was replaced. Encode and decode need none of this (they bind
// before every write, read before every unbind), and comparing them with
// bind + write cannot show it: for most codecs they are bind + write.
// Instantiated for the codecs with an intermediate representation only.
class StageRoundTrip : public RoundTrip {};

TEST_P(StageRoundTrip, StageRowsRepeatTheirStepOnOneRepresentation) {
  CodecStages* stages = codec_->stages();
  ASSERT_NE(stages, nullptr);
  const DoubleFidelity fidelity = codec_->double_fidelity();
  const Payload other = std::holds_alternative<IntArray>(payload_) ? Payload{Text{"other"}}
                                                                   : Payload{IntArray{{7, 8, 9}}};
  if (stages->splits_encode()) {
    stages->bind(other);
    stages->bind(payload_);
    std::string first, second;
    stages->write(first);
    stages->write(second);
    for (const std::string* written : {&first, &second}) {
      Payload decoded;
      ASSERT_NO_THROW(codec_->decode(*written, decoded));
      EXPECT_EQ(describe_difference(payload_, decoded, fidelity), "");
    }
  }
  if (stages->splits_decode()) {
    std::string wire, other_wire;
    codec_->encode(payload_, wire);
    codec_->encode(other, other_wire);
    stages->read(other_wire);
    stages->read(wire);
    Payload first;
    stages->unbind(first);
    EXPECT_EQ(describe_difference(payload_, first, fidelity), "");
    if (!stages->unbind_consumes()) {
      Payload second;
      stages->unbind(second);
      EXPECT_EQ(describe_difference(payload_, second, fidelity), "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, RoundTrip, ::testing::ValuesIn(carried_payloads()),
                         round_trip_name);
INSTANTIATE_TEST_SUITE_P(AllCodecs, MessageRoundTrip,
                         ::testing::ValuesIn(carried_payloads([](Codec&, const Payload& p) {
                           return std::holds_alternative<Message>(p);
                         })),
                         round_trip_name);
INSTANTIATE_TEST_SUITE_P(AllCodecs, StageRoundTrip,
                         ::testing::ValuesIn(carried_payloads([](Codec& codec, const Payload&) {
                           return codec.stages() != nullptr;
                         })),
                         round_trip_name);

class Malformed : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { codec_ = find_codec(GetParam()).make(); }

  // Decoding `wire` must throw DecodeError, or, for formats without an end
  // marker, produce something other than `original`.
  void expect_rejected(std::string_view wire, const Payload& original, const std::string& what) {
    Payload decoded;
    try {
      codec_->decode(wire, decoded);
    } catch (const DecodeError& e) {
      EXPECT_NE(std::string(e.what()), "") << what;
      return;
    }
    if (kFormatsWithoutEndMarker.count(GetParam()) != 0) {
      EXPECT_FALSE(decoded == original) << what << " decoded to the original payload";
    } else {
      ADD_FAILURE() << what << ": decode succeeded on malformed input";
    }
  }

  std::unique_ptr<Codec> codec_;
};

TEST_P(Malformed, EmptyInputIsRejected) {
  Payload decoded;
  EXPECT_THROW(codec_->decode("", decoded), DecodeError);
}

TEST_P(Malformed, GarbageIsRejected) {
  Payload decoded;
  std::string garbage;
  for (int i = 0; i < 512; ++i) garbage.push_back(static_cast<char>((i * 73 + 11) % 256));
  EXPECT_THROW(codec_->decode(garbage, decoded), DecodeError);
  EXPECT_THROW(codec_->decode("not a document at all", decoded), DecodeError);
}

TEST_P(Malformed, TruncationsAreRejected) {
  for (const char* label : {"objects/200", "message-a/100", "message-b/128KiB", "gml/3"}) {
    const Payload original = generate(parse_spec(label));
    std::string wire;
    codec_->encode(original, wire);
    // Cut points spread over the whole body, the last one just before its
    // final significant byte (trailing white space is not content).
    const std::size_t last = wire.find_last_not_of(" \t\r\n");
    for (const std::size_t cut : {std::size_t{1}, wire.size() / 7, wire.size() / 3, wire.size() / 2,
                                  wire.size() * 5 / 6, last}) {
      expect_rejected(std::string_view(wire).substr(0, cut), original,
                      std::string(label) + " cut at " + std::to_string(cut) + " of " +
                          std::to_string(wire.size()));
    }
  }
}

TEST_P(Malformed, CodecSurvivesBadInputAndDecodesNextGoodOne) {
  const Payload original = generate(parse_spec("objects/200"));
  std::string wire;
  codec_->encode(original, wire);
  Payload decoded;
  EXPECT_ANY_THROW(codec_->decode(std::string_view(wire).substr(0, wire.size() / 2), decoded));
  codec_->decode(wire, decoded);
  EXPECT_EQ(describe_difference(original, decoded, codec_->double_fidelity()), "");
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, Malformed, ::testing::ValuesIn(codecs_with_syntax()),
                         [](const auto& p) { return param_name(p.param, "x"); });

TEST(Fidelity, ToleranceAppliesOnlyToDoubles) {
  const DoubleFidelity loose{1e-14, 1e-290};
  const ObjectArray a{{{1, "n", 0.3, true}}};
  const ObjectArray near{{{1, "n", 0.30000000000000004, true}}};
  const ObjectArray far{{{1, "n", 0.3001, true}}};
  const ObjectArray renamed{{{1, "m", 0.3, true}}};
  EXPECT_NE(describe_difference(a, near), "") << "exact by default";
  EXPECT_EQ(describe_difference(a, near, loose), "");
  EXPECT_NE(describe_difference(a, far, loose), "");
  EXPECT_NE(describe_difference(a, renamed, loose), "");
  EXPECT_EQ(describe_difference(ObjectArray{{{1, "n", 1e-300, true}}},
                                ObjectArray{{{1, "n", 0.0, true}}}, loose),
            "");
}

TEST(Registry, ListsTheElevenCodecsAndRejectsUnknownNames) {
  EXPECT_EQ(codec_names(), (std::vector<std::string>{"soap", "soap-mtom", "soap-swa", "xmlrpc",
                                                     "json", "json-simdjson", "xml", "xml-dom",
                                                     "xml-unwrapped", "protobuf", "text"}));
  EXPECT_THROW(find_codec("corba"), std::invalid_argument);
}

}  // namespace
}  // namespace wsb
