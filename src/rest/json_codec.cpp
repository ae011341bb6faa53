// JSON bodies via RapidJSON.
//
// Encode streams straight from the model through rapidjson::Writer (no DOM:
// that is how a performance-minded RapidJSON user writes). Decode parses into
// a rapidjson::Document (read) and then walks it into the model (unbind), so
// both steps can be timed apart.
//
// Body shapes (one top-level member names the payload):
//   {"text": "..."}                  {"ints": [1, 2]}
//   {"strings": ["a"]}               {"objects": [{"id", "name", "value", "active"}]}
//   {"message": {"recipient", "sender", "authToken", "timestamp",
//                "records": [{"title", "author", "body", "sequence", "created",
//                             "priority", "category", "flags", "ttl"}],
//                "attachment": "<base64>"}}
//   {"messages": [<message object as above>, ...]}
//   {"binary": "<base64>"}
//   {"buildings": [{"id", "name", "height", "floors", "footprint": [[x, y]]}]}
// "records" and "attachment" may be absent when empty; every other member is
// required.
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <limits>

#include "common/base64.h"
#include "rest/rest_codecs.h"

namespace wsb::rest {
namespace {

// StringBuffer (reused, so its capacity persists) lets the writer use its
// unchecked fast path; one memcpy then moves the result to the caller.
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void write_string(JsonWriter& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// Base64 needs no JSON escaping, so it goes in as a raw, already quoted
// value instead of through the writer's per-character escaping scan.
void write_base64(JsonWriter& w, const Bytes& bytes, std::string& scratch) {
  scratch.assign(1, '"');
  base64_append(bytes.data(), bytes.size(), scratch);
  scratch.push_back('"');
  w.RawValue(scratch.data(), scratch.size(), rapidjson::kStringType);
}

class Encoder {
 public:
  Encoder(rapidjson::StringBuffer& buffer, std::string& scratch) : w_(buffer), scratch_(scratch) {}

  void operator()(const Text& p) {
    key("text");
    write_string(w_, p.value);
  }
  void operator()(const IntArray& p) {
    key("ints");
    w_.StartArray();
    for (const auto v : p.values) w_.Int(v);
    w_.EndArray();
  }
  void operator()(const StringArray& p) {
    key("strings");
    w_.StartArray();
    for (const auto& v : p.values) write_string(w_, v);
    w_.EndArray();
  }
  void operator()(const ObjectArray& p) {
    key("objects");
    w_.StartArray();
    for (const auto& o : p.values) {
      w_.StartObject();
      key("id");
      w_.Int(o.id);
      key("name");
      write_string(w_, o.name);
      key("value");
      w_.Double(o.value);
      key("active");
      w_.Bool(o.active);
      w_.EndObject();
    }
    w_.EndArray();
  }
  void operator()(const Message& m) {
    key("message");
    message(m);
  }
  void operator()(const MessageList& p) {
    key("messages");
    w_.StartArray();
    for (const auto& m : p.messages) message(m);
    w_.EndArray();
  }
  void operator()(const Binary& p) {
    key("binary");
    write_base64(w_, p.data, scratch_);
  }
  void operator()(const BuildingCollection& p) {
    key("buildings");
    w_.StartArray();
    for (const auto& b : p.buildings) {
      w_.StartObject();
      key("id");
      write_string(w_, b.id);
      key("name");
      write_string(w_, b.name);
      key("height");
      w_.Double(b.height);
      key("floors");
      w_.Int(b.floors);
      key("footprint");
      w_.StartArray();
      for (const auto& pt : b.footprint) {
        w_.StartArray();
        w_.Double(pt.x);
        w_.Double(pt.y);
        w_.EndArray();
      }
      w_.EndArray();
      w_.EndObject();
    }
    w_.EndArray();
  }

  JsonWriter& writer() { return w_; }

 private:
  template <std::size_t N>
  void key(const char (&name)[N]) {
    w_.Key(name, N - 1);
  }

  void message(const Message& m) {
    w_.StartObject();
    key("recipient");
    write_string(w_, m.meta.recipient);
    key("sender");
    write_string(w_, m.meta.sender);
    key("authToken");
    write_string(w_, m.meta.auth_token);
    key("timestamp");
    w_.Int64(m.meta.timestamp);
    if (!m.records.empty()) {
      key("records");
      w_.StartArray();
      for (const auto& r : m.records) {
        w_.StartObject();
        key("title");
        write_string(w_, r.title);
        key("author");
        write_string(w_, r.author);
        key("body");
        write_string(w_, r.body);
        key("sequence");
        w_.Int64(r.sequence);
        key("created");
        w_.Int64(r.created);
        key("priority");
        w_.Int(r.priority);
        key("category");
        w_.Int(r.category);
        key("flags");
        w_.Int(r.flags);
        key("ttl");
        w_.Int(r.ttl);
        w_.EndObject();
      }
      w_.EndArray();
    }
    if (!m.attachment.empty()) {
      key("attachment");
      write_base64(w_, m.attachment, scratch_);
    }
    w_.EndObject();
  }

  JsonWriter w_;
  std::string& scratch_;
};

// ---- decoding: DOM -> model, every member and type checked ----

using Value = rapidjson::Value;

[[noreturn]] void fail(std::string_view what) { throw DecodeError("json: " + std::string(what)); }

const Value& member(const Value& obj, const char* name) {
  const auto it = obj.FindMember(name);
  if (it == obj.MemberEnd()) fail(std::string("missing member '") + name + "'");
  return it->value;
}

const Value* optional_member(const Value& obj, const char* name) {
  const auto it = obj.FindMember(name);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

const Value& object(const Value& v, const char* what) {
  if (!v.IsObject()) fail(std::string(what) + " is not an object");
  return v;
}

const Value::ConstArray array(const Value& v, const char* what) {
  if (!v.IsArray()) fail(std::string(what) + " is not an array");
  return v.GetArray();
}

std::string string_of(const Value& v, const char* what) {
  if (!v.IsString()) fail(std::string(what) + " is not a string");
  return std::string(v.GetString(), v.GetStringLength());
}

std::int32_t int32_of(const Value& v, const char* what) {
  if (!v.IsInt()) fail(std::string(what) + " is not a 32-bit integer");
  return v.GetInt();
}

std::int16_t int16_of(const Value& v, const char* what) {
  const std::int32_t i = int32_of(v, what);
  if (i < std::numeric_limits<std::int16_t>::min() || i > std::numeric_limits<std::int16_t>::max())
    fail(std::string(what) + " is out of 16-bit range");
  return static_cast<std::int16_t>(i);
}

std::int64_t int64_of(const Value& v, const char* what) {
  if (!v.IsInt64()) fail(std::string(what) + " is not a 64-bit integer");
  return v.GetInt64();
}

double double_of(const Value& v, const char* what) {
  if (!v.IsNumber()) fail(std::string(what) + " is not a number");
  return v.GetDouble();
}

bool bool_of(const Value& v, const char* what) {
  if (!v.IsBool()) fail(std::string(what) + " is not a boolean");
  return v.GetBool();
}

void bytes_of(const Value& v, const char* what, Bytes& out) {
  if (!v.IsString()) fail(std::string(what) + " is not a base64 string");
  try {
    base64_decode(std::string_view(v.GetString(), v.GetStringLength()), out);
  } catch (const DecodeError& e) {
    // Every json DecodeError names the codec and the member, as xml's do.
    fail(std::string(what) + ": " + e.what());
  }
}

Record record_of(const Value& v) {
  object(v, "record");
  Record r;
  r.title = string_of(member(v, "title"), "title");
  r.author = string_of(member(v, "author"), "author");
  r.body = string_of(member(v, "body"), "body");
  r.sequence = int64_of(member(v, "sequence"), "sequence");
  r.created = int64_of(member(v, "created"), "created");
  r.priority = int32_of(member(v, "priority"), "priority");
  r.category = int32_of(member(v, "category"), "category");
  r.flags = int32_of(member(v, "flags"), "flags");
  r.ttl = int16_of(member(v, "ttl"), "ttl");
  return r;
}

Message message_of(const Value& v) {
  object(v, "message");
  Message m;
  m.meta.recipient = string_of(member(v, "recipient"), "recipient");
  m.meta.sender = string_of(member(v, "sender"), "sender");
  m.meta.auth_token = string_of(member(v, "authToken"), "authToken");
  m.meta.timestamp = int64_of(member(v, "timestamp"), "timestamp");
  if (const Value* records = optional_member(v, "records")) {
    const auto arr = array(*records, "records");
    m.records.reserve(arr.Size());
    for (const auto& r : arr) m.records.push_back(record_of(r));
  }
  if (const Value* attachment = optional_member(v, "attachment"))
    bytes_of(*attachment, "attachment", m.attachment);
  return m;
}

Building building_of(const Value& v) {
  object(v, "building");
  Building b;
  b.id = string_of(member(v, "id"), "id");
  b.name = string_of(member(v, "name"), "name");
  b.height = double_of(member(v, "height"), "height");
  b.floors = int32_of(member(v, "floors"), "floors");
  const auto points = array(member(v, "footprint"), "footprint");
  b.footprint.reserve(points.Size());
  for (const auto& p : points) {
    const auto xy = array(p, "point");
    if (xy.Size() != 2) fail("point does not have two coordinates");
    b.footprint.push_back({double_of(xy[0], "x"), double_of(xy[1], "y")});
  }
  return b;
}

Payload payload_of(const Value& root) {
  if (!root.IsObject() || root.MemberCount() != 1)
    fail("body must be an object with exactly one member");
  const auto& [name, v] = *root.MemberBegin();
  const std::string_view kind(name.GetString(), name.GetStringLength());
  if (kind == "text") return Text{string_of(v, "text")};
  if (kind == "ints") {
    IntArray p;
    const auto arr = array(v, "ints");
    p.values.reserve(arr.Size());
    for (const auto& i : arr) p.values.push_back(int32_of(i, "int"));
    return p;
  }
  if (kind == "strings") {
    StringArray p;
    const auto arr = array(v, "strings");
    p.values.reserve(arr.Size());
    for (const auto& s : arr) p.values.push_back(string_of(s, "string"));
    return p;
  }
  if (kind == "objects") {
    ObjectArray p;
    const auto arr = array(v, "objects");
    p.values.reserve(arr.Size());
    for (const auto& o : arr) {
      object(o, "object");
      p.values.push_back(
          Object{int32_of(member(o, "id"), "id"), string_of(member(o, "name"), "name"),
                 double_of(member(o, "value"), "value"), bool_of(member(o, "active"), "active")});
    }
    return p;
  }
  if (kind == "message") return message_of(v);
  if (kind == "messages") {
    MessageList p;
    const auto arr = array(v, "messages");
    p.messages.reserve(arr.Size());
    for (const auto& m : arr) p.messages.push_back(message_of(m));
    return p;
  }
  if (kind == "binary") {
    Binary p;
    bytes_of(v, "binary", p.data);
    return p;
  }
  if (kind == "buildings") {
    BuildingCollection p;
    const auto arr = array(v, "buildings");
    p.buildings.reserve(arr.Size());
    for (const auto& b : arr) p.buildings.push_back(building_of(b));
    return p;
  }
  fail("unknown payload member '" + std::string(kind) + "'");
}

class JsonCodec final : public Codec, public CodecStages {
 public:
  void encode(const Payload& in, std::string& out) override {
    buffer_.Clear();
    Encoder encoder(buffer_, scratch_);
    encoder.writer().StartObject();
    std::visit(encoder, in);
    encoder.writer().EndObject();
    out.assign(buffer_.GetString(), buffer_.GetSize());
  }

  void decode(std::string_view wire, Payload& out) override {
    read(wire);
    unbind(out);
  }

  std::string content_type() const override { return "application/json"; }
  CodecStages* stages() override { return this; }

  bool splits_encode() const override { return false; }
  bool splits_decode() const override { return true; }
  void bind(const Payload&) override { throw std::logic_error("json encodes without a DOM"); }
  void write(std::string&) override { throw std::logic_error("json encodes without a DOM"); }

  void read(std::string_view wire) override {
    // Release the previous DOM so memory does not grow across calls.
    doc_.SetNull();
    doc_.GetAllocator().Clear();
    // Full precision: RapidJSON's default double parsing may be off by an
    // ulp, which would fail verification of 17-digit values.
    doc_.Parse<rapidjson::kParseFullPrecisionFlag>(wire.data(), wire.size());
    if (doc_.HasParseError())
      fail(std::string(rapidjson::GetParseError_En(doc_.GetParseError())) + " at offset " +
           std::to_string(doc_.GetErrorOffset()));
  }

  void unbind(Payload& out) override { out = payload_of(doc_); }

 private:
  rapidjson::StringBuffer buffer_;
  std::string scratch_;  // base64 text, reused across encodes
  rapidjson::Document doc_;
};

}  // namespace

std::unique_ptr<Codec> make_json_codec() { return std::make_unique<JsonCodec>(); }

}  // namespace wsb::rest
