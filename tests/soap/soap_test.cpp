// The soap codec and what soap-mtom and soap-swa share with it: envelopes
// checked with an independent libxml2 parse, and rejection of what gSOAP
// must not accept (src/soap/soap_codec.cpp and wsbench_service.h document
// the schema). The MTOM and SwA packages: soap_attachments_test.cpp.
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <memory>
#include <string>
#include <vector>

#include "common/base64.h"
#include "common/codec.h"
#include "common/input_checks.h"
#include "conformance_cases.h"
#include "gml_structure.h"
#include "soap/soap_codecs.h"
#include "soap_codec_test.h"
#include "test_helpers.h"

namespace wsb {
namespace {

using testing::attribute;
using testing::Doc;
using testing::element_children;
using testing::SoapCodecTest;
using testing::str;
using testing::text_of;

TEST_F(SoapCodecTest, EnvelopeIsWellFormedSoap11WithTheWsbenchNamespace) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"text", "text"},           {"ints/200", "ints"},         {"strings/200", "strings"},
      {"objects/200", "objects"}, {"message-a/100", "message"}, {"message-b/1KiB", "message"},
      {"binary/1KiB", "binary"},  {"gml/3", "buildings"}};
  for (const auto& [label, element] : cases) {
    SCOPED_TRACE(label);
    const std::string wire = encode(*soap_, generate(parse_spec(label)));
    EXPECT_EQ(soap_->content_type(), "text/xml; charset=utf-8");
    const Doc doc = parse_dom(wire);
    ASSERT_NE(doc, nullptr) << "not well-formed";
    const xmlNode* payload = payload_element(doc.get());
    ASSERT_NE(payload, nullptr);
    EXPECT_EQ(str(payload->name), element);
    EXPECT_EQ(ns_of(payload), kWsbNs);
  }
}

// gSOAP declares its context's whole namespace table on the envelope; the
// binding declares only what the message uses (soap_binding.h).
TEST_F(SoapCodecTest, EnvelopesDeclareOnlyTheNamespacesTheyUse) {
  for (const char* label : {"text", "ints/20", "message-a/10", "message-b/1KiB", "binary/1KiB",
                            "gml/3", "text", "gml/3"}) {
    SCOPED_TRACE(label);
    const std::string wire = encode(*soap_, generate(parse_spec(label)));
    const Doc doc = parse_dom(wire);
    ASSERT_NE(doc, nullptr);
    EXPECT_EQ(testing::unused_declarations(doc.get()), "") << wire.substr(0, 400);
    const bool gml = std::string_view(label).starts_with("gml");
    EXPECT_EQ(wire.find("xmlns:gml=") != std::string::npos, gml);
  }
  // Buildings without a building use no gml element.
  const Doc empty = parse_dom(encode(*soap_, BuildingCollection{}));
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(testing::unused_declarations(empty.get()), "");
}

// The check above fails for an envelope with a declaration nothing uses.
TEST(UnusedDeclarations, NamesADeclarationNothingUses) {
  const std::string xml =
      R"(<a:e xmlns:a="urn:a" xmlns:b="urn:b" xmlns:c="urn:c"><b:f/><g c:h="1"/></a:e>)";
  const Doc doc(xmlReadMemory(xml.data(), static_cast<int>(xml.size()), nullptr, nullptr, 0));
  ASSERT_NE(doc, nullptr);
  EXPECT_EQ(testing::unused_declarations(doc.get()), "");
  const std::string extra = R"(<a:e xmlns:a="urn:a" xmlns:gml="urn:g" xmlns:xop="urn:x"/>)";
  const Doc with_extra(
      xmlReadMemory(extra.data(), static_cast<int>(extra.size()), nullptr, nullptr, 0));
  ASSERT_NE(with_extra, nullptr);
  EXPECT_EQ(testing::unused_declarations(with_extra.get()), "gml xop");
}

