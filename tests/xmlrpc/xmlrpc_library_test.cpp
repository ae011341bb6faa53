// The xmlrpc codec against what xmlrpc-c 1.33.14 accepts, crashes or
// loses: base64 and <i8> it does not check, hostile documents, doubles to
// a few ulps, non-finite values, its size limit, and mutated documents; each
// pinned so a library upgrade that changes it shows up. The XML the codec
// writes and its types: xmlrpc_test.cpp.
#include <gtest/gtest.h>
#include <xmlrpc-c/base.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <xmlrpc-c/base.hpp>
#include <xmlrpc-c/girerr.hpp>
#include <xmlrpc-c/xml.hpp>

#include "common/codec.h"
#include "common/payload.h"
#include "xmlrpc/xmlrpc_codec.h"
#include "xmlrpc/xmlrpc_mapping.h"
#include "xmlrpc_codec_test.h"

namespace wsb {
namespace {

using testing::XmlrpcCodec;

// Generated payloads with every string replaced by BMP-only text, so the
// doubles can be studied apart from the U+FFFD limit.
ObjectArray bmp_objects(std::size_t n) {
  auto objects = std::get<ObjectArray>(generate({Kind::objects, n}));
  for (auto& o : objects.values) o.name = "n";
  return objects;
}

BuildingCollection bmp_buildings(std::size_t n) {
  auto gml = std::get<BuildingCollection>(generate({Kind::gml, n}));
  for (auto& b : gml.buildings) b.name = "n";
  return gml;
}

TEST_F(XmlrpcCodec, LibraryAloneAcceptsGarbageBase64) {
  // Why the codec checks <base64> text itself: xmlrpc-c skips characters
  // outside the alphabet (after masking off the high bit) and decodes what
  // is left.
  xmlrpc_c::rpcOutcome outcome;
  xmlrpc_c::xml::parseResponse(response("<base64>!!!!</base64>"), &outcome);
  EXPECT_EQ(xmlrpc_c::value_bytestring(outcome.getResult()).length(), 0u);
  xmlrpc_c::rpcOutcome outcome2;
  xmlrpc_c::xml::parseResponse(response("<base64>AA==AAEC</base64>"), &outcome2);
  EXPECT_EQ(xmlrpc_c::value_bytestring(outcome2.getResult()).length(), 4u);
}

TEST_F(XmlrpcCodec, InvalidBase64IsADecodeError) {
  for (const char* bad : {"!!!!", "AA==AAEC", "AAEC/w", "AAE*C/w=", "AAEC/w===", "AAEC/A=A",
                          "AA\xC3\x81\xC3\x81", "&#x41;AEC"}) {
    expect_decode_error(body("binary", std::string("<base64>") + bad + "</base64>"), "base64");
  }
  expect_decode_error(body("binary", "<base64><![CDATA[AAEC]]></base64>"), "markup inside");
  expect_decode_error(body("binary", "<base64 a='1'>AAEC</base64>"), "attributes");
  expect_decode_error(message_xml("<member><name>attachment</name><value><base64>AAE</base64>"
                                  "</value></member>"),
                      "base64");
  // Whitespace anywhere (xmlrpc-c itself writes CRLF-broken lines) is fine.
  EXPECT_TRUE(decode(body("binary", "<base64>\r\nAA EC\t/w==\r\n</base64>")) ==
              Payload(Binary{{0x00, 0x01, 0x02, 0xff}}));
  EXPECT_TRUE(decode(body("binary", "<base64/>")) == Payload(Binary{}));
}

TEST_F(XmlrpcCodec, Base64CheckSeesEveryByteOfALongText) {
  // The check counts 16 bytes at a time, adds its lanes up every 4080
  // bytes and does the last few bytes one by one: a wrong byte of any value
  // must be caught wherever it is. 8228 digits: 2 sums, and a tail of 4.
  const std::string valid(2 * 4080 + 68, 'A');
  const auto wire = [](const std::string& text) {
    return body("binary", "<base64>" + text + "</base64>");
  };
  EXPECT_EQ(std::get<Binary>(decode(wire(valid))).data.size(), valid.size() / 4 * 3);
  for (const std::size_t at : {std::size_t{0}, std::size_t{15}, std::size_t{16}, std::size_t{4079},
                               std::size_t{4080}, std::size_t{4095}, std::size_t{8159},
                               std::size_t{8160}, valid.size() - 5, valid.size() - 1}) {
    std::string text = valid;
    text[at] = '*';
    expect_decode_error(wire(text), "outside the alphabet");
  }
  for (const std::size_t at : {std::size_t{100}, valid.size() - 2}) {
    for (int b = 1; b < 256; ++b) {
      std::string text = valid;
      const char c = static_cast<char>(b);
      text[at] = c;
      SCOPED_TRACE("byte " + std::to_string(b) + " at " + std::to_string(at));
      if ((b < 0x80 && std::isalnum(b) != 0) || c == '+' || c == '/')
        EXPECT_NO_THROW(decode(wire(text)));
      else if (c == '=')
        expect_decode_error(wire(text), "data after padding");
      else if (c == '<')
        expect_decode_error(wire(text), "markup inside");
      else if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
        expect_decode_error(wire(text), "bad length or padding");
      else
        expect_decode_error(wire(text), "outside the alphabet");
    }
  }
  expect_decode_error(wire(valid.substr(4) + "AA==" + std::string(20, ' ') + "A"),
                      "data after padding");
}

TEST_F(XmlrpcCodec, MalformedI8IsADecodeErrorThoughItCrashesTheLibrary) {
  // xmlrpc-c 1.33.14 formats this fault with two %s and one argument.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        xmlrpc_c::rpcOutcome outcome;
        xmlrpc_c::xml::parseResponse(response("<i8>12x</i8>"), &outcome);
      },
      "");
  for (const char* bad : {"12x", "9223372036854775808", "-9223372036854775809", "+-1", "", " 1",
                          "1 ", "0x10", "abc"}) {
    expect_decode_error(message_xml("", std::string("<i8>") + bad + "</i8>"), "64-bit integer");
  }
  expect_decode_error(message_xml("", "<ex:i8>abc</ex:i8>"), "64-bit integer");
  expect_decode_error(message_xml("", "<i8 >1</i8>"), "attributes");
  expect_decode_error(message_xml("", "<i8><![CDATA[1]]></i8>"), "markup inside");
  expect_decode_error(message_xml("", "<i8>1<!-- x --></i8>"), "markup inside");
  expect_decode_error(message_xml("", "<i8/>"), "empty");
  // What xmlrpc-c itself accepts still decodes.
  EXPECT_EQ(std::get<Message>(decode(message_xml("", "<i8>+5</i8>"))).meta.timestamp, 5);
  EXPECT_EQ(std::get<Message>(decode(message_xml("", "<ex:i8>-0012</ex:i8>"))).meta.timestamp, -12);
}

