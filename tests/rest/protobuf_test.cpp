// The protobuf codec, checked against hand-built wire bytes (independent of
// the generated code): schema mapping, packed sizes, and rejection of
// unset oneofs, out-of-range ttl, wrong wire types, invalid UTF-8, garbage
// and truncation.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "common/codec.h"

namespace wsb {
namespace {

// ---- a minimal protobuf wire writer for building test bodies ----

enum WireType { kVarint = 0, kFixed64 = 1, kLen = 2 };

std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string tag(int field, WireType type) {
  return varint(static_cast<std::uint64_t>(field) << 3 | type);
}
// int32 and int64 travel as the two's complement 64-bit value.
std::string int_field(int field, std::int64_t v) {
  return tag(field, kVarint) + varint(static_cast<std::uint64_t>(v));
}
std::string len_field(int field, const std::string& body) {
  return tag(field, kLen) + varint(body.size()) + body;
}
std::string double_field(int field, double v) {
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &v, 8);  // little-endian host, as protobuf's fixed64
  return tag(field, kFixed64) + bytes;
}

// Field numbers of src/rest/wsbench.proto.
constexpr int kText = 1, kInts = 2, kObjects = 4, kMessage = 5, kBinary = 6, kBuildings = 7,
              kMessages = 8;
constexpr int kRecords = 5, kTtl = 9;

class ProtobufCodecTest : public ::testing::Test {
 protected:
  std::string encode(const Payload& p) {
    std::string wire;
    codec_->encode(p, wire);
    return wire;
  }
  Payload decode(std::string_view wire) {
    Payload p;
    codec_->decode(wire, p);
    return p;
  }
  void expect_rejected(std::string_view wire, const std::string& fragment = "") {
    Payload p;
    ::testing::internal::CaptureStderr();
    try {
      codec_->decode(wire, p);
      ::testing::internal::GetCapturedStderr();
      ADD_FAILURE() << "accepted " << wire.size() << " bytes";
    } catch (const DecodeError& e) {
      // libprotobuf's own log lines (e.g. for invalid UTF-8) are silenced.
      EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("protobuf: ", 0), 0u) << what;
      EXPECT_NE(what.find(fragment), std::string::npos) << what << " lacks " << fragment;
    }
  }

  std::unique_ptr<Codec> codec_ = find_codec("protobuf").make();
};

TEST_F(ProtobufCodecTest, WireMatchesTheSchema) {
  EXPECT_EQ(encode(Text{"hi"}), len_field(kText, "hi"));
  // proto3 oneof members keep presence: an empty text still names its kind.
  EXPECT_EQ(encode(Text{""}), len_field(kText, ""));
  EXPECT_EQ(encode(Binary{{0, 0xff}}), len_field(kBinary, std::string("\0\xff", 2)));
  EXPECT_EQ(encode(IntArray{}), len_field(kInts, ""));
  EXPECT_EQ(encode(ObjectArray{{{-1, "n", 0.5, true}}}),
            len_field(kObjects, len_field(1, int_field(1, -1) + len_field(2, "n") +
                                                 double_field(3, 0.5) + int_field(4, 1))));
  // Footprints are packed columns of xs and ys.
  std::string xs = std::string(8, '\0') + std::string(8, '\0'), ys = xs;
  const double pts[] = {1.5, -2.0, 3.25, 4.0};
  std::memcpy(xs.data(), &pts[0], 8);
  std::memcpy(xs.data() + 8, &pts[2], 8);
  std::memcpy(ys.data(), &pts[1], 8);
  std::memcpy(ys.data() + 8, &pts[3], 8);
  EXPECT_EQ(encode(BuildingCollection{{{"b", "", 0.0, 3, {{1.5, -2.0}, {3.25, 4.0}}}}}),
            len_field(kBuildings, len_field(1, len_field(1, "b") + int_field(4, 3) +
                                                   len_field(5, xs) + len_field(6, ys))));
  // Empty records and attachment are left out and decode back to empty.
  const Payload empty_message = Message{{"r", "", "", 7}, {}, {}};
  EXPECT_EQ(encode(empty_message), len_field(kMessage, len_field(1, "r") + int_field(4, 7)));
  EXPECT_TRUE(decode(encode(empty_message)) == empty_message);
}