// gSOAP's chunked output (encode-chunked/soap rows): the envelope the
// default output writes after its counting pass, in HTTP chunks.
TEST_F(SoapCodecTest, ChunkedOutputCarriesTheSameEnvelopeInHttpChunks) {
  const auto chunked = soap::make_soap_chunked_codec();
  for (const char* label :
       {"ints/200", "message-a/100", "message-b/128KiB", "binary/1MiB", "gml/10"}) {
    SCOPED_TRACE(label);
    const Payload payload = generate(parse_spec(label));
    const std::string plain = encode(*soap_, payload);
    const std::string wire = encode(*chunked, payload);
    std::string data;
    std::size_t chunks = 0;
    ChunkedCheck framing;
    EXPECT_EQ(framing.feed(wire,
                           [&](std::string_view bytes) {
                             data.append(bytes);
                             ++chunks;
                           }),
              "");
    EXPECT_TRUE(framing.done());
    EXPECT_EQ(data, plain);
    EXPECT_NE(wire, plain);
    // gSOAP sends a chunk per buffer (SOAP_BUFLEN): a large message in many.
    if (plain.size() > 200'000) {
      EXPECT_GT(chunks, 2u);
    }
    Payload decoded;
    chunked->decode(wire, decoded);
    EXPECT_EQ(describe_difference(payload, decoded), "");
  }
  const std::string wire = encode(*chunked, generate(parse_spec("ints/20")));
  expect_rejected(*chunked, wire.substr(0, wire.size() - 5), "no last chunk");
  expect_rejected(*chunked, "zz\r\n" + wire, "chunked body");
}

TEST_F(SoapCodecTest, ValuesAreTypedElementsAndBinariesInlineBase64) {
  Message m;
  m.meta = {"to <you>", "me & co", "tok\"en'", -9'000'000'000'000'000'000};
  m.records.push_back({"t", "a", "b", 1, -2, 3, -4, 5, -32768});
  m.attachment = testing::all_byte_values();
  const std::string wire = encode(*soap_, m);
  const Doc doc = parse_dom(wire);
  ASSERT_NE(doc, nullptr);
  const xmlNode* message = payload_element(doc.get());
  ASSERT_NE(message, nullptr);
  EXPECT_EQ(text_of(child_named(message, "recipient")), "to <you>");
  EXPECT_EQ(text_of(child_named(message, "sender")), "me & co");
  EXPECT_EQ(text_of(child_named(message, "timestamp")), "-9000000000000000000");
  const xmlNode* record = child_named(message, "record");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(text_of(child_named(record, "ttl")), "-32768");
  EXPECT_EQ(text_of(child_named(message, "attachment")), base64_encode(m.attachment));
  EXPECT_EQ(wire.find("xop:Include"), std::string::npos);

  // Doubles keep 17 significant digits (gSOAP's own); a gml:posList is
  // text the binding writes, in shortest round-trip form.
  const BuildingCollection gml{
      {{"b", "n", 0.1, 2, {{1.0 / 3.0, -2.5}, {1, 0}, {0, 1}, {1.0 / 3.0, -2.5}}}}};
  const Doc gml_doc = parse_dom(encode(*soap_, gml));
  ASSERT_NE(gml_doc, nullptr);
  const xmlNode* member = child_named(payload_element(gml_doc.get()), "featureMember");
  ASSERT_NE(member, nullptr);
  const xmlNode* building = child_named(member, "Building");
  ASSERT_NE(building, nullptr);
  EXPECT_EQ(text_of(child_named(building, "height")), "0.10000000000000001");
  EXPECT_EQ(text_of(child_named(building, "footprint")),
            "0.3333333333333333 -2.5 1 0 0 1 0.3333333333333333 -2.5");
}

