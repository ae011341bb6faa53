// The xml codec: document shape checked with an independent libxml2 DOM
// parse, exact text round trips, and strict rejection of anything outside
// the schema (src/rest/xml_codec.cpp documents it).
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/codec.h"
#include "conformance_cases.h"
#include "gml_structure.h"
#include "test_helpers.h"

namespace wsb {
namespace {

constexpr const char* kNs = "urn:wsbench:rest";

using testing::Doc;
using testing::element_children;
using testing::str;
using testing::text_of;

// Parses independently of the codec (libxml2's DOM parser, no entity
// substitution, no network); nullptr if the text is not well-formed.
Doc parse_dom(const std::string& wire, int extra_options = 0) {
  // Some errors (the huge-text-node one) bypass XML_PARSE_NOERROR and go to
  // the global handler; keep them off the test output.
  xmlSetStructuredErrorFunc(nullptr, [](void*, xmlErrorPtr) {});
  Doc doc(xmlReadMemory(wire.data(), static_cast<int>(wire.size()), nullptr, nullptr,
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | extra_options));
  xmlSetStructuredErrorFunc(nullptr, nullptr);
  return doc;
}

class XmlCodecTest : public ::testing::Test {
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
  // Decoding must throw a DecodeError naming the codec, and print nothing:
  // libxml2's errors are captured, not sent to stderr. xml-dom reads the
  // same bytes through a tree and must refuse them alike.
  void expect_rejected(const std::string& wire, const std::string& expected_fragment = "") {
    for (Codec* codec : {codec_.get(), dom_.get()}) {
      SCOPED_TRACE(codec == dom_.get() ? "xml-dom" : "xml");
      Payload p;
      ::testing::internal::CaptureStderr();
      try {
        codec->decode(wire, p);
        ::testing::internal::GetCapturedStderr();
        ADD_FAILURE() << "accepted: " << wire;
      } catch (const DecodeError& e) {
        EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << wire;
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("xml: ", 0), 0u) << what;
        EXPECT_NE(what.find(expected_fragment), std::string::npos)
            << "message '" << what << "' lacks '" << expected_fragment << "' for " << wire;
      }
    }
  }
  static std::string doc(const std::string& root, const std::string& inner) {
    return "<" + root + " xmlns=\"" + kNs + "\">" + inner + "</" + root + ">";
  }
  // One building as GML 3, with the given gml:id, srsName, srsDimension and
  // posList text.
  static std::string gml_doc(const std::string& id, const std::string& srs,
                             const std::string& dimension, const std::string& pos_list) {
    return "<buildings xmlns=\"" + std::string(kNs) +
           "\" xmlns:gml=\"http://www.opengis.net/gml\"><gml:featureMember><Building gml:id=\"" +
           id +
           "\"><gml:name>n</gml:name><height>1.5</height><floors>2</floors><footprint>"
           "<gml:Polygon srsName=\"" +
           srs + "\"><gml:exterior><gml:LinearRing><gml:posList srsDimension=\"" + dimension +
           "\">" + pos_list +
           "</gml:posList></gml:LinearRing></gml:exterior></gml:Polygon></footprint></Building>"
           "</gml:featureMember></buildings>";
  }
  static std::string object(const std::string& id, const std::string& extra = "") {
    return "<object><id>" + id + "</id><name>n</name><value>1.5</value><active>true</active>" +
           extra + "</object>";
  }
  static std::string record(const std::string& ttl) {
    return "<record><title>t</title><author>a</author><body>b</body><sequence>1</sequence>"
           "<created>2</created><priority>3</priority><category>4</category><flags>5</flags>"
           "<ttl>" +
           ttl + "</ttl></record>";
  }
  static std::string message(const std::string& records) {
    return doc("message",
               "<recipient>r</recipient><sender>s</sender><authToken>t</authToken>"
               "<timestamp>9</timestamp><records>" +
                   records + "</records>");
  }

