// The soap-mtom and soap-swa packages taken apart by hand: boundary, parts,
// xop:Include or href, raw attachments and GML documents, and rejection of
// missing or broken attachments (src/soap/soap_codec.cpp documents them).
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <string>
#include <vector>

#include "common/base64.h"
#include "common/codec.h"
#include "gml_structure.h"
#include "soap_codec_test.h"
#include "test_helpers.h"

namespace wsb {
namespace {

using testing::attribute;
using testing::Doc;
using testing::SoapCodecTest;
using testing::str;

// ---- soap-mtom: MTOM/XOP ----

TEST_F(SoapCodecTest, MtomMessageBIsMultipartRelatedWithRawAttachment) {
  const Payload payload = generate(parse_spec("message-b/128KiB"));
  const Bytes& attachment = std::get<Message>(payload).attachment;
  EXPECT_EQ(mtom_->not_applicable(payload), "");
  const std::string wire = encode(*mtom_, payload);

  const std::string content_type = mtom_->content_type();
  EXPECT_EQ(content_type.rfind("multipart/related;", 0), 0u) << content_type;
  EXPECT_EQ(content_type_param(content_type, "type"), "application/xop+xml");
  EXPECT_EQ(content_type_param(content_type, "start-info"), "text/xml");
  const std::string boundary = content_type_param(content_type, "boundary");
  const std::string start = content_type_param(content_type, "start");
  ASSERT_FALSE(boundary.empty());
  ASSERT_FALSE(start.empty());

  const auto parts = split_multipart(wire, boundary);
  ASSERT_EQ(parts.size(), 2u);
  const Part& root = parts[0];
  EXPECT_EQ(root.headers.at("Content-ID"), start);
  EXPECT_EQ(root.headers.at("Content-Type").rfind("application/xop+xml", 0), 0u);

  // The root part is the envelope, with an xop:Include in place of the
  // base64 text.
  const Doc doc = parse_dom(root.body);
  ASSERT_NE(doc, nullptr) << "root part is not well-formed XML";
  EXPECT_EQ(testing::unused_declarations(doc.get()), "");  // xop is declared and used
  const xmlNode* message = payload_element(doc.get());
  ASSERT_NE(message, nullptr);
  const xmlNode* include = only_child(child_named(message, "attachment"), "Include", kXopNs);
  ASSERT_NE(include, nullptr);
  const std::string cid = attribute(include, "href");
  ASSERT_EQ(cid.rfind("cid:", 0), 0u) << cid;

  // The referenced part carries the bytes raw: no base64 anywhere.
  const Part& binary = parts[1];
  EXPECT_EQ(binary.headers.at("Content-ID"), "<" + cid.substr(4) + ">");
  EXPECT_EQ(binary.headers.at("Content-Type"), "application/octet-stream");
  EXPECT_EQ(binary.body, std::string(attachment.begin(), attachment.end()));
  const std::string base64 = base64_encode(attachment);
  EXPECT_EQ(wire.find(base64.substr(0, 64)), std::string::npos);
  EXPECT_LT(wire.size(), attachment.size() + 2048);

  Payload decoded;
  mtom_->decode(wire, decoded);
  EXPECT_TRUE(decoded == payload);
}

TEST_F(SoapCodecTest, MtomWithoutBinaryIsNotApplicableAndPlainSoap) {
  for (const char* label : {"text", "objects/200", "message-a/100"}) {
    SCOPED_TRACE(label);
    const Payload payload = generate(parse_spec(label));
    EXPECT_EQ(mtom_->not_applicable(payload), "no binary: MTOM output identical to soap");
    EXPECT_EQ(soap_->not_applicable(payload), "");
    const std::string wire = encode(*mtom_, payload);
    EXPECT_EQ(wire, encode(*soap_, payload));
    EXPECT_EQ(mtom_->content_type(), "text/xml; charset=utf-8");
    Payload decoded;
    mtom_->decode(wire, decoded);
    EXPECT_TRUE(decoded == payload);
  }
  EXPECT_NE(mtom_->not_applicable(Binary{}), "");
  EXPECT_EQ(mtom_->not_applicable(generate(parse_spec("binary/1KiB"))), "");
}

TEST_F(SoapCodecTest, MtomAttachesBuildingsAsAGml3Document) {
  const auto gml = std::get<BuildingCollection>(generate(parse_spec("gml/3")));
  EXPECT_EQ(mtom_->not_applicable(gml), "");
  const std::string wire = encode(*mtom_, gml);
  const std::string content_type = mtom_->content_type();
  const auto parts = split_multipart(wire, content_type_param(content_type, "boundary"));
  ASSERT_EQ(parts.size(), 2u);
  const Doc envelope = parse_dom(parts[0].body);
  ASSERT_NE(envelope, nullptr);
  EXPECT_EQ(testing::unused_declarations(envelope.get()), "");  // no gml: the document has it
  const xmlNode* document = payload_element(envelope.get());
  ASSERT_NE(document, nullptr);
  EXPECT_EQ(str(document->name), "buildingsDocument");
  const xmlNode* include = only_child(document, "Include", kXopNs);
  ASSERT_NE(include, nullptr);
  EXPECT_EQ(parts[1].headers.at("Content-ID"), "<" + attribute(include, "href").substr(4) + ">");
  EXPECT_EQ(parts[1].headers.at("Content-Type"), "application/gml+xml");

  // The attached part is a GML document on its own, declaring only the
  // namespaces it uses.
  const Doc gml_doc = parse_dom(parts[1].body);
  ASSERT_NE(gml_doc, nullptr) << "attachment is not well-formed XML";
  const xmlNode* root = xmlDocGetRootElement(gml_doc.get());
  EXPECT_EQ(str(root->name), "buildings");
  EXPECT_EQ(ns_of(root), kWsbNs);
  EXPECT_EQ(testing::gml_collection_problems(root, "urn:wsbench", gml), "");
  EXPECT_EQ(parts[1].body.find("soap/envelope"), std::string::npos);

  Payload decoded;
  mtom_->decode(wire, decoded);
  EXPECT_TRUE(decoded == Payload(gml));
  expect_rejected(*mtom_, replace_once(wire, "</gml:featureMember>", ""), "GML document");
  expect_rejected(*mtom_, replace_once(wire, "srsDimension=\"2\"", "srsDimension=\"3\""),
                  "srsDimension must be 2");
  expect_rejected(*mtom_, replace_once(wire, "</wsb:buildings>", "</wsb:buildings><x/>"),
                  "content after the root element");
}

TEST_F(SoapCodecTest, MtomRejectsMissingOrBrokenAttachments) {
  const Payload payload = generate(parse_spec("message-b/1KiB"));
  const std::string wire = encode(*mtom_, payload);
  const std::string boundary = content_type_param(mtom_->content_type(), "boundary");
  const auto second_part = wire.find("\r\n--" + boundary + "\r\n");
  ASSERT_NE(second_part, std::string::npos);
  // The referenced part is gone.
  expect_rejected(*mtom_, wire.substr(0, second_part) + "\r\n--" + boundary + "--",
                  "missing attachment");
  // The reference names a part that does not exist.
  expect_rejected(*mtom_, replace_once(wire, "href=\"cid:", "href=\"cid:x"), "missing attachment");
  // The closing boundary is cut off, at several depths.
  for (const std::size_t cut : {std::size_t{1}, std::size_t{2}, boundary.size() + 4})
    expect_rejected(*mtom_, std::string_view(wire).substr(0, wire.size() - cut), "");
  // The attachment's bytes are cut short.
  expect_rejected(*mtom_, std::string_view(wire).substr(0, wire.size() - boundary.size() - 100),
                  "");
}

// ---- soap-swa: SOAP with Attachments ----

TEST_F(SoapCodecTest, SwaMessageBReferencesARawMimePartByCid) {
  const Payload payload = generate(parse_spec("message-b/128KiB"));
  const Bytes& attachment = std::get<Message>(payload).attachment;
  EXPECT_EQ(swa_->not_applicable(payload), "");
  const std::string wire = encode(*swa_, payload);
  const auto parts = swa_parts(wire, swa_->content_type());
  ASSERT_EQ(parts.size(), 2u);

  // The envelope's attachment element is empty and names the part.
  const Doc doc = parse_dom(parts[0].body);
  ASSERT_NE(doc, nullptr) << "root part is not well-formed XML";
  const xmlNode* message = payload_element(doc.get());
  ASSERT_NE(message, nullptr);
  const xmlNode* reference = child_named(message, "attachment");
  ASSERT_NE(reference, nullptr);
  EXPECT_EQ(reference->children, nullptr);
  EXPECT_EQ(attribute(reference, "href"), "cid:attachment-1");

  EXPECT_EQ(parts[1].headers.at("Content-ID"), "<attachment-1>");
  EXPECT_EQ(parts[1].headers.at("Content-Type"), "application/octet-stream");
  EXPECT_EQ(parts[1].body, std::string(attachment.begin(), attachment.end()));
  EXPECT_EQ(wire.find(base64_encode(attachment).substr(0, 64)), std::string::npos);
  EXPECT_LT(wire.size(), attachment.size() + 2048);

  Payload decoded;
  swa_->decode(wire, decoded);
  EXPECT_TRUE(decoded == payload);
}

TEST_F(SoapCodecTest, SwaAttachesBuildingsAsAGml3Document) {
  const auto gml = std::get<BuildingCollection>(generate(parse_spec("gml/3")));
  EXPECT_EQ(swa_->not_applicable(gml), "");
  const std::string wire = encode(*swa_, gml);
  const auto parts = swa_parts(wire, swa_->content_type());
  ASSERT_EQ(parts.size(), 2u);
  const Doc envelope = parse_dom(parts[0].body);
  ASSERT_NE(envelope, nullptr);
  const xmlNode* document = payload_element(envelope.get());
  ASSERT_NE(document, nullptr);
  EXPECT_EQ(str(document->name), "buildingsDocument");
  EXPECT_EQ(attribute(document, "href"), "cid:attachment-1");
  EXPECT_EQ(parts[1].headers.at("Content-Type"), "application/gml+xml");
  // The same document MTOM attaches.
  const std::string mtom_wire = encode(*mtom_, gml);
  const auto mtom_parts =
      split_multipart(mtom_wire, content_type_param(mtom_->content_type(), "boundary"));
  ASSERT_EQ(mtom_parts.size(), 2u);
  EXPECT_EQ(parts[1].body, mtom_parts[1].body);
  const Doc gml_doc = parse_dom(parts[1].body);
  ASSERT_NE(gml_doc, nullptr);
  EXPECT_EQ(
      testing::gml_collection_problems(xmlDocGetRootElement(gml_doc.get()), "urn:wsbench", gml),
      "");

  Payload decoded;
  swa_->decode(wire, decoded);
  EXPECT_TRUE(decoded == Payload(gml));
  expect_rejected(*swa_, replace_once(wire, "</gml:featureMember>", ""), "GML document");
}

TEST_F(SoapCodecTest, SwaNumbersEachAttachmentOfAList) {
  const MessageList two{{Message{{"r", "s", "t", 1}, {}, {0, 1, 2, 0xff}},
                         Message{{"r3", "s3", "t3", 3}, {}, {5, 6, 7}}}};
  const std::string wire = encode(*swa_, two);
  const auto parts = swa_parts(wire, swa_->content_type());
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_NE(parts[0].body.find("href=\"cid:attachment-1\""), std::string::npos);
  EXPECT_NE(parts[0].body.find("href=\"cid:attachment-2\""), std::string::npos);
  EXPECT_EQ(parts[1].headers.at("Content-ID"), "<attachment-1>");
  EXPECT_EQ(parts[1].body, std::string("\x00\x01\x02\xff", 4));
  EXPECT_EQ(parts[2].headers.at("Content-ID"), "<attachment-2>");
  EXPECT_EQ(parts[2].body, "\x05\x06\x07");
  Payload decoded;
  swa_->decode(wire, decoded);
  EXPECT_TRUE(decoded == Payload(two));
}

TEST_F(SoapCodecTest, SwaWithoutBinaryIsNotApplicableAndPlainSoap) {
  // Alternating with packages: a message without parts is never one.
  for (const char* label : {"text", "binary/1KiB", "objects/200", "message-b/1KiB", "ints/200"}) {
    SCOPED_TRACE(label);
    const Payload payload = generate(parse_spec(label));
    const std::string wire = encode(*swa_, payload);
    if (swa_->not_applicable(payload).empty()) {
      EXPECT_EQ(swa_->content_type().rfind("multipart/related;", 0), 0u);
    } else {
      EXPECT_EQ(swa_->not_applicable(payload), "no binary: SwA output identical to soap");
      EXPECT_EQ(wire, encode(*soap_, payload));
      EXPECT_EQ(swa_->content_type(), "text/xml; charset=utf-8");
    }
    Payload decoded;
    swa_->decode(wire, decoded);
    EXPECT_TRUE(decoded == payload);
  }
}

TEST_F(SoapCodecTest, SwaRejectsMissingOrWrongAttachments) {
  const Payload payload = generate(parse_spec("message-b/1KiB"));
  const std::string wire = encode(*swa_, payload);
  const std::string boundary = content_type_param(swa_->content_type(), "boundary");
  const auto second_part = wire.find("\r\n--" + boundary + "\r\n");
  ASSERT_NE(second_part, std::string::npos);
  // The referenced part is gone.
  expect_rejected(*swa_, wire.substr(0, second_part) + "\r\n--" + boundary + "--",
                  "missing attachment");
  // The reference names a part that does not exist.
  expect_rejected(*swa_, replace_once(wire, "href=\"cid:attachment-1", "href=\"cid:attachment-2"),
                  "missing attachment");
  // A reference in a plain envelope, with no package around it.
  const std::string plain = encode(*soap_, payload);
  const auto start = plain.find("<wsb:attachment>");
  const auto end = plain.find("</wsb:attachment>");
  ASSERT_NE(start, std::string::npos);
  expect_rejected(
      *swa_,
      plain.substr(0, start) + "<wsb:attachment href=\"cid:attachment-1\">" + plain.substr(end),
      "missing attachment");
  // The closing boundary or the part's bytes are cut off.
  for (const std::size_t cut : {std::size_t{1}, boundary.size() + 4, boundary.size() + 100})
    expect_rejected(*swa_, std::string_view(wire).substr(0, wire.size() - cut), "");
}

}  // namespace
}  // namespace wsb