TEST_F(SoapCodecTest, BuildingsAreGml3FeaturesInTheBody) {
  for (const char* label : {"gml/3", "gml/3:escaped"}) {
    const auto gml = std::get<BuildingCollection>(generate(parse_spec(label)));
    const Doc doc = parse_dom(encode(*soap_, gml));
    ASSERT_NE(doc, nullptr);
    const xmlNode* buildings = payload_element(doc.get());
    ASSERT_NE(buildings, nullptr);
    EXPECT_EQ(str(buildings->name), "buildings");
    EXPECT_EQ(testing::gml_collection_problems(buildings, "urn:wsbench", gml), "") << label;
  }
  // The model's GML constraints are checked both ways.
  EXPECT_THROW(encode(*soap_, BuildingCollection{{{"b", "n", 1, 1, {{1, 2}, {3, 4}, {1, 2}}}}}),
               std::invalid_argument);
  EXPECT_THROW(
      encode(*soap_, BuildingCollection{{{"9", "n", 1, 1, {{1, 2}, {3, 4}, {5, 6}, {1, 2}}}}}),
      std::invalid_argument);
  const std::string wire =
      encode(*soap_, BuildingCollection{{{"b", "n", 1.5, 2, {{1, 2}, {3, 4}, {5, 6}, {1, 2}}}}});
  expect_rejected(*soap_, replace_once(wire, ">1 2 3 4 5 6 1 2<", ">1 2 3 4 5 6 1 3<"),
                  "not closed");
  expect_rejected(*soap_, replace_once(wire, ">1 2 3 4 5 6 1 2<", ">1 2 3 4 5 6 1<"),
                  "odd number of coordinates");
  expect_rejected(*soap_, replace_once(wire, ">1 2 3 4 5 6 1 2<", ">1 2 3 4 5 6 1 y<"),
                  "'y' is not a number");
  expect_rejected(*soap_, replace_once(wire, "EPSG::3067", "EPSG::4326"), "srsName");
  expect_rejected(*soap_, replace_once(wire, "srsDimension=\"2\"", "srsDimension=\"3\""),
                  "srsDimension must be 2");
  expect_rejected(*soap_, replace_once(wire, "gml:id=\"b\"", "gml:id=\"1b\""), "NCName");
  expect_rejected(*soap_, replace_once(wire, " srsName=", " x="), "");
  expect_rejected(*soap_, replace_once(wire, "<gml:exterior>", "<gml:interior>"), "");
}

TEST_F(SoapCodecTest, EmptyAttachmentIsOmittedAndDecodesEmpty) {
  const Message m{{"r", "s", "t", 1}, {}, {}};
  const std::string wire = encode(*soap_, m);
  const Doc doc = parse_dom(wire);
  ASSERT_NE(doc, nullptr);
  const xmlNode* message = payload_element(doc.get());
  ASSERT_NE(message, nullptr);
  EXPECT_EQ(child_named(message, "attachment"), nullptr);
  EXPECT_EQ(child_named(message, "record"), nullptr);
  Payload decoded;
  soap_->decode(wire, decoded);
  EXPECT_TRUE(decoded == Payload(m));
}

TEST_F(SoapCodecTest, WrongRootElementIsRejectedWithGsoapsDescription) {
  const std::string wire = encode(*soap_, IntArray{{1, 2}});
  const std::string echo =
      replace_once(replace_once(wire, "<wsb:getResponse>", "<wsb:echoResponse>"),
                   "</wsb:getResponse>", "</wsb:echoResponse>");
  expect_rejected(*soap_, echo, "mismatch in element 'wsb:echoResponse'");
  // Same local name, another namespace.
  const std::string other_ns =
      replace_once(replace_once(wire, "<wsb:getResponse>", "<x:getResponse xmlns:x=\"urn:other\">"),
                   "</wsb:getResponse>", "</x:getResponse>");
  expect_rejected(*soap_, other_ns, "mismatch in element 'x:getResponse'");
  // Not a SOAP envelope at all.
  expect_rejected(*soap_, replace_once(wire, kSoapEnvNs, "urn:not-soap"), "SOAP-ENV:Envelope");
  // A getResponse without a payload element.
  expect_rejected(
      *soap_,
      replace_once(wire,
                   wire.substr(wire.find("<wsb:ints>"),
                               wire.find("</wsb:getResponse>") - wire.find("<wsb:ints>")),
                   ""),
      "");
  // A payload element the choice does not have, and two payloads.
  expect_rejected(*soap_, replace_once(wire, "<wsb:ints>", "<wsb:floats>"), "wsb:floats");
  expect_rejected(
      *soap_, replace_once(wire, "</wsb:getResponse>", "<wsb:text>x</wsb:text></wsb:getResponse>"),
      "wsb:text");
}