  std::unique_ptr<Codec> codec_ = find_codec("xml").make();
  std::unique_ptr<Codec> dom_ = find_codec("xml-dom").make();
};

// The DOM path decodes what the streaming one decodes, on every payload:
// the edge cases and the catalogue's kinds, through one reused instance of
// each and through its read and unbind stages.
TEST_F(XmlCodecTest, DomDecoderAgreesWithTheStreamingOne) {
  std::vector<Payload> payloads;
  for (const auto& [name, payload] : testing::conformance_payloads()) payloads.push_back(payload);
  for (const char* label : {"text", "ints/800", "strings/800:escaped", "objects/800",
                            "message-a/100", "message-b/128KiB", "binary/1MiB", "gml/100"})
    payloads.push_back(generate(parse_spec(label)));
  CodecStages* stages = dom_->stages();
  ASSERT_NE(stages, nullptr);
  EXPECT_FALSE(stages->splits_encode());
  EXPECT_TRUE(stages->splits_decode());
  for (const Payload& payload : payloads) {
    const std::string wire = encode(payload);
    const Payload streamed = decode(wire);
    EXPECT_TRUE(streamed == payload);
    Payload tree;
    dom_->decode(wire, tree);
    EXPECT_EQ(describe_difference(streamed, tree), "");
    // The tree is kept: unbinding it twice gives the model twice.
    stages->read(wire);
    Payload first, second;
    stages->unbind(first);
    stages->unbind(second);
    EXPECT_TRUE(first == payload);
    EXPECT_TRUE(second == payload);
  }
  Payload out;
  EXPECT_THROW(stages->read(""), DecodeError);
  EXPECT_THROW(stages->unbind(out), std::logic_error);
}

TEST_F(XmlCodecTest, StreamsWithoutAnIntermediateRepresentation) {
  EXPECT_EQ(codec_->stages(), nullptr);
}

TEST_F(XmlCodecTest, OutputIsWellFormedWithTheKindAsRootInTheNamespace) {
  const std::pair<const char*, const char*> cases[] = {
      {"text", "text"},          {"ints/50", "ints"},         {"strings/50", "strings"},
      {"objects/50", "objects"}, {"message-a/10", "message"}, {"message-b/1KiB", "message"},
      {"binary/1KiB", "binary"}, {"gml/3", "buildings"}};
  for (const auto& [label, root_name] : cases) {
    const std::string wire = encode(generate(parse_spec(label)));
    EXPECT_EQ(codec_->content_type(), "application/xml");
    EXPECT_EQ(wire.rfind("<?xml version=\"1.0\"?>", 0), 0u) << label;
    const Doc d = parse_dom(wire);
    ASSERT_NE(d, nullptr) << label << " is not well-formed";
    const xmlNode* root = xmlDocGetRootElement(d.get());
    ASSERT_NE(root, nullptr);
    EXPECT_EQ(str(root->name), root_name) << label;
    ASSERT_NE(root->ns, nullptr) << label;
    EXPECT_EQ(str(root->ns->href), kNs) << label;
    EXPECT_EQ(root->ns->prefix, nullptr) << label << ": expected the default namespace";
    // Every element is in the same namespace (GML's feature members in GML's).
    for (const xmlNode* c : element_children(root)) {
      ASSERT_NE(c->ns, nullptr);
      EXPECT_EQ(str(c->ns->href),
                root_name == std::string("buildings") ? testing::kGmlNamespace : kNs)
          << label;
    }
  }
}

TEST_F(XmlCodecTest, ElementsMirrorTheModel) {
  const Doc ints = parse_dom(encode(IntArray{{7, -2147483648}}));
  ASSERT_NE(ints, nullptr);
  const auto is = element_children(xmlDocGetRootElement(ints.get()));
  ASSERT_EQ(is.size(), 2u);
  EXPECT_EQ(str(is[0]->name), "i");
  EXPECT_EQ(text_of(is[0]), "7");
  EXPECT_EQ(text_of(is[1]), "-2147483648");

  const Doc objects = parse_dom(encode(ObjectArray{{{42, "a&b", 0.1, true}}}));
  ASSERT_NE(objects, nullptr);
  const auto objs = element_children(xmlDocGetRootElement(objects.get()));
  ASSERT_EQ(objs.size(), 1u);
  EXPECT_EQ(str(objs[0]->name), "object");
  const auto fields = element_children(objs[0]);
  ASSERT_EQ(fields.size(), 4u);
  const char* names[] = {"id", "name", "value", "active"};
  const char* texts[] = {"42", "a&b", "0.1", "true"};  // shortest round-trip double
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(str(fields[i]->name), names[i]);
    EXPECT_EQ(text_of(fields[i]), texts[i]);
  }

