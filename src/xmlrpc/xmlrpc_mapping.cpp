#include "xmlrpc/xmlrpc_mapping.h"

#include <xmlrpc-c/base.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <xmlrpc-c/girerr.hpp>

#include "common/codec.h"
#include "common/tree_decoder.h"

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

value int64_value(std::int64_t v, Int64Form form) {
  if (form == Int64Form::string) return xmlrpc_c::value_string(std::to_string(v));
  return xmlrpc_c::value_i8(v);
}

value message_struct(const Message& msg, Int64Form form) {
  xmlrpc_c::cstruct m;
  m.emplace("recipient", string_value(msg.meta.recipient));
  m.emplace("sender", string_value(msg.meta.sender));
  m.emplace("authToken", string_value(msg.meta.auth_token));
  m.emplace("timestamp", int64_value(msg.meta.timestamp, form));
  if (!msg.records.empty()) {
    xmlrpc_c::carray records;
    records.reserve(msg.records.size());
    for (const auto& r : msg.records) {
      xmlrpc_c::cstruct rec;
      rec.emplace("title", string_value(r.title));
      rec.emplace("author", string_value(r.author));
      rec.emplace("body", string_value(r.body));
      rec.emplace("sequence", int64_value(r.sequence, form));
      rec.emplace("created", int64_value(r.created, form));
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
  Int64Form form;

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

  value operator()(const Message& msg) const { return top("message", message_struct(msg, form)); }

  value operator()(const MessageList& p) const {
    xmlrpc_c::carray items;
    items.reserve(p.messages.size());
    for (const auto& m : p.messages) items.push_back(message_struct(m, form));
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

// An <i8>, an <i4> (what a standard client sends for a small value) or a
// decimal string (Int64Form::string): exactly an optional '-' and digits.
std::int64_t int64_of(const value& v, const char* what) {
  switch (v.type()) {
    case value::TYPE_I8:
      return xmlrpc_c::value_i8(v).cvalue();
    case value::TYPE_INT:
      return xmlrpc_c::value_int(v).cvalue();
    case value::TYPE_STRING: {
      const std::string digits = xmlrpc_c::value_string(v).cvalue();
      std::int64_t out = 0;
      const char* end = digits.data() + digits.size();
      const auto [ptr, ec] = std::from_chars(digits.data(), end, out);
      if (ec == std::errc::result_out_of_range)
        fail(std::string(what) + " '" + digits + "' does not fit 64 bits");
      if (ec != std::errc{} || ptr != end)
        fail(std::string(what) + " '" + digits.substr(0, 40) + "' is not a decimal integer");
      return out;
    }
    default:
      fail(std::string(what) + " is " + type_name(v) + ", not an i8, i4 or decimal string");
  }
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

// xmlrpc-c's value tree as a TreeDecoder policy.
struct ValueTree {
  static constexpr bool kGeoJson = false;  // buildings as an array of structs
  using Node = value;
  static xmlrpc_c::cstruct object(const value& v, const char* what) { return struct_of(v, what); }
  static xmlrpc_c::carray array(const value& v, const char* what) { return array_of(v, what); }
  static std::size_t size(const xmlrpc_c::carray& a) { return a.size(); }
  static const value& member(const xmlrpc_c::cstruct& s, const char* name) {
    return xmlrpc::member(s, name);
  }
  static const value* optional_member(const xmlrpc_c::cstruct& s, const char* name) {
    return xmlrpc::optional_member(s, name);
  }
  static std::string string_of(const value& v, const char* what) {
    return xmlrpc::string_of(v, what);
  }
  static std::int32_t int32_of(const value& v, const char* what) {
    return xmlrpc::int32_of(v, what);
  }
  static std::int64_t int64_of(const value& v, const char* what) {
    return xmlrpc::int64_of(v, what);
  }
  static double double_of(const value& v, const char* what) { return xmlrpc::double_of(v, what); }
  static bool bool_of(const value& v, const char* what) { return xmlrpc::bool_of(v, what); }
  static void bytes_of(const value& v, const char* what, Bytes& out) {
    xmlrpc::bytes_of(v, what, out);
  }
  // xmlrpc-c hands out structs as copies: the caller keeps this one alive.
  static xmlrpc_c::cstruct top(const value& root) {
    auto body = struct_of(root, "payload value");
    if (body.size() != 1) fail("payload value must be a struct with exactly one member");
    return body;
  }
  static std::pair<std::string_view, const value*> only_member(const xmlrpc_c::cstruct& top) {
    return {top.begin()->first, &top.begin()->second};
  }
  [[noreturn]] static void fail(const std::string& what) { xmlrpc::fail(what); }
};

}  // namespace

Int64Form int64_form_of_query(std::string_view query) {
  Int64Form form = Int64Form::i8;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view parameter = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (!parameter.starts_with("int64=")) continue;
    const std::string_view wanted = parameter.substr(6);
    if (wanted == "i8")
      form = Int64Form::i8;
    else if (wanted == "string")
      form = Int64Form::string;
    else
      fail("int64=" + std::string(wanted.substr(0, 40)) + ": the forms are i8 and string");
  }
  return form;
}

value payload_value(const Payload& payload, Int64Form form) {
  return bound([&] { return std::visit(Binder{form}, payload); });
}

value message_value(const Message& message, Int64Form form) {
  return bound([&] { return message_struct(message, form); });
}

std::string unsupported_reason(const Payload& payload) {
  if (std::visit(BeyondBmp{}, payload))
    return "xmlrpc-c 1.33 refuses characters above U+FFFD (4-byte UTF-8) in strings";
  return {};
}

Payload payload_of(const value& v) {
  try {
    return TreeDecoder<ValueTree>::payload(v);
  } catch (const girerr::error& e) {
    fail(e.what());
  }
}

Message message_of(const value& v) {
  try {
    return TreeDecoder<ValueTree>::message(v);
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
