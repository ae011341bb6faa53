// What the two XML codecs share; internal to src/rest. The codecs and the
// body shapes are described at the top of xml_codec.cpp. One file each:
//   xml_encoder.cpp    the encoder both write with (xmlTextWriter)
//   xml_codec.cpp      `xml`: the streaming decoder (xmlTextReader)
//   xml_dom_codec.cpp  `xml-dom`: the document tree, walked by the same
//                      decoder
// Here: the parser options, the decoder of every payload shape (a template
// over either cursor, instantiated beside each cursor) and the encoding
// base class.
#pragma once

#include <libxml/parser.h>

#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/base64.h"
#include "common/codec.h"
#include "common/gml.h"
#include "rest/rest_codecs.h"

namespace wsb::rest::xml {

inline constexpr const char* kNamespace = "urn:wsbench:rest";

// Parser options. No XML_PARSE_NOENT and no DTD loading (libxml2's defaults):
// external entities are never loaded and entities are never substituted
// into text; the decoder also refuses any DTD or entity reference it meets.
// NONET forbids network access outright. HUGE lifts libxml2's
// 10,000,000-byte cap on one text node, which a 64 MiB binary (about 92 MB of
// base64) exceeds; the other limits it relaxes (element depth, entity
// amplification) do not apply to documents the decoder accepts.
inline constexpr int kReaderOptions = XML_PARSE_NONET | XML_PARSE_HUGE;

inline const xmlChar* x(const char* s) { return reinterpret_cast<const xmlChar*>(s); }

// ---- decoding: the checks and shapes both cursors share ----

[[noreturn]] inline void fail(std::string_view what) {
  throw DecodeError("xml: " + std::string(what));
}

inline std::string_view view(const xmlChar* s) {
  return s == nullptr ? std::string_view() : std::string_view(reinterpret_cast<const char*>(s));
}

// An attribute an element must carry: `ns` is its namespace URI (nullptr:
// none), its value goes to `value`.
struct Attribute {
  const char* ns;
  const char* name;
  std::string* value;
};
using Attributes = std::initializer_list<Attribute>;

template <class T>
T number_of(std::string_view s, const char* what) {
  T value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
    const char* type = std::is_floating_point_v<T> ? "a number"
                       : sizeof(T) == 2            ? "a 16-bit integer"
                       : sizeof(T) == 4            ? "a 32-bit integer"
                                                   : "a 64-bit integer";
    fail(std::string("<") + what + "> '" + std::string(s.substr(0, 40)) + "' is not " + type);
  }
  return value;
}

// The shape of each payload, over either cursor: Reader (streaming) or
// DomCursor (a parsed tree), which offer the same calls.
template <class Cursor>
class Decoder {
 public:
  Decoder(Cursor& r, std::string& scratch) : r_(r), scratch_(scratch) {}

  void payload(Payload& out) {
    const std::string_view kind = r_.local_name();
    if (kind == "text") {
      Text p;
      r_.text("text", p.value);
      out = std::move(p);
    } else if (kind == "ints") {
      IntArray p;
      if (r_.open("ints")) {
        while (r_.at_element()) p.values.push_back(number<std::int32_t>("i"));
        r_.close();
      }
      out = std::move(p);
    } else if (kind == "strings") {
      StringArray p;
      if (r_.open("strings")) {
        while (r_.at_element()) r_.text("s", p.values.emplace_back());
        r_.close();
      }
      out = std::move(p);
    } else if (kind == "objects") {
      ObjectArray p;
      if (r_.open("objects")) {
        while (r_.at_element()) p.values.push_back(object());
        r_.close();
      }
      out = std::move(p);
    } else if (kind == "message") {
      out = message();
    } else if (kind == "messages") {
      MessageList p;
      if (r_.open("messages")) {
        while (r_.at_element()) p.messages.push_back(message());
        r_.close();
      }
      out = std::move(p);
    } else if (kind == "binary") {
      Binary p;
      bytes("binary", p.data);
      out = std::move(p);
    } else if (kind == "buildings") {
      BuildingCollection p;
      if (r_.open("buildings")) {
        while (r_.at_element()) building(p.buildings.emplace_back());
        r_.close();
      }
      out = std::move(p);
    } else {
      fail("unknown root element <" + std::string(kind) + ">");
    }
    r_.finish();
  }