  const Doc gml = parse_dom(encode(
      BuildingCollection{{{"b", "n", 3.5, 2, {{1.0, 2.5}, {-3.0, 1e300}, {0, 0}, {1.0, 2.5}}}}}));
  ASSERT_NE(gml, nullptr);
  const xmlNode* pos_list = xmlDocGetRootElement(gml.get());
  for (int depth = 0; depth < 7; ++depth) {
    const auto children = element_children(pos_list);
    ASSERT_FALSE(children.empty()) << "GML path ends at depth " << depth;
    pos_list = children.back();
  }
  EXPECT_EQ(str(pos_list->name), "posList");
  EXPECT_EQ(text_of(pos_list), "1 2.5 -3 1e+300 0 0 1 2.5");

  // Empty optional parts are left out; the binary is libxml2's base64.
  const Doc msg = parse_dom(encode(Message{{"r", "s", "t", -5}, {}, {0xff, 0x00, 0x41}}));
  ASSERT_NE(msg, nullptr);
  const auto parts = element_children(xmlDocGetRootElement(msg.get()));
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(str(parts[2]->name), "authToken");
  EXPECT_EQ(str(parts[4]->name), "attachment");
  EXPECT_EQ(text_of(parts[4]), "/wBB");
}

TEST_F(XmlCodecTest, TextRoundTripsExactly) {
  const std::vector<std::string> strings = {
      "",
      "<>&\"'",
      "]]>",
      "  leading and trailing  ",
      "   ",
      "line\r\nbreaks\rand\ttabs\n",
      "\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80",
      "&amp; &#38; <![CDATA[x]]>",
  };
  const Payload p = StringArray{strings};
  EXPECT_TRUE(decode(encode(p)) == p);
  for (const auto& s : strings) {
    const Payload t = Text{s};
    EXPECT_TRUE(decode(encode(t)) == t) << s;
  }
}

TEST_F(XmlCodecTest, AcceptsWhatAnyXmlWriterMightProduce) {
  // Pretty-printing, comments, CDATA, character references, a prefix for the
  // namespace and an encoding declaration change nothing.
  EXPECT_TRUE(decode("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ints xmlns=\"urn:wsbench:rest\">"
                     "\n  <!-- first -->\n  <i>1</i>\n  <i>&#45;2</i>\n</ints>\n") ==
              Payload(IntArray{{1, -2}}));
  EXPECT_TRUE(decode("<w:text xmlns:w=\"urn:wsbench:rest\">a<![CDATA[<b>]]>c&#x20AC;</w:text>") ==
              Payload(Text{"a<b>c\xE2\x82\xAC"}));
  EXPECT_TRUE(decode(doc("binary", "AAEC\n/w==")) == Payload(Binary{{0, 1, 2, 0xff}}));
  EXPECT_TRUE(decode(doc("binary", "")) == Payload(Binary{}));
  EXPECT_TRUE(decode("<ints xmlns=\"urn:wsbench:rest\"/>") == Payload(IntArray{}));
}