TEST_F(XmlrpcCodec, HostileDocumentsAreRejectedWithoutCrashOrHang) {
  // Entities nest without bound in xmlrpc-c's expat (billion laughs hangs).
  expect_decode_error(
      "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\">]><methodResponse><params>"
      "<param><value><struct><member><name>text</name><value>&a;</value></member></struct>"
      "</value></param></params></methodResponse>",
      "DOCTYPE");
  // About 150,000 levels overflow xmlrpc-c's stack before its own nesting
  // limit applies.
  std::string deep;
  for (int i = 0; i < 200000; ++i) deep += "<array><data><value>";
  expect_decode_error(response(deep), "nested deeper than 256");
  // xmlrpc-c adds struct members by linear search.
  std::string wide = "<struct>";
  for (int i = 0; i < 300; ++i)
    wide += "<member><name>m" + std::to_string(i) + "</name><value>x</value></member>";
  expect_decode_error(response(wide + "</struct>"), "more than 256 members");
  expect_decode_error(std::string("<?xml version=\"1.0\"?>\0<methodResponse/>", 39), "NUL byte");
  // Below the guard's depth limit, xmlrpc-c's own 64-value limit applies.
  std::string nested = "<i4>1</i4>";
  for (int i = 0; i < 70; ++i) nested = "<array><data><value>" + nested + "</value></data></array>";
  expect_decode_error(body("ints", nested), "too deep");
}

TEST_F(XmlrpcCodec, GuardSkipsCommentsCdataAndProcessingInstructions) {
  const std::string wire = response(
      "<!-- <i8>x</i8> <base64>!!</base64> <!DOCTYPE --><?pi <i8>y</i8>?>"
      "<struct><member><name>text</name><value><string><![CDATA[<i8>z</i8><base64>#]]>"
      "</string></value></member></struct>");
  EXPECT_TRUE(decode(wire) == Payload(Text{"<i8>z</i8><base64>#"}));
}