TEST_F(SoapCodecTest, GarbageAndTruncationAreRejected) {
  for (Codec* codec : {soap_.get(), mtom_.get()}) {
    expect_rejected(*codec, "", "");
    expect_rejected(*codec, "\x01\x02garbage\xff", "");
    expect_rejected(*codec, "<html><body>502 Bad Gateway</body></html>", "");
    const std::string wire = encode(*codec, ObjectArray{{{1, "a", 0.5, true}}});
    // gSOAP ends the envelope with "\r\n": cutting only that leaves a
    // complete message; every cut into the markup is an error.
    ASSERT_EQ(wire.substr(wire.size() - 3), ">\r\n");
    Payload decoded;
    EXPECT_NO_THROW(codec->decode(std::string_view(wire).substr(0, wire.size() - 2), decoded));
    for (std::size_t cut = 3; cut < 64; ++cut)
      expect_rejected(*codec, std::string_view(wire).substr(0, wire.size() - cut), "");
    expect_rejected(*codec, wire + "<more/>", "content after the end of the message");
    expect_rejected(*codec, wire + wire, "content after the end of the message");
    EXPECT_NO_THROW(codec->decode(wire + " \t\r\n", decoded)) << "trailing whitespace is fine";
  }
}

TEST_F(SoapCodecTest, SoapFaultIsRejectedWithItsFaultString) {
  const std::string fault =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
      "<SOAP-ENV:Envelope xmlns:SOAP-ENV=\"http://schemas.xmlsoap.org/soap/envelope/\">"
      "<SOAP-ENV:Body><SOAP-ENV:Fault><faultcode>SOAP-ENV:Server</faultcode>"
      "<faultstring>queue 42 does not exist</faultstring></SOAP-ENV:Fault>"
      "</SOAP-ENV:Body></SOAP-ENV:Envelope>";
  expect_rejected(*soap_, fault, "SOAP Fault SOAP-ENV:Server: queue 42 does not exist");
  expect_rejected(*mtom_, fault, "queue 42 does not exist");
}

TEST_F(SoapCodecTest, TypeAndStructureErrorsAreRejected) {
  Message m{{"r", "s", "t", 5}, {{"T", "A", "B", 9, 10, 3, 4, 0, 7}}, {1, 2, 3}};
  const std::string wire = encode(*soap_, m);
  // int16 range, int32 range, int64 range, non-numbers.
  expect_rejected(*soap_, replace_once(wire, "<wsb:ttl>7<", "<wsb:ttl>70000<"), "'wsb:ttl'");
  expect_rejected(*soap_, replace_once(wire, "<wsb:ttl>7<", "<wsb:ttl>-32769<"), "'wsb:ttl'");
  expect_rejected(*soap_, replace_once(wire, "<wsb:priority>3<", "<wsb:priority>2147483648<"),
                  "'wsb:priority'");
  expect_rejected(*soap_,
                  replace_once(wire, "<wsb:sequence>9<", "<wsb:sequence>9223372036854775808<"),
                  "'wsb:sequence'");
  expect_rejected(*soap_, replace_once(wire, "<wsb:category>4<", "<wsb:category>four<"),
                  "'wsb:category'");
  expect_rejected(*soap_, replace_once(wire, "<wsb:ttl>7<", "<wsb:ttl><"), "'wsb:ttl'");
  // Missing required element, unknown element, repeated element.
  expect_rejected(*soap_, replace_once(wire, "<wsb:ttl>7</wsb:ttl>", ""), "occurrence");
  expect_rejected(*soap_, replace_once(wire, "</wsb:ttl>", "</wsb:ttl><wsb:extra>1</wsb:extra>"),
                  "'wsb:extra'");
  expect_rejected(*soap_, replace_once(wire, "</wsb:ttl>", "</wsb:ttl><wsb:ttl>8</wsb:ttl>"),
                  "'wsb:ttl'");
  // An element left open: gSOAP's structs carry on without the record,
  // the codec's nesting check catches it.
  expect_rejected(*soap_, replace_once(wire, "</wsb:record>", ""), "not closed");
  expect_rejected(*soap_, replace_once(wire, "</wsb:record>", "</wsb:recordX>"), "");

  const ObjectArray objects{{{1, "n", 0.5, true}}};
  const std::string object_wire = encode(*soap_, objects);
  expect_rejected(*soap_, replace_once(object_wire, ">true<", ">yes<"), "'wsb:active'");
  expect_rejected(*soap_, replace_once(object_wire, ">0.5<", ">0.5x<"), "'wsb:value'");

  const BuildingCollection gml{{{"b", "n", 1.5, 2, {{1.5, 2.5}, {1, 0}, {0, 1}, {1.5, 2.5}}}}};
  const std::string gml_wire = encode(*soap_, gml);
  expect_rejected(*soap_, replace_once(gml_wire, " srsDimension=\"2\"", ""),
                  "missing required attribute");
  expect_rejected(*soap_, replace_once(gml_wire, ">2<", ">two<"), "'wsb:floors'");
}