TEST_F(XmlCodecTest, RejectsWrongElements) {
  expect_rejected(doc("ints", "<j>1</j>"), "expected <i>, found <j>");
  expect_rejected(doc("numbers", "<i>1</i>"), "unknown root element <numbers>");
  expect_rejected("<ints xmlns=\"urn:other\"><i>1</i></ints>", "namespace");
  expect_rejected("<ints><i>1</i></ints>", "namespace");
  expect_rejected(doc("ints", "<i xmlns=\"\">1</i>"), "namespace");
  expect_rejected(doc("objects", object("1", "<extra/>")), "unexpected element <extra>");
  expect_rejected(doc("objects", "<object><id>1</id><name>n</name><value>1</value></object>"),
                  "expected <active>");
  expect_rejected(doc("objects",
                      "<object><name>n</name><id>1</id><value>1</value>"
                      "<active>true</active></object>"),
                  "expected <id>, found <name>");
  expect_rejected(doc("text", "a<b/>c"), "must hold text");
  expect_rejected(doc("ints", "junk<i>1</i>"), "unexpected text");
  expect_rejected(doc("ints", "<i n=\"1\">1</i>"), "unexpected attribute n");
  expect_rejected(doc("message", "<recipient>r</recipient><recipient>r</recipient>"),
                  "expected <sender>, found <recipient>");
  std::string records_twice = message(record("1"));
  records_twice.insert(records_twice.size() - std::strlen("</message>"), "<records/>");
  expect_rejected(records_twice, "unexpected element <records>");
  EXPECT_NO_THROW(decode(message(record("1"))));
}

TEST_F(XmlCodecTest, RejectsWrongValues) {
  expect_rejected(doc("ints", "<i>x</i>"), "<i> 'x' is not a 32-bit integer");
  expect_rejected(doc("ints", "<i>1.5</i>"), "not a 32-bit integer");
  expect_rejected(doc("ints", "<i> 1</i>"), "not a 32-bit integer");
  expect_rejected(doc("ints", "<i>+1</i>"), "not a 32-bit integer");
  expect_rejected(doc("ints", "<i></i>"), "not a 32-bit integer");
  expect_rejected(doc("ints", "<i>2147483648</i>"), "not a 32-bit integer");
  expect_rejected(message(record("32768")), "<ttl> '32768' is not a 16-bit integer");
  EXPECT_NO_THROW(decode(message(record("-32768"))));
  expect_rejected(doc("objects",
                      "<object><id>1</id><name>n</name><value>1,5</value>"
                      "<active>true</active></object>"),
                  "<value> '1,5' is not a number");
  expect_rejected(doc("objects",
                      "<object><id>1</id><name>n</name><value>1</value>"
                      "<active>yes</active></object>"),
                  "not true or false");
  expect_rejected(gml_doc("b", "urn:ogc:def:crs:EPSG::3067", "2", "1 2 3"),
                  "odd number of coordinates");
  expect_rejected(gml_doc("b", "urn:ogc:def:crs:EPSG::3067", "2", "1 2 3 x 1 2 1 2"),
                  "'x' is not a number");
}