TEST_F(ProtobufCodecTest, MessageListIsARepeatedMessageInFieldEight) {
  const Message a{{"r", "", "", 7}, {}, {}};
  const Message b{{"", "s", "", 0}, {}, {0xff}};
  const std::string a_wire = len_field(1, "r") + int_field(4, 7);
  const std::string b_wire = len_field(2, "s") + len_field(6, "\xff");
  EXPECT_EQ(encode(MessageList{{a, b}}),
            len_field(kMessages, len_field(1, a_wire) + len_field(1, b_wire)));
  EXPECT_TRUE(decode(encode(MessageList{{a, b}})) == Payload(MessageList{{a, b}}));
  // An empty list keeps the oneof's presence and decodes to a list.
  EXPECT_EQ(encode(MessageList{}), len_field(kMessages, ""));
  EXPECT_TRUE(decode(len_field(kMessages, "")) == Payload(MessageList{}));
  // A message with no fields set is still one element.
  EXPECT_TRUE(decode(len_field(kMessages, len_field(1, ""))) == Payload(MessageList{{Message{}}}));
  // The elements are checked like a lone message.
  expect_rejected(len_field(kMessages, len_field(1, len_field(kRecords, int_field(kTtl, 40000)))),
                  "ttl 40000 is out of 16-bit range");
  expect_rejected(len_field(kMessages, len_field(1, int_field(15, 1))), "message has unknown");
  expect_rejected(len_field(kMessages, int_field(2, 1)), "message list has unknown");
}

TEST_F(ProtobufCodecTest, IntsAreOnePackedRun) {
  const auto ints = std::get<IntArray>(generate(parse_spec("ints/200")));
  std::size_t packed = 0;
  for (const auto v : ints.values)
    packed += varint(static_cast<std::uint64_t>(static_cast<std::int64_t>(v))).size();
  // Response{ints = Ints{values = [packed run]}}: one tag and length at
  // each level, no per-element tags.
  const std::size_t inner = 1 + varint(packed).size() + packed;
  const std::size_t expected = 1 + varint(inner).size() + inner;
  EXPECT_EQ(encode(ints).size(), expected);
  // Negative int32 values cost 10 bytes each, as protobuf specifies.
  EXPECT_EQ(encode(IntArray{{-1}}).size(), 1u + 1u + 1u + 1u + 10u);
}

TEST_F(ProtobufCodecTest, AcceptsTheUnpackedFormToo) {
  // Parsers must accept repeated scalars either way.
  const std::string unpacked = len_field(kInts, int_field(1, 5) + int_field(1, -3));
  EXPECT_TRUE(decode(unpacked) == Payload(IntArray{{5, -3}}));
}

TEST_F(ProtobufCodecTest, RejectsAnUnsetOneof) {
  expect_rejected("", "no payload field is set");
  // A field the schema does not know is not a payload either.
  expect_rejected(int_field(15, 1), "unknown fields");
}

TEST_F(ProtobufCodecTest, RejectsTtlOutsideInt16) {
  const auto body = [](std::int64_t ttl) {
    return len_field(kMessage, len_field(kRecords, int_field(kTtl, ttl)));
  };
  expect_rejected(body(32768), "ttl 32768 is out of 16-bit range");
  expect_rejected(body(-32769), "ttl -32769 is out of 16-bit range");
  const auto ok = std::get<Message>(decode(body(-32768)));
  ASSERT_EQ(ok.records.size(), 1u);
  EXPECT_EQ(ok.records[0].ttl, -32768);
}

