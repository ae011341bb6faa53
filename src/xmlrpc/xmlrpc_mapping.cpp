#include "xmlrpc/xmlrpc_mapping.h"

#include <xmlrpc-c/base.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <xmlrpc-c/girerr.hpp>

#include "common/codec.h"

namespace wsb::xmlrpc {
namespace {

using xmlrpc_c::value;

// The model's bytes and xmlrpc-c's byte strings are the same vector type,
// so binaries go in and come out without a conversion copy on our side.
static_assert(std::is_same_v<Bytes, xmlrpc_c::cbytestring>);

[[noreturn]] void fail(std::string_view what) { throw DecodeError("xmlrpc: " + std::string(what)); }

// ---- encoding: model -> value tree ----

value string_value(const std::string& s) {
  // nlCode_lf: LF is the only line delimiter, so a CR is data and goes out
  // as &#x0d;. The default (nlCode_all) would rewrite CR and CRLF as LF.
  return xmlrpc_c::value_string(s, xmlrpc_c::value_string::nlCode_lf);
}

value double_value(double d) {
  if (!std::isfinite(d))
    throw std::invalid_argument("xmlrpc: XML-RPC has no representation for NaN or infinity");
  return xmlrpc_c::value_double(d);
}

value top(const char* name, const value& v) {
  xmlrpc_c::cstruct body;
  body.emplace(name, v);
  return xmlrpc_c::value_struct(body);
}

value message_struct(const Message& msg) {
  xmlrpc_c::cstruct m;
  m.emplace("recipient", string_value(msg.meta.recipient));
  m.emplace("sender", string_value(msg.meta.sender));
  m.emplace("authToken", string_value(msg.meta.auth_token));
  m.emplace("timestamp", xmlrpc_c::value_i8(msg.meta.timestamp));
  if (!msg.records.empty()) {
    xmlrpc_c::carray records;
    records.reserve(msg.records.size());
    for (const auto& r : msg.records) {
      xmlrpc_c::cstruct rec;
      rec.emplace("title", string_value(r.title));
      rec.emplace("author", string_value(r.author));
      rec.emplace("body", string_value(r.body));
      rec.emplace("sequence", xmlrpc_c::value_i8(r.sequence));
      rec.emplace("created", xmlrpc_c::value_i8(r.created));
      rec.emplace("priority", xmlrpc_c::value_int(r.priority));
      rec.emplace("category", xmlrpc_c::value_int(r.category));
      rec.emplace("flags", xmlrpc_c::value_int(r.flags));
      rec.emplace("ttl", xmlrpc_c::value_int(r.ttl));
      records.push_back(xmlrpc_c::value_struct(rec));
    }
    m.emplace("records", xmlrpc_c::value_array(records));
  }
  if (!msg.attachment.empty()) m.emplace("attachment", xmlrpc_c::value_bytestring(msg.attachment));
  return xmlrpc_c::value_struct(m);
}

struct Binder {
  value operator()(const Text& p) const { return top("text", string_value(p.value)); }

  value operator()(const IntArray& p) const {
    xmlrpc_c::carray items;
    items.reserve(p.values.size());
    for (const auto v : p.values) items.push_back(xmlrpc_c::value_int(v));
    return top("ints", xmlrpc_c::value_array(items));
  }

  value operator()(const StringArray& p) const {
    xmlrpc_c::carray items;
    items.reserve(p.values.size());
    for (const auto& v : p.values) items.push_back(string_value(v));
    return top("strings", xmlrpc_c::value_array(items));
  }

  value operator()(const ObjectArray& p) const {
    xmlrpc_c::carray items;
    items.reserve(p.values.size());
    for (const auto& o : p.values) {
      xmlrpc_c::cstruct m;
      m.emplace("id", xmlrpc_c::value_int(o.id));
      m.emplace("name", string_value(o.name));
      m.emplace("value", double_value(o.value));
      m.emplace("active", xmlrpc_c::value_boolean(o.active));
      items.push_back(xmlrpc_c::value_struct(m));
    }
    return top("objects", xmlrpc_c::value_array(items));
  }

  value operator()(const Message& msg) const { return top("message", message_struct(msg)); }

  value operator()(const MessageList& p) const {
    xmlrpc_c::carray items;
    items.reserve(p.messages.size());
    for (const auto& m : p.messages) items.push_back(message_struct(m));
    return top("messages", xmlrpc_c::value_array(items));
  }

  value operator()(const Binary& p) const {
    return top("binary", xmlrpc_c::value_bytestring(p.data));
  }

