// The xmlrpc codec beyond the shared conformance bar: the XML it writes
// (checked with libxml2, independently of xmlrpc-c) and strict types and
// shapes on the way back. Every xmlrpc-c 1.33.14 limit and defect the codec
// documents or guards against: xmlrpc_library_test.cpp.
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
#include "xmlrpc_codec_test.h"

namespace wsb {
namespace {

using Limits64 = std::numeric_limits<std::int64_t>;
using xmlrpc::int64_form_of_query;
using xmlrpc::Int64Form;
using xmlrpc::message_of;
using xmlrpc::message_value;

using testing::XmlrpcCodec;

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

std::string records_member(const std::string& records) {
  return "<member><name>records</name><value><array><data>" + records +
         "</data></array></value></member>";
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

}  // namespace
}  // namespace wsb