TEST_F(XmlrpcCodec, DoublesLoseUpToAFewUlpsAsXmlrpcCFormatsAndParsesThem) {
  // Short decimals survive.
  const ObjectArray exact{{{1, "a", 0.5, true},
                           {2, "b", 0.1, false},
                           {3, "c", -2.75, true},
                           {4, "d", 1e22, false},
                           {5, "e", 100.25, true}}};
  EXPECT_TRUE(decode(encode(exact)) == Payload(exact));

  // The formatter stops at about 16 significant digits and truncates.
  const double full = 123456789.12345678;
  const std::string wire = encode(ObjectArray{{{1, "a", full, true}}});
  EXPECT_NE(wire.find("<double>123456789.1234567</double>"), std::string::npos) << wire;
  const double back = std::get<ObjectArray>(decode(wire)).values[0].value;
  EXPECT_NE(back, full);
  EXPECT_LE(std::abs(back - full) / full, 16 * std::numeric_limits<double>::epsilon());

  // The parser sums digits in floating point: even the shortest exact text
  // of a double can come back one ulp off.
  const auto parsed = [&](const char* text) {
    return std::get<ObjectArray>(
               decode(body("objects",
                           std::string("<array><data><value><struct>"
                                       "<member><name>id</name><value><i4>1</i4></value></member>"
                                       "<member><name>name</name><value>n</value></member>"
                                       "<member><name>value</name><value><double>") +
                               text +
                               "</double></value></member>"
                               "<member><name>active</name><value><boolean>1</boolean></value>"
                               "</member></struct></value></data></array>")))
        .values[0]
        .value;
  };
  EXPECT_EQ(parsed("0.3"), std::nextafter(0.3, 1.0));
  EXPECT_NE(parsed("6670000.125"), 6670000.125);
  EXPECT_EQ(parsed("0.5"), 0.5);

  const auto round_trip = [&](double d) {
    return std::get<ObjectArray>(decode(encode(ObjectArray{{{0, "x", d, false}}}))).values[0].value;
  };
  EXPECT_EQ(round_trip(std::numeric_limits<double>::denorm_min()), 0.0);
  EXPECT_FALSE(std::signbit(round_trip(-0.0)));
  const double max_back = round_trip(std::numeric_limits<double>::max());
  EXPECT_LT(max_back, std::numeric_limits<double>::max());
  EXPECT_LT((std::numeric_limits<double>::max() - max_back) / max_back, 4e-15);

  // Over the generator's ranges: most values move, none by more than
  // 16 ulp-widths of relative error.
  std::size_t total = 0;
  std::size_t inexact = 0;
  double worst = 0;
  const auto account = [&](double sent, double got) {
    ++total;
    if (sent != got) ++inexact;
    worst = std::max(worst, std::abs(got - sent) / std::abs(sent));
  };
  const ObjectArray objects = bmp_objects(2000);
  const auto objects_back = std::get<ObjectArray>(decode(encode(objects)));
  for (std::size_t i = 0; i < objects.values.size(); ++i) {
    EXPECT_EQ(objects.values[i].id, objects_back.values[i].id);
    account(objects.values[i].value, objects_back.values[i].value);
  }
  const BuildingCollection gml = bmp_buildings(100);
  const auto gml_back = std::get<BuildingCollection>(decode(encode(gml)));
  for (std::size_t i = 0; i < gml.buildings.size(); ++i) {
    account(gml.buildings[i].height, gml_back.buildings[i].height);
    for (std::size_t j = 0; j < gml.buildings[i].footprint.size(); ++j) {
      account(gml.buildings[i].footprint[j].x, gml_back.buildings[i].footprint[j].x);
      account(gml.buildings[i].footprint[j].y, gml_back.buildings[i].footprint[j].y);
    }
  }
  EXPECT_GT(inexact, total / 2) << inexact << " of " << total;
  EXPECT_LE(worst, 16 * std::numeric_limits<double>::epsilon());
  EXPECT_GT(worst, 0.0);
}

