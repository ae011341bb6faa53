// Nesting depth: a document nested far deeper than any payload is refused
// with DecodeError by every codec, and with the protocol's error by every
// stack x codec, which then serves the next client (a recursive parse of
// such a body once overflowed the server's stack and killed the process).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/codec.h"
#include "common/rpc_binding.h"
#include "common/service.h"
#include "common/transport.h"
#include "raw_http.h"
#include "stack_fixture.h"

namespace wsb {
namespace {

// Deep enough to overflow an 8 MiB stack in RapidJSON's recursive parse in
// an optimised build (100,000 levels do only under the sanitizers).
constexpr std::size_t kHostileDepth = 1'000'000;
constexpr std::string_view kMarker = "NESTING-MARKER";

std::string repeat(std::string_view s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

// `depth` levels of the codec's own nesting, well-formed: arrays for JSON
// (json, json-simdjson), elements for the XML codecs, groups for protobuf.
std::string nesting(std::string_view codec, std::size_t depth) {
  if (codec.starts_with("json")) return repeat("[", depth) + repeat("]", depth);
  if (codec == "protobuf") return repeat("\x0b", depth) + repeat("\x0c", depth);  // field 1 groups
  return repeat("<a>", depth) + repeat("</a>", depth);
}

// An echo of a text payload with `depth` levels of nesting where the
// payload goes: the JSON string replaced by arrays, the elements inserted
// before the XML element holding the text (markup inside a text element is
// text to gSOAP, not nesting). Protobuf has no text form to splice into:
// its body is the nesting alone.
std::string deep_body(std::string_view codec, std::string_view content, std::size_t depth) {
  if (codec == "protobuf") return nesting(codec, depth);
  std::string body = std::string(content);
  if (codec.starts_with("json")) {
    const std::string quoted = "\"" + std::string(kMarker) + "\"";
    const auto at = body.find(quoted);
    if (at == std::string::npos) throw std::logic_error("no marker in the echo request");
    return body.replace(at, quoted.size(), nesting(codec, depth));
  }
  const auto at = body.find(kMarker);
  if (at == std::string::npos) throw std::logic_error("no marker in the echo request");
  return body.insert(body.rfind('<', at), nesting(codec, depth));
}

// Codecs whose decoder counts depth itself; the others refuse any element
// the payload's shape has no place for, so depth never reaches the limit.
bool counts_depth(std::string_view codec) { return codec == "json" || codec == "xmlrpc"; }

const Payload& marker_payload() {
  static const Payload p = Text{std::string(kMarker)};
  return p;
}

// ---- per codec ----

class CodecNesting : public ::testing::TestWithParam<std::string> {};

TEST_P(CodecNesting, TooDeepDocumentIsRefusedWithDecodeError) {
  const CodecEntry& entry = find_codec(GetParam());
  auto codec = entry.make();
  std::string valid;
  codec->encode(marker_payload(), valid);
  Payload out;
  EXPECT_THROW(codec->decode(deep_body(GetParam(), valid, kHostileDepth), out), DecodeError);
  // Just over the limit is refused by the depth check, not by a later one.
  try {
    codec->decode(deep_body(GetParam(), valid, kMaxNestingDepth + 1), out);
    ADD_FAILURE() << "decoded a document nested beyond the limit";
  } catch (const DecodeError& e) {
    if (counts_depth(GetParam())) {
      EXPECT_NE(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
    }
  }
  // The codec still decodes a valid document afterwards.
  codec->decode(valid, out);
  EXPECT_EQ(describe_difference(marker_payload(), out), "");

  if (!entry.make_rpc) return;
  auto rpc = entry.make_rpc();
  std::string call;
  rpc->encode_call({.op = Operation::echo, .payload = &marker_payload()}, call);
  DecodedCall decoded;
  EXPECT_THROW(rpc->decode_call(deep_body(GetParam(), call, kHostileDepth), decoded), DecodeError);
  rpc->decode_call(call, decoded);
  EXPECT_EQ(describe_difference(marker_payload(), decoded.payload), "");
}

// Depth the limit admits is not refused for its depth: the decoder may
// still refuse its shape (no payload nests this deep), but not as too deep.
// Not protobuf: its own recursion limit (100) applies.
class CodecNestingLimit : public CodecNesting {};

bool under_our_limit(std::string_view codec) { return codec != "protobuf"; }

TEST_P(CodecNestingLimit, DepthWithinTheLimitIsNotRefusedAsTooDeep) {
  auto codec = find_codec(GetParam()).make();
  std::string valid;
  codec->encode(marker_payload(), valid);
  // The payload's own levels count towards the limit too.
  Payload out;
  try {
    codec->decode(deep_body(GetParam(), valid, kMaxNestingDepth / 2), out);
  } catch (const DecodeError& e) {
    EXPECT_EQ(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
  }
}

// JSON at exactly the limit (the root object and 255 arrays) is refused for
// its shape only; one level more is refused as too deep.
TEST(JsonNesting, TheLimitIsExact) {
  auto codec = find_codec("json").make();
  std::string valid;
  codec->encode(marker_payload(), valid);
  Payload out;
  try {
    codec->decode(deep_body("json", valid, kMaxNestingDepth - 1), out);
    ADD_FAILURE() << "an array for a text payload decoded";
  } catch (const DecodeError& e) {
    EXPECT_EQ(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
  }
  try {
    codec->decode(deep_body("json", valid, kMaxNestingDepth), out);
    ADD_FAILURE() << "decoded a document nested beyond the limit";
  } catch (const DecodeError& e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
  }
}

// The codecs `applies` accepts (all by default) but text/plain, which does
// not nest.
std::vector<std::string> codec_names(bool (*applies)(std::string_view) = nullptr) {
  std::vector<std::string> out;
  for (const auto& c : all_codecs())
    if (!c.texts_only && (applies == nullptr || applies(c.name))) out.push_back(c.name);
  return out;
}

std::string codec_test_name(const ::testing::TestParamInfo<std::string>& p) {
  return testing::test_name({"", p.param}).substr(1);
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, CodecNesting, ::testing::ValuesIn(codec_names()),
                         codec_test_name);
INSTANTIATE_TEST_SUITE_P(AllCodecs, CodecNestingLimit,
                         ::testing::ValuesIn(codec_names(under_our_limit)), codec_test_name);

// ---- per stack x codec ----

class StackNesting : public ::testing::TestWithParam<testing::StackCodec> {};

TEST_P(StackNesting, TooDeepBodyGetsTheProtocolsErrorAndServingGoesOn) {
  const auto& [stack, codec_name] = GetParam();
  if (!testing::speaks_http1(stack)) GTEST_SKIP() << testing::kNotHttp1;
  Service service;
  const auto server = find_stack(stack).start_server(service, ServerOptions{});
  const Endpoint at = server->endpoint();
  const CodecEntry& entry = find_codec(codec_name);

  // The request as its stack's client would send it, the payload replaced.
  std::unique_ptr<RpcBinding> rpc = entry.make_rpc ? entry.make_rpc() : nullptr;
  std::string path = "/echo";
  std::string headers;
  std::string body;
  if (rpc) {
    rpc->encode_call({.op = Operation::echo, .payload = &marker_payload()}, body);
    path = std::string(rpc->path());
    headers = "Content-Type: " + rpc->call_content_type() + "\r\n";
    if (const auto [name, value] = rpc->call_header(); !name.empty())
      headers += std::string(name) + ": " + std::string(value) + "\r\n";
    if (stack == "beast") headers += "X-Wsbench-Codec: " + codec_name + "\r\n";
  } else {
    auto codec = entry.make();
    codec->encode(marker_payload(), body);
    headers =
        "Content-Type: " + codec->content_type() + "\r\nAccept: " + codec->content_type() + "\r\n";
  }
  body = deep_body(codec_name, body, kHostileDepth);
  const std::string request = "POST " + path + " HTTP/1.1\r\nHost: " + at.to_string() + "\r\n" +
                              headers + "Content-Length: " + std::to_string(body.size()) +
                              "\r\n\r\n" + body;
  {
    testing::RawConnection c(at);
    const testing::RawResponse r = testing::roundtrip(c, request);
    if (rpc) {
      EXPECT_EQ(r.status, rpc->fault_status()) << r.body;
      Payload out;
      EXPECT_THROW(rpc->decode_reply(Operation::echo, r.body, out), CallError) << r.body;
    } else {
      EXPECT_EQ(r.status, 400) << r.body;
    }
  }

  // The next client on a new connection is served.
  const auto client = find_stack(stack).connect(at, codec_name);
  Payload echoed;
  client->echo(marker_payload(), echoed);
  EXPECT_EQ(describe_difference(marker_payload(), echoed), "");
}

INSTANTIATE_TEST_SUITE_P(AllStacks, StackNesting,
                         ::testing::ValuesIn(testing::stack_codecs_with_syntax()),
                         [](const auto& p) { return testing::test_name(p.param); });

}  // namespace
}  // namespace wsb