  value operator()(const BuildingCollection& p) const {
    xmlrpc_c::carray items;
    items.reserve(p.buildings.size());
    for (const auto& b : p.buildings) {
      xmlrpc_c::carray footprint;
      footprint.reserve(b.footprint.size());
      for (const auto& pt : b.footprint) {
        footprint.push_back(xmlrpc_c::value_array({double_value(pt.x), double_value(pt.y)}));
      }
      xmlrpc_c::cstruct m;
      m.emplace("id", string_value(b.id));
      m.emplace("name", string_value(b.name));
      m.emplace("height", double_value(b.height));
      m.emplace("floors", xmlrpc_c::value_int(b.floors));
      m.emplace("footprint", xmlrpc_c::value_array(footprint));
      items.push_back(xmlrpc_c::value_struct(m));
    }
    return top("buildings", xmlrpc_c::value_array(items));
  }
};

// Building a value throws girerr::error for strings xmlrpc-c refuses.
template <typename F>
value bound(F&& build) {
  try {
    return build();
  } catch (const girerr::error& e) {
    throw std::invalid_argument(std::string("xmlrpc: cannot encode: ") + e.what());
  }
}

// Strings xmlrpc-c refuses: its UTF-8 validator stops at U+FFFD, so any
// 4-byte sequence (lead byte 0xF0..0xF4) is out. (U+FFFE and U+FFFF are
// refused too, but they are not XML characters for any codec.)
bool beyond_bmp(const std::string& s) {
  for (const char c : s)
    if (static_cast<unsigned char>(c) >= 0xF0) return true;
  return false;
}

struct BeyondBmp {
  bool operator()(const Text& p) const { return beyond_bmp(p.value); }
  bool operator()(const IntArray&) const { return false; }
  bool operator()(const StringArray& p) const {
    for (const auto& s : p.values)
      if (beyond_bmp(s)) return true;
    return false;
  }
  bool operator()(const ObjectArray& p) const {
    for (const auto& o : p.values)
      if (beyond_bmp(o.name)) return true;
    return false;
  }
  bool operator()(const Message& m) const {
    if (beyond_bmp(m.meta.recipient) || beyond_bmp(m.meta.sender) || beyond_bmp(m.meta.auth_token))
      return true;
    for (const auto& r : m.records)
      if (beyond_bmp(r.title) || beyond_bmp(r.author) || beyond_bmp(r.body)) return true;
    return false;
  }
  bool operator()(const MessageList& p) const {
    for (const auto& m : p.messages)
      if ((*this)(m)) return true;
    return false;
  }
  bool operator()(const Binary&) const { return false; }
  bool operator()(const BuildingCollection& p) const {
    for (const auto& b : p.buildings)
      if (beyond_bmp(b.id) || beyond_bmp(b.name)) return true;
    return false;
  }
};

// ---- decoding: value tree -> model, every member and type checked ----

std::string type_name(const value& v) {
  return xmlrpc_type_name(static_cast<xmlrpc_type>(v.type()));
}

void expect(const value& v, value::type_t type, const char* what, const char* wanted) {
  if (v.type() != type) fail(std::string(what) + " is " + type_name(v) + ", not " + wanted);
}

const value& member(const xmlrpc_c::cstruct& s, const char* name) {
  const auto it = s.find(name);
  if (it == s.end()) fail(std::string("missing member '") + name + "'");
  return it->second;
}

const value* optional_member(const xmlrpc_c::cstruct& s, const char* name) {
  const auto it = s.find(name);
  return it == s.end() ? nullptr : &it->second;
}

xmlrpc_c::cstruct struct_of(const value& v, const char* what) {
  expect(v, value::TYPE_STRUCT, what, "a struct");
  return xmlrpc_c::value_struct(v).cvalue();
}

xmlrpc_c::carray array_of(const value& v, const char* what) {
  expect(v, value::TYPE_ARRAY, what, "an array");
  return xmlrpc_c::value_array(v).cvalue();
}

std::int32_t int32_of(const value& v, const char* what) {
  expect(v, value::TYPE_INT, what, "an i4");
  return xmlrpc_c::value_int(v).cvalue();
}

std::int16_t int16_of(const value& v, const char* what) {
  const std::int32_t i = int32_of(v, what);
  if (i < std::numeric_limits<std::int16_t>::min() || i > std::numeric_limits<std::int16_t>::max())
    fail(std::string(what) + " is out of 16-bit range");
  return static_cast<std::int16_t>(i);
}

std::int64_t int64_of(const value& v, const char* what) {
  expect(v, value::TYPE_I8, what, "an i8");
  return xmlrpc_c::value_i8(v).cvalue();
}

double double_of(const value& v, const char* what) {
  expect(v, value::TYPE_DOUBLE, what, "a double");
  // The parser falls back to strtod, which reads "nan" and "inf".
  const double d = xmlrpc_c::value_double(v).cvalue();
  if (!std::isfinite(d)) fail(std::string(what) + " is not a finite number");
  return d;
}

void bytes_of(const value& v, const char* what, Bytes& out) {
  expect(v, value::TYPE_BYTESTRING, what, "base64");
  out = xmlrpc_c::value_bytestring(v).vectorUcharValue();
}

Record record_of(const value& v) {
  const auto s = struct_of(v, "record");
  Record r;
  r.title = string_of(member(s, "title"), "title");
  r.author = string_of(member(s, "author"), "author");
  r.body = string_of(member(s, "body"), "body");
  r.sequence = int64_of(member(s, "sequence"), "sequence");
  r.created = int64_of(member(s, "created"), "created");
  r.priority = int32_of(member(s, "priority"), "priority");
  r.category = int32_of(member(s, "category"), "category");
  r.flags = int32_of(member(s, "flags"), "flags");
  r.ttl = int16_of(member(s, "ttl"), "ttl");
  return r;
}

Message unchecked_message_of(const value& v) {
  const auto s = struct_of(v, "message");
  Message m;
  m.meta.recipient = string_of(member(s, "recipient"), "recipient");
  m.meta.sender = string_of(member(s, "sender"), "sender");
  m.meta.auth_token = string_of(member(s, "authToken"), "authToken");
  m.meta.timestamp = int64_of(member(s, "timestamp"), "timestamp");
  if (const value* records = optional_member(s, "records")) {
    const auto items = array_of(*records, "records");
    m.records.reserve(items.size());
    for (const auto& r : items) m.records.push_back(record_of(r));
  }
  if (const value* attachment = optional_member(s, "attachment"))
    bytes_of(*attachment, "attachment", m.attachment);
  return m;
}

Building building_of(const value& v) {
  const auto s = struct_of(v, "building");
  Building b;
  b.id = string_of(member(s, "id"), "id");
  b.name = string_of(member(s, "name"), "name");
  b.height = double_of(member(s, "height"), "height");
  b.floors = int32_of(member(s, "floors"), "floors");
  const auto points = array_of(member(s, "footprint"), "footprint");
  b.footprint.reserve(points.size());
  for (const auto& p : points) {
    const auto xy = array_of(p, "point");
    if (xy.size() != 2) fail("point does not have two coordinates");
    b.footprint.push_back({double_of(xy[0], "x"), double_of(xy[1], "y")});
  }
  return b;
}

Payload unchecked_payload_of(const value& root) {
  const auto body = struct_of(root, "payload value");
  if (body.size() != 1) fail("payload value must be a struct with exactly one member");
  const auto& [kind, v] = *body.begin();
  if (kind == "text") return Text{string_of(v, "text")};
  if (kind == "ints") {
    IntArray p;
    const auto items = array_of(v, "ints");
    p.values.reserve(items.size());
    for (const auto& i : items) p.values.push_back(int32_of(i, "int"));
    return p;
  }
  if (kind == "strings") {
    StringArray p;
    const auto items = array_of(v, "strings");
    p.values.reserve(items.size());
    for (const auto& s : items) p.values.push_back(string_of(s, "string"));
    return p;
  }
  if (kind == "objects") {
    ObjectArray p;
    const auto items = array_of(v, "objects");
    p.values.reserve(items.size());
    for (const auto& item : items) {
      const auto o = struct_of(item, "object");
      p.values.push_back(
          Object{int32_of(member(o, "id"), "id"), string_of(member(o, "name"), "name"),
                 double_of(member(o, "value"), "value"), bool_of(member(o, "active"), "active")});
    }
    return p;
  }
  if (kind == "message") return unchecked_message_of(v);
  if (kind == "messages") {
    MessageList p;
    const auto items = array_of(v, "messages");
    p.messages.reserve(items.size());
    for (const auto& m : items) p.messages.push_back(unchecked_message_of(m));
    return p;
  }
  if (kind == "binary") {
    Binary p;
    bytes_of(v, "binary", p.data);
    return p;
  }
  if (kind == "buildings") {
    BuildingCollection p;
    const auto items = array_of(v, "buildings");
    p.buildings.reserve(items.size());
    for (const auto& b : items) p.buildings.push_back(building_of(b));
    return p;
  }
  fail("unknown payload member '" + kind + "'");
}

}  // namespace

value payload_value(const Payload& payload) {
  return bound([&] { return std::visit(Binder{}, payload); });
}

value message_value(const Message& message) {
  return bound([&] { return message_struct(message); });
}

std::string unsupported_reason(const Payload& payload) {
  if (std::visit(BeyondBmp{}, payload))
    return "xmlrpc-c 1.33 refuses characters above U+FFFD (4-byte UTF-8) in strings";
  return {};
}

Payload payload_of(const value& v) {
  try {
    return unchecked_payload_of(v);
  } catch (const girerr::error& e) {
    fail(e.what());
  }
}

Message message_of(const value& v) {
  try {
    return unchecked_message_of(v);
  } catch (const girerr::error& e) {
    fail(e.what());
  }
}

std::string string_of(const value& v, const char* what) {
  expect(v, value::TYPE_STRING, what, "a string");
  return xmlrpc_c::value_string(v).cvalue();
}

bool bool_of(const value& v, const char* what) {
  expect(v, value::TYPE_BOOLEAN, what, "a boolean");
  return xmlrpc_c::value_boolean(v).cvalue();
}

std::int64_t integer_of(const value& v, const char* what) {
  if (v.type() == value::TYPE_I8) return xmlrpc_c::value_i8(v).cvalue();
  expect(v, value::TYPE_INT, what, "an i4 or i8");
  return xmlrpc_c::value_int(v).cvalue();
}

}  // namespace wsb::xmlrpc