TEST_F(XmlrpcCodec, NonFiniteDoublesAreRefused) {
  std::string wire;
  EXPECT_THROW(codec_->encode(ObjectArray{{{1, "a", std::nan(""), true}}}, wire),
               std::invalid_argument);
  EXPECT_THROW(
      codec_->encode(ObjectArray{{{1, "a", std::numeric_limits<double>::infinity(), true}}}, wire),
      std::invalid_argument);
  BuildingCollection gml = bmp_buildings(1);
  gml.buildings[0].footprint[3].y = -std::numeric_limits<double>::infinity();
  EXPECT_THROW(codec_->encode(gml, wire), std::invalid_argument);
  // xmlrpc-c's parser falls back to strtod, which reads these.
  for (const char* d : {"nan", "inf", "-inf"}) {
    expect_decode_error(
        body("objects", std::string("<array><data><value><struct>"
                                    "<member><name>id</name><value><i4>1</i4></value></member>"
                                    "<member><name>name</name><value>n</value></member>"
                                    "<member><name>value</name><value><double>") +
                            d +
                            "</double></value></member>"
                            "<member><name>active</name><value><boolean>1</boolean></value>"
                            "</member></struct></value></data></array>"),
        "value is not a finite number");
  }
}

TEST_F(XmlrpcCodec, RaisesTheProcessWideSizeLimitDeliberately) {
  EXPECT_EQ(xmlrpc_limit_get(XMLRPC_XML_SIZE_LIMIT_ID), wsb::xmlrpc::kXmlSizeLimit);
  // 1 MiB of binary is about 1.4 MB of XML, over the 512 KiB default.
  const Binary big{Bytes(1 << 20, 0xa5)};
  const std::string wire = encode(big);
  ASSERT_GT(wire.size(), std::size_t{XMLRPC_XML_SIZE_LIMIT_DEFAULT});
  EXPECT_TRUE(decode(wire) == Payload(big));

  // Lowered by someone else, the limit is enforced (and restored here).
  struct Restore {
    ~Restore() { xmlrpc_limit_set(XMLRPC_XML_SIZE_LIMIT_ID, wsb::xmlrpc::kXmlSizeLimit); }
  } restore;
  xmlrpc_limit_set(XMLRPC_XML_SIZE_LIMIT_ID, XMLRPC_XML_SIZE_LIMIT_DEFAULT);
  expect_decode_error(wire, "exceeds xmlrpc-c's limit");
}

// Without their representation the stages refuse rather than write or
// return a stale one: write before any bind, unbind before any read, and
// unbind after a read that failed (the earlier read's tree is gone).
TEST_F(XmlrpcCodec, StagesRefuseWithoutTheirRepresentation) {
  std::string early;
  EXPECT_THROW(find_codec("xmlrpc").make()->stages()->write(early), std::logic_error);
  Payload nothing;
  EXPECT_THROW(find_codec("xmlrpc").make()->stages()->unbind(nothing), std::logic_error);

  CodecStages* stages = codec_->stages();
  ASSERT_NE(stages, nullptr);
  stages->read(encode(sample_message()));
  EXPECT_THROW(stages->read("<?xml version=\"1.0\"?><methodResponse><broken"), DecodeError);
  Payload stale;
  EXPECT_THROW(stages->unbind(stale), std::logic_error);
}

TEST_F(XmlrpcCodec, MutatedDocumentsDecodeOrThrowDecodeErrorNeverCrash) {
  // Byte-level mutations of real encodings: every outcome must be a
  // payload or a DecodeError (a crash fails the whole test binary).
  const std::vector<std::string> seeds = {encode(sample_message()), encode(bmp_objects(3)),
                                          encode(bmp_buildings(1)), encode(IntArray{{1, 2}})};
  const std::string interesting = "<>/&;=!?[]-+x09 \"'\r\n\xC3\xF0\x80";
  std::uint64_t state = 0x5eed;
  const auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  std::size_t rejected = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string doc = seeds[next() % seeds.size()];
    for (std::uint64_t n = 1 + next() % 3; n > 0; --n) {
      const std::size_t at = next() % doc.size();
      switch (next() % 4) {
        case 0:
          doc[at] = interesting[next() % interesting.size()];
          break;
        case 1:
          doc[at] = static_cast<char>(next());
          break;
        case 2:
          doc.erase(at, 1 + next() % 8);
          break;
        default:
          doc.insert(at, doc.substr(next() % doc.size(), 1 + next() % 16));
      }
      if (doc.empty()) doc = "<";
    }
    Payload p;
    try {
      codec_->decode(doc, p);
    } catch (const DecodeError&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "non-DecodeError exception: " << e.what();
    }
  }
  EXPECT_GT(rejected, 3000u);
}

}  // namespace
}  // namespace wsb