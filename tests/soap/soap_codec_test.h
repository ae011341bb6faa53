// What the soap codec tests share (soap_test.cpp, soap_attachments_test.cpp):
// the three codecs, an independent libxml2 parse of their envelopes, and a
// minimal multipart/related reader for the MTOM and SwA packages. The
// helpers are static members of the fixture, one class for both files (a
// GoogleTest suite has one fixture class).
#pragma once

#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/codec.h"
#include "test_helpers.h"

namespace wsb::testing {

class SoapCodecTest : public ::testing::Test {
 protected:
  static constexpr std::string_view kSoapEnvNs = "http://schemas.xmlsoap.org/soap/envelope/";
  static constexpr std::string_view kWsbNs = "urn:wsbench";
  static constexpr std::string_view kXopNs = "http://www.w3.org/2004/08/xop/include";

  // libxml2's DOM parser, independent of gSOAP; nullptr if not well-formed.
  static Doc parse_dom(std::string_view xml) {
    return Doc(
        xmlReadMemory(xml.data(), static_cast<int>(xml.size()), nullptr, nullptr,
                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_HUGE));
  }

  static std::string_view ns_of(const xmlNode* n) {
    return n->ns == nullptr ? "" : str(n->ns->href);
  }

  // The only element child of `n`, asserting its name and namespace.
  static const xmlNode* only_child(const xmlNode* n, std::string_view name, std::string_view ns) {
    const auto children = element_children(n);
    EXPECT_EQ(children.size(), 1u) << "children of " << str(n->name);
    if (children.size() != 1) return nullptr;
    EXPECT_EQ(str(children[0]->name), name);
    EXPECT_EQ(ns_of(children[0]), ns);
    return children[0];
  }

  // Envelope/Body/getResponse checked; returns the payload element.
  static const xmlNode* payload_element(const xmlDoc* doc) {
    const xmlNode* root = xmlDocGetRootElement(doc);
    EXPECT_NE(root, nullptr);
    if (root == nullptr) return nullptr;
    EXPECT_EQ(str(root->name), "Envelope");
    EXPECT_EQ(ns_of(root), kSoapEnvNs);
    const xmlNode* body = only_child(root, "Body", kSoapEnvNs);
    if (body == nullptr) return nullptr;
    const xmlNode* response = only_child(body, "getResponse", kWsbNs);
    if (response == nullptr) return nullptr;
    const auto payload = element_children(response);
    EXPECT_EQ(payload.size(), 1u);
    return payload.size() == 1 ? payload[0] : nullptr;
  }

  static const xmlNode* child_named(const xmlNode* n, std::string_view name) {
    for (const xmlNode* c : element_children(n))
      if (str(c->name) == name) return c;
    return nullptr;
  }

  static std::string replace_once(std::string s, std::string_view from, std::string_view to) {
    const auto pos = s.find(from);
    EXPECT_NE(pos, std::string::npos) << "test input lacks '" << from << "'";
    if (pos != std::string::npos) s.replace(pos, from.size(), to);
    return s;
  }

  // ---- a minimal multipart/related reader for checking MTOM and SwA output ----

  // A parameter of a Content-Type value, quotes removed.
  static std::string content_type_param(const std::string& content_type, const std::string& name) {
    const auto at = content_type.find("; " + name + "=");
    if (at == std::string::npos) return {};
    auto begin = at + name.size() + 3;
    if (content_type[begin] == '"') {
      ++begin;
      return content_type.substr(begin, content_type.find('"', begin) - begin);
    }
    return content_type.substr(begin, content_type.find(';', begin) - begin);
  }

  struct Part {
    std::map<std::string, std::string> headers;
    std::string body;
  };

  // Splits a multipart body at "--boundary" delimiter lines (RFC 2046).
  static std::vector<Part> split_multipart(const std::string& wire, const std::string& boundary) {
    std::vector<Part> parts;
    const std::string delimiter = "--" + boundary;
    EXPECT_EQ(wire.rfind(delimiter, 0), 0u) << "package must start with the boundary";
    std::size_t pos = delimiter.size();
    while (wire.compare(pos, 2, "--") != 0) {
      EXPECT_EQ(wire.compare(pos, 2, "\r\n"), 0);
      pos += 2;
      const auto headers_end = wire.find("\r\n\r\n", pos);
      const auto next = wire.find("\r\n" + delimiter, headers_end);
      if (headers_end == std::string::npos || next == std::string::npos) {
        ADD_FAILURE() << "malformed part";
        return parts;
      }
      Part part;
      for (std::size_t line = pos; line < headers_end;) {
        const auto eol = std::min(wire.find("\r\n", line), headers_end);
        const auto colon = wire.find(':', line);
        part.headers[wire.substr(line, colon - line)] = wire.substr(colon + 2, eol - colon - 2);
        line = eol + 2;
      }
      part.body = wire.substr(headers_end + 4, next - headers_end - 4);
      parts.push_back(std::move(part));
      pos = next + 2 + delimiter.size();
    }
    return parts;
  }

  // The parts of an SwA package, checked as SwA has them: a text/xml root
  // named by the Content-Type's start, then one part per attachment.
  static std::vector<Part> swa_parts(const std::string& wire, const std::string& content_type) {
    EXPECT_EQ(content_type.rfind("multipart/related;", 0), 0u) << content_type;
    EXPECT_EQ(content_type_param(content_type, "type"), "text/xml");
    auto parts = split_multipart(wire, content_type_param(content_type, "boundary"));
    EXPECT_FALSE(parts.empty());
    if (!parts.empty()) {
      EXPECT_EQ(parts[0].headers["Content-ID"], content_type_param(content_type, "start"));
      EXPECT_EQ(parts[0].headers["Content-Type"].rfind("text/xml", 0), 0u);
    }
    return parts;
  }

  std::unique_ptr<Codec> soap_ = find_codec("soap").make();
  std::unique_ptr<Codec> mtom_ = find_codec("soap-mtom").make();
  std::unique_ptr<Codec> swa_ = find_codec("soap-swa").make();

  static std::string encode(Codec& codec, const Payload& p) {
    std::string wire;
    codec.encode(p, wire);
    return wire;
  }

  // Decoding must fail with a DecodeError whose message names the codec
  // and contains `expected` (gSOAP's own description, where it has one).
  static void expect_rejected(Codec& codec, std::string_view wire, std::string_view expected) {
    Payload out;
    try {
      codec.decode(wire, out);
      ADD_FAILURE() << "accepted: " << wire.substr(0, 600);
    } catch (const DecodeError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("soap", 0), 0u) << what;
      EXPECT_NE(what.find(expected), std::string::npos) << what;
    }
  }
};

}  // namespace wsb::testing