TEST_F(SoapCodecTest, InvalidBase64CharactersAreRejected) {
  const std::string wire = encode(*soap_, Binary{{1, 2, 3, 4, 5, 6}});
  ASSERT_NE(wire.find(">AQIDBAUG<"), std::string::npos);
  // Outside the alphabet: punctuation, base64url's '-' and '_', non-ASCII.
  for (const char* bad :
       {">AQID!AUG<", ">@@@@AUG<", ">AQID-AUG<", ">AQID_AUG<", ">AQIDBAUG\xC3\xA9<"})
    expect_rejected(*soap_, replace_once(wire, ">AQIDBAUG<", bad), "");
  // Whitespace inside base64 is allowed (MIME-style line breaks).
  Payload decoded;
  soap_->decode(replace_once(wire, ">AQIDBAUG<", ">AQID\r\n BAUG<"), decoded);
  EXPECT_TRUE(decoded == Payload(Binary{{1, 2, 3, 4, 5, 6}}));
}

TEST_F(SoapCodecTest, MessageListIsOneMessagesElementWithAMessageEach) {
  const Message a{{"r", "s", "t", 1}, {{"T", "A", "B", 9, 10, 3, 4, 0, 7}}, {}};
  const Message b{{"r2", "s2", "t2", 2}, {}, {0, 1, 2, 0xff}};
  const MessageList list{{a, b, Message{}}};
  const std::string wire = encode(*soap_, list);
  const Doc doc = parse_dom(wire);
  ASSERT_NE(doc, nullptr);
  const xmlNode* messages = payload_element(doc.get());
  ASSERT_NE(messages, nullptr);
  EXPECT_EQ(str(messages->name), "messages");
  const auto children = element_children(messages);
  ASSERT_EQ(children.size(), 3u);
  for (const xmlNode* m : children) {
    EXPECT_EQ(str(m->name), "message");
    EXPECT_EQ(ns_of(m), kWsbNs);
  }
  EXPECT_EQ(text_of(child_named(children[1], "recipient")), "r2");
  EXPECT_EQ(text_of(child_named(children[1], "attachment")), base64_encode(b.attachment));
  EXPECT_EQ(child_named(children[0], "attachment"), nullptr);
  Payload decoded;
  soap_->decode(wire, decoded);
  EXPECT_TRUE(decoded == Payload(list));

  // The empty list is an empty <wsb:messages/>, not a missing payload.
  const std::string empty_wire = encode(*soap_, MessageList{});
  const Doc empty_doc = parse_dom(empty_wire);
  ASSERT_NE(empty_doc, nullptr);
  const xmlNode* empty = payload_element(empty_doc.get());
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(str(empty->name), "messages");
  EXPECT_TRUE(element_children(empty).empty());
  soap_->decode(empty_wire, decoded);
  EXPECT_TRUE(decoded == Payload(MessageList{}));
  // A <wsb:message> outside the list is not a list of one.
  expect_rejected(*soap_, replace_once(wire, "<wsb:messages>", "<wsb:messages><wsb:messages>"), "");

  // soap-mtom: each attachment of the list is a part of its own.
  const MessageList two{{b, Message{{"r3", "s3", "t3", 3}, {}, {5, 6, 7}}}};
  EXPECT_EQ(mtom_->not_applicable(two), "");
  EXPECT_NE(mtom_->not_applicable(MessageList{{a}}), "");
  const std::string mtom_wire = encode(*mtom_, two);
  const auto parts =
      split_multipart(mtom_wire, content_type_param(mtom_->content_type(), "boundary"));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].body, std::string("\x00\x01\x02\xff", 4));
  EXPECT_EQ(parts[2].body, "\x05\x06\x07");
  mtom_->decode(mtom_wire, decoded);
  EXPECT_TRUE(decoded == Payload(two));
}

