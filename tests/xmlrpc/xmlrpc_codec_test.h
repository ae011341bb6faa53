// What the xmlrpc codec tests share (xmlrpc_test.cpp, xmlrpc_library_test.cpp):
// the codec under test and hand-written XML-RPC responses for inputs
// xmlrpc-c would never generate. The helpers are static members of the
// fixture, one class for both files (a GoogleTest suite has one fixture class).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "common/codec.h"
#include "common/payload.h"
#include "conformance_cases.h"

namespace wsb::testing {

class XmlrpcCodec : public ::testing::Test {
 protected:
  // A hand-written response around `value_content` (the inside of <value>),
  // for inputs xmlrpc-c would never generate.
  static std::string response(const std::string& value_content) {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<methodResponse><params><param><value>" +
           value_content + "</value></param></params></methodResponse>";
  }

  static std::string body(const std::string& kind, const std::string& value_xml) {
    return response("<struct><member><name>" + kind + "</name><value>" + value_xml +
                    "</value></member></struct>");
  }

  static std::string message_xml(const std::string& records,
                                 const std::string& timestamp = "<i8>7</i8>") {
    return body("message",
                "<struct>"
                "<member><name>recipient</name><value><string>r</string></value></member>"
                "<member><name>sender</name><value><string>s</string></value></member>"
                "<member><name>authToken</name><value><string>k</string></value></member>"
                "<member><name>timestamp</name><value>" +
                    timestamp + "</value></member>" + records + "</struct>");
  }

  static Message sample_message() {
    Message m;
    m.meta = {"recip <&>", "sender \xC3\xA9", "token \xE4\xB8\xAD",
              std::numeric_limits<std::int64_t>::min()};
    for (int i = 0; i < 3; ++i) {
      Record r;
      r.title = "title \"" + std::to_string(i) + "'";
      r.author = "author";
      r.body = "body ]]> &amp;";
      r.sequence = std::numeric_limits<std::int64_t>::max() - i;
      r.created = std::numeric_limits<std::int64_t>::min() + i;
      r.priority = i;
      r.category = -i;
      r.flags = 7;
      r.ttl = static_cast<std::int16_t>(-32768 + i);
      m.records.push_back(r);
    }
    m.attachment = all_byte_values();
    return m;
  }

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

}  // namespace wsb::testing