TEST_F(XmlCodecTest, BuildingsAreGml3Features) {
  for (const char* label : {"gml/3", "gml/3:escaped"}) {
    const auto gml = std::get<BuildingCollection>(generate(parse_spec(label)));
    const Doc d = parse_dom(encode(gml));
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(testing::gml_collection_problems(xmlDocGetRootElement(d.get()), kNs, gml), "")
        << label;
  }
  const std::string ring = "1 2 3 4 5 6 1 2";
  const std::string epsg = "urn:ogc:def:crs:EPSG::3067";
  EXPECT_EQ(std::get<BuildingCollection>(decode(gml_doc("b-1", epsg, "2", ring))),
            (BuildingCollection{{{"b-1", "n", 1.5, 2, {{1, 2}, {3, 4}, {5, 6}, {1, 2}}}}}));
  expect_rejected(gml_doc("b", "EPSG:4326", "2", ring), "srsName 'EPSG:4326' is not");
  expect_rejected(gml_doc("b", epsg, "3", ring), "srsDimension must be 2");
  expect_rejected(gml_doc("1b", epsg, "2", ring), "not an NCName");
  expect_rejected(gml_doc("b", epsg, "2", "1 2 3 4 1 2"), "at least 4 points");
  expect_rejected(gml_doc("b", epsg, "2", "1 2 3 4 5 6 7 8"), "not closed");
  std::string no_id = gml_doc("b", epsg, "2", ring);
  const std::string id_attribute = " gml:id=\"b\"";
  no_id.erase(no_id.find(id_attribute), id_attribute.size());
  expect_rejected(no_id, "lacks a required attribute");
  std::string wrong_ns = gml_doc("b", epsg, "2", ring);
  wrong_ns.replace(wrong_ns.find("<gml:exterior>"), 14, "<exterior>");
  wrong_ns.replace(wrong_ns.find("</gml:exterior>"), 15, "</exterior>");
  expect_rejected(wrong_ns, "<exterior> is not in namespace http://www.opengis.net/gml");
  EXPECT_THROW(encode(BuildingCollection{{{"b", "n", 1, 1, {{1, 2}, {3, 4}, {1, 2}}}}}),
               std::invalid_argument);
  EXPECT_THROW(encode(BuildingCollection{{{"b c", "n", 1, 1, {{1, 2}, {3, 4}, {5, 6}, {1, 2}}}}}),
               std::invalid_argument);
}

TEST_F(XmlCodecTest, MessageListIsMessagesWithMessageChildren) {
  const Message a{{"r", "s", "t", 1}, {}, {}};
  const Message b{{"r2", "s2", "t2", -2}, {}, {0x01}};
  const Doc d = parse_dom(encode(MessageList{{a, b}}));
  ASSERT_NE(d, nullptr);
  const xmlNode* root = xmlDocGetRootElement(d.get());
  EXPECT_EQ(str(root->name), "messages");
  const auto children = element_children(root);
  ASSERT_EQ(children.size(), 2u);
  for (const xmlNode* c : children) {
    EXPECT_EQ(str(c->name), "message");
    ASSERT_NE(c->ns, nullptr);
    EXPECT_EQ(str(c->ns->href), kNs);
  }
  EXPECT_EQ(text_of(element_children(children[1])[0]), "r2");
  EXPECT_TRUE(decode(encode(MessageList{{a, b}})) == Payload(MessageList{{a, b}}));
  // An empty list is an empty root and still decodes to a list, not to
  // nothing or to a message.
  EXPECT_TRUE(decode(encode(MessageList{})) == Payload(MessageList{}));
  EXPECT_TRUE(decode(doc("messages", "")) == Payload(MessageList{}));
  EXPECT_TRUE(decode("<messages xmlns=\"urn:wsbench:rest\"/>") == Payload(MessageList{}));
  // Each child is checked as strictly as a lone message.
  std::string inner = message(record("1"));
  inner = inner.substr(inner.find('>') + 1);  // drop the root's namespace declaration
  EXPECT_NO_THROW(decode(doc("messages", "<message>" + inner)));
  expect_rejected(doc("messages", "<record/>"), "expected <message>, found <record>");
  expect_rejected(
      doc("messages", "<message>" + inner.substr(0, inner.find("<sender>")) + "</message>"),
      "expected <sender>");
  expect_rejected(doc("messages", "<message>" + inner + "junk"), "unexpected text");
}

TEST_F(XmlCodecTest, RejectsInvalidBase64) {
  expect_rejected(doc("binary", "@@@@"), "<binary>: invalid base64");
  expect_rejected(doc("binary", "QUJD="), "invalid base64");
  expect_rejected(doc("binary", "QQ"), "invalid base64");
}

