// The xmlrpc codec beyond the shared conformance bar: the XML it writes
// (checked with libxml2, independently of xmlrpc-c), strict types on the way
// back, and every xmlrpc-c 1.33.14 limit and defect the codec documents or
// guards against, pinned so a library upgrade that changes them shows up.
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <xmlrpc-c/base.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <xmlrpc-c/base.hpp>
#include <xmlrpc-c/girerr.hpp>
#include <xmlrpc-c/xml.hpp>

#include "common/codec.h"
#include "common/payload.h"
#include "conformance_cases.h"
#include "xmlrpc/xmlrpc_codec.h"
#include "xmlrpc/xmlrpc_mapping.h"

namespace wsb {
namespace {

using Limits64 = std::numeric_limits<std::int64_t>;
using xmlrpc::int64_form_of_query;
using xmlrpc::Int64Form;
using xmlrpc::message_of;
using xmlrpc::message_value;

// A hand-written response around `value_content` (the inside of <value>),
// for inputs xmlrpc-c would never generate.
std::string response(const std::string& value_content) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<methodResponse><params><param><value>" +
         value_content + "</value></param></params></methodResponse>";
}

std::string body(const std::string& kind, const std::string& value_xml) {
  return response("<struct><member><name>" + kind + "</name><value>" + value_xml +
                  "</value></member></struct>");
}

std::string record_xml(const std::string& ttl_xml, const std::string& sequence_xml = "<i8>1</i8>") {
  return "<value><struct>"
         "<member><name>title</name><value><string>t</string></value></member>"
         "<member><name>author</name><value><string>a</string></value></member>"
         "<member><name>body</name><value><string>b</string></value></member>"
         "<member><name>sequence</name><value>" +
         sequence_xml +
         "</value></member>"
         "<member><name>created</name><value><i8>2</i8></value></member>"
         "<member><name>priority</name><value><i4>3</i4></value></member>"
         "<member><name>category</name><value><i4>4</i4></value></member>"
         "<member><name>flags</name><value><i4>5</i4></value></member>"
         "<member><name>ttl</name><value>" +
         ttl_xml + "</value></member></struct></value>";
}

std::string message_xml(const std::string& records, const std::string& timestamp = "<i8>7</i8>") {
  return body("message",
              "<struct>"
              "<member><name>recipient</name><value><string>r</string></value></member>"
              "<member><name>sender</name><value><string>s</string></value></member>"
              "<member><name>authToken</name><value><string>k</string></value></member>"
              "<member><name>timestamp</name><value>" +
                  timestamp + "</value></member>" + records + "</struct>");
}

std::string records_member(const std::string& records) {
  return "<member><name>records</name><value><array><data>" + records +
         "</data></array></value></member>";
}

Message sample_message() {
  Message m;
  m.meta = {"recip <&>", "sender \xC3\xA9", "token \xE4\xB8\xAD", Limits64::min()};
  for (int i = 0; i < 3; ++i) {
    Record r;
    r.title = "title \"" + std::to_string(i) + "'";
    r.author = "author";
    r.body = "body ]]> &amp;";
    r.sequence = Limits64::max() - i;
    r.created = Limits64::min() + i;
    r.priority = i;
    r.category = -i;
    r.flags = 7;
    r.ttl = static_cast<std::int16_t>(-32768 + i);
    m.records.push_back(r);
  }
  m.attachment = testing::all_byte_values();
  return m;
}

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

class XmlDoc {
 public:
  explicit XmlDoc(const std::string& xml)
      : doc_(xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "response.xml", nullptr,
                           XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING),
             xmlFreeDoc) {}

  bool well_formed() const { return doc_ != nullptr; }

  std::string root_name() const {
    const xmlNode* root = xmlDocGetRootElement(doc_.get());
    return root == nullptr ? "" : reinterpret_cast<const char*>(root->name);
  }

