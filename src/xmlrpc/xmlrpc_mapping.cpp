#include "xmlrpc/xmlrpc_mapping.h"

#include <xmlrpc-c/base.h>

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <xmlrpc-c/girerr.hpp>
#include <xmlrpc-c/xml.hpp>

#include "common/codec.h"
#include "xmlrpc/xmlrpc_codec.h"

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

// ---- the guard: a lexical pass in front of xmlrpc-c's parser ----
//
// Defects of xmlrpc-c 1.33.14's parser that input reaches before any check
// of ours could (each found by testing, see tests/xmlrpc_test.cpp; the same
// parser reads calls in the server, where the first one is a remote crash,
// see tests/xmlrpc_stack_test.cpp):
// - <i8> text that is not a 64-bit integer crashes the parser (the fault
//   message is formatted with two %s and one argument);
// - <base64> text is decoded leniently: characters outside the alphabet are
//   skipped, after masking off their high bit, so garbage decodes silently;
// - a DOCTYPE's entities are expanded without bound (billion laughs hangs);
// - deep element nesting overflows the stack (at about 150,000 levels)
//   before the value nesting limit (XMLRPC_NESTING_LIMIT_ID, 64) applies;
// - struct members are looked up by linear search as they are added
//   (xmlrpc_struct.c), so a struct parses in quadratic time in its size
//   (40,000 members take 0.4 s).
// One pass over the markup rejects these before xmlrpc-c parses. It is not a
// parser: it classifies each '<' and reads the text of <i8> and <base64>
// elements; what it cannot vouch for (a declaration, attributes or markup
// inside <i8>/<base64>) is rejected, and everything else is left to
// xmlrpc-c, which parses the whole document as XML before it interprets a
// single value, so input malformed in a way this pass skips over still fails
// cleanly there.

// A <value> level costs three elements (<value><array><data> or
// <value><struct><member>); 256 admits xmlrpc-c's 64-value nesting limit
// with room to spare, far below the depth that overflows the stack.
constexpr std::size_t kMaxElementDepth = 256;
// Our widest struct has 9 members; 256 keeps a hostile struct's quadratic
// insertion cost within a small constant factor of linear. (system.multicall
// entries are structs of two members.)
constexpr std::size_t kMaxStructMembers = 256;

enum class B64 : std::uint8_t { bad, digit, pad, space };

constexpr std::array<B64, 256> make_base64_classes() {
  std::array<B64, 256> t{};
  for (char c = 'A'; c <= 'Z'; ++c) t[static_cast<unsigned char>(c)] = B64::digit;
  for (char c = 'a'; c <= 'z'; ++c) t[static_cast<unsigned char>(c)] = B64::digit;
  for (char c = '0'; c <= '9'; ++c) t[static_cast<unsigned char>(c)] = B64::digit;
  t['+'] = B64::digit;
  t['/'] = B64::digit;
  t['='] = B64::pad;
  // XML whitespace: xmlrpc-c breaks its base64 into CRLF-terminated lines.
  t[' '] = B64::space;
  t['\t'] = B64::space;
  t['\r'] = B64::space;
  t['\n'] = B64::space;
  return t;
}

constexpr std::array<B64, 256> kBase64Classes = make_base64_classes();

// Padded RFC 4648 base64 with whitespace anywhere, the same rule as
// wsb::base64_decode.
void check_base64(std::string_view text) {
  std::size_t digits = 0;
  std::size_t pads = 0;
  for (const char c : text) {
    switch (kBase64Classes[static_cast<unsigned char>(c)]) {
      case B64::digit:
        if (pads != 0) fail("invalid base64: data after padding");
        ++digits;
        break;
      case B64::pad:
        ++pads;
        break;
      case B64::space:
        break;
      case B64::bad:
        fail("invalid base64: character outside the alphabet");
    }
  }
  if (pads > 2 || (digits + pads) % 4 != 0) fail("invalid base64: bad length or padding");
}

// What xmlrpc-c's own <i8> parser accepts: an optional sign and decimal
// digits within 64 bits ('+' is allowed; from_chars only takes '-').
void check_i8(std::string_view text) {
  std::string_view digits = text;
  const bool plus = digits.starts_with('+');
  if (plus) digits.remove_prefix(1);
  if (digits.empty() || (plus && (digits[0] < '0' || digits[0] > '9')))
    fail("<i8> does not hold a 64-bit integer");
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc{} || end != digits.data() + digits.size())
    fail("<i8> does not hold a 64-bit integer");
}

// Past the terminator, or the end of an unterminated construct (which
// xmlrpc-c then reports as malformed XML).
std::size_t skip_past(std::string_view doc, std::size_t from, std::string_view end) {
  const std::size_t at = doc.find(end, from);
  return at == std::string_view::npos ? doc.size() : at + end.size();
}