 private:
  template <class T>
  T number(const char* name) {
    r_.text(name, scratch_);
    return number_of<T>(scratch_, name);
  }

  bool boolean(const char* name) {
    r_.text(name, scratch_);
    if (scratch_ == "true") return true;
    if (scratch_ == "false") return false;
    fail(std::string("<") + name + "> '" + scratch_.substr(0, 40) + "' is not true or false");
  }

  void bytes(const char* name, Bytes& out) {
    r_.text(name, scratch_);
    try {
      base64_decode(scratch_, out);
    } catch (const DecodeError& e) {
      fail(std::string("<") + name + ">: " + e.what());
    }
  }

  Object object() {
    Object o;
    r_.open("object");
    o.id = number<std::int32_t>("id");
    r_.text("name", o.name);
    o.value = number<double>("value");
    o.active = boolean("active");
    r_.close();
    return o;
  }

  Record record() {
    Record r;
    r_.open("record");
    r_.text("title", r.title);
    r_.text("author", r.author);
    r_.text("body", r.body);
    r.sequence = number<std::int64_t>("sequence");
    r.created = number<std::int64_t>("created");
    r.priority = number<std::int32_t>("priority");
    r.category = number<std::int32_t>("category");
    r.flags = number<std::int32_t>("flags");
    r.ttl = number<std::int16_t>("ttl");
    r_.close();
    return r;
  }

  Message message() {
    Message m;
    r_.open("message");
    r_.text("recipient", m.meta.recipient);
    r_.text("sender", m.meta.sender);
    r_.text("authToken", m.meta.auth_token);
    m.meta.timestamp = number<std::int64_t>("timestamp");
    if (r_.at("records") && r_.open("records")) {
      while (r_.at_element()) m.records.push_back(record());
      r_.close();
    }
    if (r_.at("attachment")) bytes("attachment", m.attachment);
    r_.close();
    return m;
  }

  // One gml:featureMember (layout at the top of xml_codec.cpp).
  void building(Building& b) {
    r_.open("featureMember", gml::kNamespace);
    r_.open("Building", kNamespace, {{gml::kNamespace, "id", &b.id}});
    r_.text("name", b.name, gml::kNamespace);
    b.height = number<double>("height");
    b.floors = number<std::int32_t>("floors");
    r_.open("footprint");
    r_.open("Polygon", gml::kNamespace, {{nullptr, "srsName", &attribute_}});
    if (attribute_ != gml::kSrsName)
      fail("gml:Polygon srsName '" + attribute_.substr(0, 60) + "' is not " + gml::kSrsName);
    r_.open("exterior", gml::kNamespace);
    r_.open("LinearRing", gml::kNamespace);
    r_.text("posList", scratch_, gml::kNamespace, {{nullptr, "srsDimension", &attribute_}});
    if (attribute_ != gml::kSrsDimension) fail("gml:posList srsDimension must be 2");
    if (const std::string why = gml::parse_pos_list(scratch_, b.footprint); !why.empty())
      fail("gml:" + why);
    for (int i = 0; i < 6; ++i) r_.close();  // LinearRing ... featureMember
    if (const std::string why = gml::problem(b); !why.empty()) fail(why);
  }

  Cursor& r_;
  std::string& scratch_;
  std::string attribute_;
};

// ---- encoding ----

class Writer;  // xml_encoder.cpp

// What both XML codecs write: the streaming encoder (xml_encoder.cpp).
class XmlWritingCodec : public Codec {
 public:
  explicit XmlWritingCodec(XmlBase64 base64 = XmlBase64::wrapped);
  ~XmlWritingCodec() override;

  void encode(const Payload& in, std::string& out) final;
  void encode_message(const Message& in, std::string& out) final;

  std::string content_type() const final { return "application/xml"; }
  // One-line base64 changes nothing of a payload without a binary.
  std::string not_applicable(const Payload& payload) const final;

 private:
  template <class Model>
  void encode_model(const Model& in, std::string& out);

  XmlBase64 base64_;
  std::unique_ptr<Writer> writer_;
  std::string encode_scratch_;  // footprint text, reused across encodes
};

}  // namespace wsb::rest::xml