  double number(const std::string& xpath) const {
    std::unique_ptr<xmlXPathContext, decltype(&xmlXPathFreeContext)> ctx(
        xmlXPathNewContext(doc_.get()), xmlXPathFreeContext);
    std::unique_ptr<xmlXPathObject, decltype(&xmlXPathFreeObject)> result(
        xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(xpath.c_str()), ctx.get()),
        xmlXPathFreeObject);
    return result ? xmlXPathCastToNumber(result.get()) : std::nan("");
  }

  std::string text(const std::string& xpath) const {
    std::unique_ptr<xmlXPathContext, decltype(&xmlXPathFreeContext)> ctx(
        xmlXPathNewContext(doc_.get()), xmlXPathFreeContext);
    std::unique_ptr<xmlXPathObject, decltype(&xmlXPathFreeObject)> result(
        xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(xpath.c_str()), ctx.get()),
        xmlXPathFreeObject);
    if (!result) return "<no result>";
    xmlChar* s = xmlXPathCastToString(result.get());
    std::string out(reinterpret_cast<const char*>(s));
    xmlFree(s);
    return out;
  }

 private:
  std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)> doc_;
};

class XmlrpcCodec : public ::testing::Test {
 protected:
  std::string encode(const Payload& p) {
    std::string wire;
    codec_->encode(p, wire);
    return wire;
  }

  Payload decode(const std::string& wire) {
    Payload p;
    codec_->decode(wire, p);
    return p;
  }

  // Decoding must throw DecodeError whose message contains `expected`.
  void expect_decode_error(const std::string& wire, const std::string& expected) {
    Payload p;
    try {
      codec_->decode(wire, p);
      ADD_FAILURE() << "decode succeeded on: " << wire.substr(0, 300);
    } catch (const DecodeError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
          << "message '" << e.what() << "' lacks '" << expected << "'";
      EXPECT_EQ(std::string(e.what()).rfind("xmlrpc: ", 0), 0u) << e.what();
    }
  }

  std::unique_ptr<Codec> codec_ = find_codec("xmlrpc").make();
};

TEST_F(XmlrpcCodec, WritesAWellFormedMethodResponseNamingThePayload) {
  const std::vector<std::pair<std::string, Payload>> cases = {
      {"text", Text{"hello"}},
      {"ints", IntArray{{1, -2, 3}}},
      {"strings", StringArray{{"a", ""}}},
      {"objects", ObjectArray{{{1, "one", 0.5, true}, {-2, "", -2.75, false}}}},
      {"message", sample_message()},
      {"binary", Binary{testing::all_byte_values()}},
      {"buildings", BuildingCollection{{{"b1", "n", 12.5, 3, {{1.5, 2.5}, {1.5, 2.5}}},
                                        {"b2", "", 3.0, 1, {}}}}},
  };
  for (const auto& [kind, payload] : cases) {
    const std::string wire = encode(payload);
    const XmlDoc doc(wire);
    ASSERT_TRUE(doc.well_formed()) << kind << ": " << wire.substr(0, 500);
    EXPECT_EQ(doc.root_name(), "methodResponse") << kind;
    EXPECT_EQ(doc.number("count(/methodResponse/params/param)"), 1) << kind;
    EXPECT_EQ(doc.number("count(/methodResponse/params/param/value/struct/member)"), 1) << kind;
    EXPECT_EQ(doc.text("/methodResponse/params/param/value/struct/member/name"), kind);
    EXPECT_EQ(doc.number("count(//fault)"), 0) << kind;
    EXPECT_TRUE(decode(wire) == payload) << kind;
  }
  EXPECT_EQ(codec_->content_type(), "text/xml");
}

TEST_F(XmlrpcCodec, WritesInt64AsI8AndBinariesAsBase64) {
  const Message m = sample_message();
  const XmlDoc doc(encode(m));
  ASSERT_TRUE(doc.well_formed());
  EXPECT_EQ(doc.text("//member[name='timestamp']/value/i8"), std::to_string(Limits64::min()));
  EXPECT_EQ(doc.number("count(//member[name='sequence']/value/i8)"), 3);
  EXPECT_EQ(doc.number("count(//member[name='created']/value/i8)"), 3);
  EXPECT_EQ(doc.text("//member[name='sequence']/value/i8"), std::to_string(Limits64::max()));
  // 32- and 16-bit fields stay plain XML-RPC integers.
  for (const char* field : {"priority", "category", "flags", "ttl"}) {
    EXPECT_EQ(doc.number(std::string("count(//member[name='") + field + "']/value/i4)"), 3)
        << field;
  }
  EXPECT_EQ(doc.number("count(//member[name='attachment']/value/base64)"), 1);

  const XmlDoc binary(encode(Binary{testing::all_byte_values()}));
  EXPECT_EQ(binary.number("count(//member[name='binary']/value/base64)"), 1);
  const XmlDoc empty_binary(encode(Binary{}));
  EXPECT_EQ(empty_binary.number("count(//member[name='binary']/value/base64)"), 1);
  EXPECT_TRUE(decode(encode(Binary{})) == Payload(Binary{}));
}