bool ends_name(char c) {
  return c == '>' || c == '/' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// The '>' closing a start tag; quoted attribute values may contain '>'.
std::size_t tag_end(std::string_view doc, std::size_t i) {
  while (i < doc.size() && doc[i] != '>') {
    if (doc[i] == '"' || doc[i] == '\'') {
      i = doc.find(doc[i], i + 1);
      if (i == std::string_view::npos) return i;
    }
    ++i;
  }
  return i < doc.size() ? i : std::string_view::npos;
}

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

void raise_xml_size_limit() {
  // A process-wide setting (xmlrpc-c keeps its limits in globals, not per
  // parser); set once, before anything of ours parses.
  static std::once_flag raised;
  std::call_once(raised, [] { xmlrpc_limit_set(XMLRPC_XML_SIZE_LIMIT_ID, kXmlSizeLimit); });
}

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

void InputGuard::check(std::string_view doc) {
  // Every '<' in a UTF-16 document sits next to a NUL byte; refusing NULs
  // keeps the pass byte-oriented (UTF-8 and its ASCII-compatible peers).
  if (doc.find('\0') != std::string_view::npos) fail("NUL byte in the document");
  open_.clear();
  std::size_t pos = 0;
  while ((pos = doc.find('<', pos)) != std::string_view::npos) {
    const std::string_view rest = doc.substr(pos + 1);
    if (rest.starts_with("!--")) {
      pos = skip_past(doc, pos + 4, "-->");
    } else if (rest.starts_with("![CDATA[")) {
      pos = skip_past(doc, pos + 9, "]]>");
    } else if (rest.starts_with('?')) {
      pos = skip_past(doc, pos + 2, "?>");
    } else if (rest.starts_with('!')) {
      fail("DOCTYPE or other declaration in the document");
    } else if (rest.starts_with('/')) {
      if (!open_.empty()) open_.pop_back();
      pos += 2;
    } else {
      pos = start_tag(doc, pos);
    }
  }
}

// Handles the start tag at doc[lt] == '<'; returns where to continue.
std::size_t InputGuard::start_tag(std::string_view doc, std::size_t lt) {
  std::size_t name_end = lt + 1;
  while (name_end < doc.size() && !ends_name(doc[name_end])) ++name_end;
  const std::string_view name = doc.substr(lt + 1, name_end - lt - 1);
  const std::size_t gt = tag_end(doc, name_end);
  if (gt == std::string_view::npos) return doc.size();
  const bool empty_element = doc[gt - 1] == '/';

  if (name == "member" && !open_.empty() && ++open_.back() > kMaxStructMembers)
    fail("struct with more than " + std::to_string(kMaxStructMembers) + " members");
  if (!empty_element) {
    if (open_.size() == kMaxElementDepth)
      fail("elements nested deeper than " + std::to_string(kMaxElementDepth));
    open_.push_back(0);
  }

  const bool is_i8 = name == "i8" || name == "ex:i8";
  if ((!is_i8 && name != "base64") || empty_element) return gt + 1;
  if (gt != name_end) fail("attributes on <" + std::string(name) + ">");
  const std::size_t text_end = doc.find('<', gt + 1);
  if (text_end == std::string_view::npos) return doc.size();
  if (doc.substr(text_end, 2) != "</") fail("markup inside <" + std::string(name) + ">");
  const std::string_view text = doc.substr(gt + 1, text_end - gt - 1);
  if (is_i8) {
    check_i8(text);
  } else {
    check_base64(text);
  }
  return text_end;
}

void check_document(std::string_view doc, std::string_view closing_tag, InputGuard& guard) {
  // The limit is process-wide and may have been changed by anyone.
  const std::size_t limit = xmlrpc_limit_get(XMLRPC_XML_SIZE_LIMIT_ID);
  if (doc.size() > limit)
    fail("document of " + std::to_string(doc.size()) + " bytes exceeds xmlrpc-c's limit of " +
         std::to_string(limit));
  guard.check(doc);
  const auto end = doc.find_last_not_of(" \t\r\n");
  const std::string_view body = end == std::string_view::npos ? "" : doc.substr(0, end + 1);
  if (!body.ends_with(closing_tag)) fail("document does not end with " + std::string(closing_tag));
}

void parse_response(const std::string& wire, InputGuard& guard, xmlrpc_c::rpcOutcome& outcome) {
  check_document(wire, "</methodResponse>", guard);
  try {
    xmlrpc_c::xml::parseResponse(wire, &outcome);
  } catch (const girerr::error& e) {
    fail(e.what());
  }
}

}  // namespace wsb::xmlrpc