TEST_F(XmlCodecTest, ReportsParserErrorsWithoutPrinting) {
  const std::pair<std::string, std::string> cases[] = {
      {"<ints xmlns=\"urn:wsbench:rest\"><i>1</j></ints>", "line 1"},
      {"<ints xmlns=\"urn:wsbench:rest\"><i>1</i>", ""},
      {"<w:ints xmlns=\"urn:wsbench:rest\"/>", "prefix"},
      {"\xFF\xFE garbage", ""},
      {std::string("\0\0\0\0<a/>", 8), ""},
      {"<?xml version=\"1.0\" encoding=\"no-such-encoding\"?><text/>", ""},
      {"<text xmlns=\"urn:wsbench:rest\">\xC3\x28</text>", ""},  // invalid UTF-8
  };
  // Each as the first document a codec sees, then all through one codec,
  // whose reader is reused: a good document after them still decodes.
  for (const auto& [wire, fragment] : cases) {
    codec_ = find_codec("xml").make();
    expect_rejected(wire, fragment);
  }
  for (const auto& [wire, fragment] : cases) expect_rejected(wire, fragment);
  EXPECT_TRUE(decode(doc("ints", "<i>3</i>")) == Payload(IntArray{{3}}));
}

TEST_F(XmlCodecTest, NeverExpandsEntitiesOrFetchesExternalOnes) {
  const std::string secret_path = ::testing::TempDir() + "wsbench_xxe_secret.txt";
  { std::ofstream(secret_path) << "TOP-SECRET"; }
  const std::string xxe = "<?xml version=\"1.0\"?><!DOCTYPE text [<!ENTITY xxe SYSTEM \"file://" +
                          secret_path + "\">]>" + doc("text", "&xxe;");
  // The document is a real XXE: a parser told to substitute entities reads
  // the file.
  const Doc expanded = parse_dom(xxe, XML_PARSE_NOENT);
  ASSERT_NE(expanded, nullptr);
  EXPECT_EQ(text_of(xmlDocGetRootElement(expanded.get())), "TOP-SECRET");
  // The codec refuses it.
  expect_rejected(xxe, "DTDs are not accepted");
  std::remove(secret_path.c_str());

  expect_rejected("<!DOCTYPE text [<!ENTITY e \"boom\">]>" + doc("text", "&e;"),
                  "DTDs are not accepted");
  expect_rejected(doc("text", "&undefined;"), "");

  // Billion laughs: refused promptly, without expanding anything.
  std::string laughs = "<!DOCTYPE text [<!ENTITY l0 \"ha\">";
  for (int i = 1; i < 10; ++i)
    laughs += "<!ENTITY l" + std::to_string(i) + " \"" + [&] {
      std::string refs;
      for (int k = 0; k < 10; ++k) refs += "&l" + std::to_string(i - 1) + ";";
      return refs;
    }() + "\">";
  laughs += "]>" + doc("text", "&l9;");
  const auto start = std::chrono::steady_clock::now();
  expect_rejected(laughs, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST_F(XmlCodecTest, BinaryBeyondLibxml2sTextNodeLimitRoundTrips) {
  // 16 MiB of binary is about 22 MB of base64 in one text node, over the
  // 10,000,000-byte limit libxml2 enforces without XML_PARSE_HUGE.
  Binary big;
  big.data.resize(16u << 20);
  for (std::size_t i = 0; i < big.data.size(); ++i)
    big.data[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
  const Payload p = big;
  const std::string wire = encode(p);
  EXPECT_EQ(parse_dom(wire), nullptr) << "expected the default limit to reject this";
  EXPECT_NE(parse_dom(wire, XML_PARSE_HUGE), nullptr);
  EXPECT_TRUE(decode(wire) == p);
}

TEST_F(XmlCodecTest, EncodeRejectsNulAndRecovers) {
  std::string wire;
  EXPECT_THROW(codec_->encode(Text{std::string("a\0b", 3)}, wire), std::invalid_argument);
  const Payload p = StringArray{{"after", "failure"}};
  codec_->encode(p, wire);
  ASSERT_NE(parse_dom(wire), nullptr) << wire;
  EXPECT_TRUE(decode(wire) == p);
}

}  // namespace
}  // namespace wsb