TEST_F(XmlrpcCodec, MessageListIsAnArrayOfMessageStructsNamedMessages) {
  Message plain;
  plain.meta = {"r", "s", "t", 3};
  const MessageList list{{sample_message(), plain, Message{}}};
  const std::string wire = encode(list);
  const XmlDoc doc(wire);
  ASSERT_TRUE(doc.well_formed()) << wire.substr(0, 500);
  EXPECT_EQ(doc.text("/methodResponse/params/param/value/struct/member/name"), "messages");
  const std::string items =
      "/methodResponse/params/param/value/struct/member/value/array/data/value";
  EXPECT_EQ(doc.number("count(" + items + ")"), 3);
  EXPECT_EQ(doc.number("count(" + items + "/struct/member[name='timestamp']/value/i8)"), 3);
  // The same message struct as the message kind, empty parts omitted.
  EXPECT_EQ(doc.number("count(" + items + "[1]/struct/member[name='records'])"), 1);
  EXPECT_EQ(doc.number("count(" + items + "[2]/struct/member)"), 4);
  EXPECT_TRUE(decode(wire) == Payload(list));

  const std::string empty = encode(MessageList{});
  EXPECT_EQ(XmlDoc(empty).number("count(//member[name='messages']/value/array/data)"), 1);
  EXPECT_TRUE(decode(empty) == Payload(MessageList{}));
}

TEST_F(XmlrpcCodec, MessageListOfTheWrongShapeIsADecodeError) {
  const auto list = [](const std::string& items) {
    return body("messages", "<array><data>" + items + "</data></array>");
  };
  expect_decode_error(body("messages", "<struct></struct>"), "messages is STRUCT");
  expect_decode_error(list("<value><i4>1</i4></value>"), "message is INT");
  expect_decode_error(list("<value><struct></struct></value>"), "missing member 'recipient'");
  // One good message does not excuse a bad one after it.
  const std::string good = encode(MessageList{{Message{}}});
  const std::size_t from = good.find("<data>") + 6;
  const std::string message = good.substr(from, good.find("</data>") - from);
  ASSERT_TRUE(decode(list(message)) == Payload(MessageList{{Message{}}}));
  expect_decode_error(list(message + "<value><array><data/></array></value>"), "message is ARRAY");
}

TEST_F(XmlrpcCodec, OmitsEmptyRecordsAndAttachment) {
  Message m = sample_message();
  m.records.clear();
  m.attachment.clear();
  const std::string wire = encode(m);
  const XmlDoc doc(wire);
  EXPECT_EQ(doc.number("count(//member[name='records'])"), 0);
  EXPECT_EQ(doc.number("count(//member[name='attachment'])"), 0);
  EXPECT_EQ(doc.number("count(//member[name='timestamp'])"), 1);
  EXPECT_TRUE(decode(wire) == Payload(m));
}

TEST_F(XmlrpcCodec, StringsWithXmlSpecialsAndBmpUtf8RoundTripExactly) {
  const StringArray strings{{"", " lead and trail ", "<>&\"'", "]]>", "&amp; &#x41;", "line\nbreak",
                             "\xC3\xA9\xE4\xB8\xAD\xEF\xBF\xBD", "tab\there"}};
  const std::string wire = encode(strings);
  EXPECT_NE(wire.find("&lt;&gt;&amp;"), std::string::npos);
  EXPECT_TRUE(decode(wire) == Payload(strings));
}

TEST_F(XmlrpcCodec, CarriageReturnsGoOutEscapedButComeBackAsLineFeeds) {
  // Pinned xmlrpc-c behaviour: the parser builds strings with
  // xmlrpc_string_new_lp, which turns CR and CRLF into LF.
  const std::string wire = encode(Text{"a\rb\r\nc"});
  EXPECT_NE(wire.find("a&#x0d;b&#x0d;\nc"), std::string::npos) << wire;
  EXPECT_TRUE(decode(wire) == Payload(Text{"a\nb\nc"}));
}