// gSOAP's base64 reader stops at the first '=' and skips the rest of the
// text, and takes an unpadded tail: each codec checks the lexical form of
// xsd:base64Binary (common/input_checks.h, Base64TextCheck) so that
// malformed padding is refused as a bad alphabet is. soap-mtom and
// soap-swa read inline base64 too (a peer may send it), so they check it.
TEST_F(SoapCodecTest, Base64WithWrongPaddingIsRejected) {
  const std::string wire = encode(*soap_, Binary{{1, 2, 3, 4}});
  ASSERT_NE(wire.find(">AQIDBA==<"), std::string::npos);
  for (Codec* codec : {soap_.get(), mtom_.get(), swa_.get()}) {
    // Data after the padding, more than two '=', a length that is not a
    // multiple of 4, '=' in the middle, padding alone.
    for (const char* bad : {">AQIDBA=A<", ">AQIDB===<", ">AQIDBA===<", ">AQIDBA<", ">AQIDB<",
                            ">AQ==BA==<", ">AQIDBA= =A<", ">====<", ">AQIDBA=&#65;<"})
      expect_rejected(*codec, replace_once(wire, ">AQIDBA==<", bad), "base64");
    // Whitespace anywhere and character references are XML, not base64:
    // still valid.
    for (const char* good :
         {">AQID BA==<", ">AQIDBA= =<", ">\n AQIDBA==\n<", ">&#65;QIDB&#x41;==<"}) {
      Payload decoded;
      ASSERT_NO_THROW(codec->decode(replace_once(wire, ">AQIDBA==<", good), decoded)) << good;
      EXPECT_TRUE(decoded == Payload(Binary{{1, 2, 3, 4}})) << good;
    }
  }
}

TEST_F(SoapCodecTest, StagesAreRepeatableAndOrdered) {
  for (Codec* codec : {soap_.get(), mtom_.get()}) {
    CodecStages* stages = codec->stages();
    ASSERT_NE(stages, nullptr);
    const Payload payload = generate(parse_spec("message-b/1KiB"));
    stages->bind(payload);
    std::string first, second;
    stages->write(first);
    stages->write(second);
    // Equal but for soap-mtom's MIME boundary, which gSOAP draws anew for
    // every message.
    EXPECT_EQ(first.size(), second.size()) << "write must not consume the binding";
    if (codec == soap_.get()) {
      EXPECT_TRUE(first == second);
    }
    stages->read(second);
    Payload once;
    stages->unbind(once);
    EXPECT_TRUE(once == payload);
    // unbind moves out of the structs, as the client does: a second one
    // would see them emptied, so it is refused until the next read.
    EXPECT_TRUE(stages->unbind_consumes());
    EXPECT_THROW(stages->unbind(once), std::logic_error);
    stages->read(second);
    Payload twice;
    stages->unbind(twice);
    EXPECT_TRUE(twice == payload);
    // A failed read leaves nothing to unbind.
    EXPECT_THROW(stages->read("<broken"), DecodeError);
    EXPECT_THROW(stages->unbind(once), std::logic_error);
  }
  auto fresh = find_codec("soap").make();
  std::string out;
  EXPECT_THROW(fresh->stages()->write(out), std::logic_error);
}

// The largest catalogue payloads: gSOAP's default limits (maxoccurs
// 100,000 elements) must not be what stops them.
TEST_F(SoapCodecTest, LargestCataloguePayloadsRoundTrip) {
  for (const char* label : {"binary/64MiB", "gml/10000"}) {
    const Payload payload = generate(parse_spec(label));
    for (Codec* codec : {soap_.get(), mtom_.get(), swa_.get()}) {
      SCOPED_TRACE(label);
      std::string wire;
      codec->encode(payload, wire);
      Payload decoded;
      ASSERT_NO_THROW(codec->decode(wire, decoded));
      EXPECT_TRUE(decoded == payload);
    }
  }
  IntArray many;
  many.values.assign(250'000, 7);
  std::string wire;
  soap_->encode(many, wire);
  Payload decoded;
  ASSERT_NO_THROW(soap_->decode(wire, decoded));
  EXPECT_TRUE(decoded == Payload(many));
}

}  // namespace
}  // namespace wsb