TEST_F(ProtobufCodecTest, RejectsWrongWireTypes) {
  // text (a string) sent as a varint, and an object's id as a string: the
  // parser keeps such fields as unknown, the codec refuses them.
  expect_rejected(int_field(kText, 1), "unknown fields");
  expect_rejected(len_field(kObjects, len_field(1, len_field(1, "12"))), "object has unknown");
  expect_rejected(len_field(kBuildings, len_field(1, len_field(5, std::string(16, '\0')) +
                                                         len_field(6, std::string(8, '\0')))),
                  "footprint has 2 x and 1 y coordinates");
}

TEST_F(ProtobufCodecTest, RejectsInvalidUtf8InStrings) {
  expect_rejected(len_field(kText, "\xC3\x28"), "malformed");
  expect_rejected(len_field(kObjects, len_field(1, len_field(2, "\xF0\x9F\x98"))), "malformed");
  // The same bytes are fine where the schema says bytes.
  EXPECT_TRUE(decode(len_field(kBinary, "\xC3\x28")) == Payload(Binary{{0xC3, 0x28}}));
}

TEST_F(ProtobufCodecTest, StaysSilentWhileOtherCodecsComeAndGo) {
  // The log is silenced for each codec's lifetime: destroying another codec
  // must not end this one's silence.
  find_codec("protobuf").make().reset();
  expect_rejected(len_field(kText, "\xC3\x28"), "malformed");
  // The read stage alone is as quiet as decode.
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(codec_->stages()->read(len_field(kText, "\xC3\x28")), DecodeError);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_F(ProtobufCodecTest, RejectsGarbage) {
  expect_rejected(std::string(16, '\xff'), "malformed");
  expect_rejected("not a protobuf body", "malformed");
  expect_rejected(tag(kText, kLen) + varint(1000) + "short", "malformed");
}

TEST_F(ProtobufCodecTest, RejectsEveryTruncation) {
  // The whole body is one length-delimited field (the oneof), so any cut
  // lands inside a field: inside its tag, its length, or short of the length
  // it declares. (A cut exactly between two top-level fields would parse as
  // a shorter message; this schema has no such boundary.)
  for (const char* label : {"message-a/3", "objects/20", "gml/1", "message-b/1KiB", "text"}) {
    const std::string wire = encode(generate(parse_spec(label)));
    for (std::size_t cut = 0; cut < wire.size(); ++cut) {
      Payload p;
      EXPECT_THROW(codec_->decode(std::string_view(wire).substr(0, cut), p), DecodeError)
          << label << " cut at " << cut << " of " << wire.size();
    }
    EXPECT_NO_THROW(decode(wire)) << label;
  }
}

TEST_F(ProtobufCodecTest, LargestBinaryRoundTrips) {
  // Past the 64 MiB total-size limit older protobuf stream parsers had.
  Binary big;
  big.data.resize((64u << 20) + 1024);
  for (std::size_t i = 0; i < big.data.size(); ++i)
    big.data[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
  const Payload p = big;
  const std::string wire = encode(p);
  EXPECT_EQ(wire.size(), big.data.size() + 1 + varint(big.data.size()).size());
  EXPECT_TRUE(decode(wire) == p);
}

TEST_F(ProtobufCodecTest, StagesReuseTheirMessagesAcrossKinds) {
  // bind reuses the encode-side message in place when the kind repeats and
  // replaces it when the kind changes; nothing may leak between payloads.
  CodecStages& stages = *codec_->stages();
  const Payload a = generate(parse_spec("objects/20"));
  const Payload b = ObjectArray{{{1, "only", 2.0, false}}};
  const Payload c = Text{"switch"};
  const Payload d =
      MessageList{{std::get<Message>(generate(parse_spec("message-a/3"))), Message{}}};
  const Payload e = MessageList{{Message{{"x", "y", "z", 1}, {}, {}}}};
  for (const Payload* p : {&a, &b, &c, &a, &d, &e, &d, &b}) {
    std::string wire;
    stages.bind(*p);
    stages.write(wire);
    stages.read(wire);
    Payload decoded;
    stages.unbind(decoded);
    EXPECT_TRUE(decoded == *p);
  }
}

}  // namespace
}  // namespace wsb