TEST_F(XmlrpcCodec, RefusesCharactersBeyondTheBasicMultilingualPlane) {
  const Text emoji{"smile \xF0\x9F\x98\x80"};
  EXPECT_NE(codec_->unsupported(emoji), "");
  EXPECT_EQ(codec_->unsupported(Text{"\xC3\xA9\xE4\xB8\xAD"}), "");
  EXPECT_EQ(codec_->unsupported(sample_message()), "");
  Message m = sample_message();
  m.records[2].body = emoji.value;
  EXPECT_NE(codec_->unsupported(m), "");
  std::string wire;
  EXPECT_THROW(codec_->encode(emoji, wire), std::invalid_argument);
  EXPECT_THROW(codec_->encode(m, wire), std::invalid_argument);
  // The parser refuses them too, whoever wrote the document.
  expect_decode_error(body("text", "<string>\xF0\x9F\x98\x80</string>"), "UTF-8");
  expect_decode_error(body("text", "<string>&#x1F600;</string>"), "UTF-8");
}

TEST_F(XmlrpcCodec, FaultResponseIsADecodeErrorWithCodeAndString) {
  const std::string fault =
      "<?xml version=\"1.0\"?><methodResponse><fault><value><struct>"
      "<member><name>faultCode</name><value><int>42</int></value></member>"
      "<member><name>faultString</name><value><string>Too many parameters</string></value>"
      "</member></struct></value></fault></methodResponse>";
  expect_decode_error(fault, "fault response 42: Too many parameters");
}

TEST_F(XmlrpcCodec, WrongTypesAreDecodeErrors) {
  expect_decode_error(body("ints", "<array><data><value><string>1</string></value></data></array>"),
                      "int is STRING");
  expect_decode_error(body("ints", "<array><data><value><i8>1</i8></value></data></array>"),
                      "int is I8");
  expect_decode_error(body("text", "<i4>1</i4>"), "text is INT");
  expect_decode_error(body("ints", "<struct></struct>"), "ints is STRUCT");
  expect_decode_error(body("binary", "<string>AAEC</string>"), "binary is STRING");
  // 64-bit fields: <i8>, <i4> or a decimal string, nothing else.
  expect_decode_error(message_xml("", "<double>7.0</double>"),
                      "timestamp is DOUBLE, not an i8, i4 or decimal string");
  expect_decode_error(message_xml(records_member(record_xml("<i4>1</i4>", "<boolean>1</boolean>"))),
                      "sequence is BOOL");
  expect_decode_error(message_xml(records_member(record_xml("<double>1.0</double>"))),
                      "ttl is DOUBLE");
  expect_decode_error(body("objects",
                           "<array><data><value><struct>"
                           "<member><name>id</name><value><i4>1</i4></value></member>"
                           "<member><name>name</name><value><string>n</string></value></member>"
                           "<member><name>value</name><value><i4>2</i4></value></member>"
                           "<member><name>active</name><value><boolean>1</boolean></value></member>"
                           "</struct></value></data></array>"),
                      "value is INT");
  expect_decode_error(body("text", "<foo>1</foo>"), "Unknown value type");
}

// What a standard XML-RPC client sends for a 64-bit field: <int> when the
// value fits, else the decimal string /RPC2?int64=string gave it.
TEST_F(XmlrpcCodec, Int64FieldsAreReadAsI4AndAsDecimalStrings) {
  const auto timestamp = [&](const std::string& value) {
    return std::get<Message>(decode(message_xml("", value))).meta.timestamp;
  };
  EXPECT_EQ(timestamp("<i4>-7</i4>"), -7);
  EXPECT_EQ(timestamp("<int>7</int>"), 7);
  EXPECT_EQ(timestamp("<string>-9223372036854775808</string>"), Limits64::min());
  EXPECT_EQ(timestamp("<string>9223372036854775807</string>"), Limits64::max());
  const Message m = std::get<Message>(
      decode(message_xml(records_member(record_xml("<i4>1</i4>", "<i4>3</i4>")))));
  ASSERT_EQ(m.records.size(), 1u);
  EXPECT_EQ(m.records[0].sequence, 3);

  expect_decode_error(message_xml("", "<string>9223372036854775808</string>"),
                      "timestamp '9223372036854775808' does not fit 64 bits");
  for (const char* bad : {"", "12x", "+7", " 7", "7 ", "0x10", "1e3", "--1"})
    expect_decode_error(message_xml("", std::string("<string>") + bad + "</string>"),
                        "' is not a decimal integer");
}

TEST_F(XmlrpcCodec, StandardFormWritesInt64AsDecimalStrings) {
  EXPECT_EQ(int64_form_of_query(""), Int64Form::i8);
  EXPECT_EQ(int64_form_of_query("a=b&int64=string"), Int64Form::string);
  EXPECT_EQ(int64_form_of_query("int64=string&int64=i8"), Int64Form::i8);
  EXPECT_THROW(int64_form_of_query("int64=double"), DecodeError);

  const Message sample = sample_message();
  const xmlrpc_c::value standard = message_value(sample, Int64Form::string);
  const xmlrpc_c::cstruct fields = xmlrpc_c::value_struct(standard).cvalue();
  ASSERT_EQ(fields.at("timestamp").type(), xmlrpc_c::value::TYPE_STRING);
  EXPECT_EQ(xmlrpc_c::value_string(fields.at("timestamp")).cvalue(),
            std::to_string(sample.meta.timestamp));
  EXPECT_EQ(xmlrpc_c::value(message_value(sample)).type(), xmlrpc_c::value::TYPE_STRUCT);
  EXPECT_EQ(xmlrpc_c::value_struct(message_value(sample)).cvalue().at("timestamp").type(),
            xmlrpc_c::value::TYPE_I8);
  // Read back, the strings are the same message.
  EXPECT_TRUE(message_of(standard) == sample);
}

TEST_F(XmlrpcCodec, MissingMembersAndBadShapesAreDecodeErrors) {
  expect_decode_error(response("<array><data></data></array>"), "payload value is ARRAY");
  expect_decode_error(response("<struct></struct>"), "exactly one member");
  expect_decode_error(response("<struct><member><name>text</name><value>a</value></member>"
                               "<member><name>ints</name><value>b</value></member></struct>"),
                      "exactly one member");
  expect_decode_error(body("video", "<string>x</string>"), "unknown payload member 'video'");
  const std::string sender =
      "<member><name>sender</name><value><string>s</string></value></member>";
  std::string no_sender = message_xml("");
  no_sender.erase(no_sender.find(sender), sender.size());
  expect_decode_error(no_sender, "missing member 'sender'");
  const std::string ttl = "<member><name>ttl</name><value><i4>1</i4></value></member>";
  std::string no_ttl = record_xml("<i4>1</i4>");
  no_ttl.erase(no_ttl.find(ttl), ttl.size());
  expect_decode_error(message_xml(records_member(no_ttl)), "missing member 'ttl'");
  const std::string three_coordinates =
      "<array><data><value><struct>"
      "<member><name>id</name><value><string>b</string></value></member>"
      "<member><name>name</name><value><string>n</string></value></member>"
      "<member><name>height</name><value><double>1.5</double></value></member>"
      "<member><name>floors</name><value><i4>2</i4></value></member>"
      "<member><name>footprint</name><value><array><data><value><array><data>"
      "<value><double>1</double></value><value><double>2</double></value>"
      "<value><double>3</double></value></data></array></value></data></array></value></member>"
      "</struct></value></data></array>";
  expect_decode_error(body("buildings", three_coordinates), "two coordinates");
  expect_decode_error(response("<i4>1</i4>") + "junk", "does not end with </methodResponse>");
  expect_decode_error("", "does not end with </methodResponse>");
}

TEST_F(XmlrpcCodec, TtlOutsideInt16IsADecodeError) {
  const auto with_ttl = [](const std::string& ttl) {
    return message_xml(records_member(record_xml("<i4>" + ttl + "</i4>")));
  };
  expect_decode_error(with_ttl("32768"), "ttl is out of 16-bit range");
  expect_decode_error(with_ttl("-32769"), "ttl is out of 16-bit range");
  const auto ok = std::get<Message>(decode(with_ttl("-32768")));
  ASSERT_EQ(ok.records.size(), 1u);
  EXPECT_EQ(ok.records[0].ttl, -32768);
  EXPECT_EQ(ok.meta.timestamp, 7);
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
