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
//   {"buildings": {"type": "FeatureCollection", "features": [
//     {"type": "Feature", "id", "properties": {"name", "height", "floors"},
//      "geometry": {"type": "Polygon", "coordinates": [[[x, y], ...]]}}]}}
//   (GeoJSON's shape; its coordinates here are EPSG:3067, not WGS 84)
// "records" and "attachment" may be absent when empty; every other member is
// required.
#include <rapidjson/document.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "common/base64.h"
#include "common/input_checks.h"
#include "common/tree_decoder.h"
#include "rest/rest_codecs.h"

namespace wsb::rest {
namespace {

// StringBuffer lets the writer use its unchecked fast path and RapidJSON's
// number and string specialisations; one memcpy then moves the result to the
// caller.
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
    w_.StartObject();
    key("type");
    w_.String("FeatureCollection");
    key("features");
    w_.StartArray();
    for (const auto& b : p.buildings) {
      w_.StartObject();
      key("type");
      w_.String("Feature");
      key("id");
      write_string(w_, b.id);
      key("properties");
      w_.StartObject();
      key("name");
      write_string(w_, b.name);
      key("height");
      w_.Double(b.height);
      key("floors");
      w_.Int(b.floors);
      w_.EndObject();
      key("geometry");
      w_.StartObject();
      key("type");
      w_.String("Polygon");
      key("coordinates");
      w_.StartArray();
      w_.StartArray();
      for (const auto& pt : b.footprint) {
        w_.StartArray();
        w_.Double(pt.x);
        w_.Double(pt.y);
        w_.EndArray();
      }
      w_.EndArray();
      w_.EndArray();
      w_.EndObject();
      w_.EndObject();
    }
    w_.EndArray();
    w_.EndObject();
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

// RapidJSON's DOM as a TreeDecoder policy.
struct JsonTree {
  static constexpr bool kGeoJson = true;
  using Node = Value;
  static const Value& object(const Value& v, const char* what) { return rest::object(v, what); }
  static Value::ConstArray array(const Value& v, const char* what) { return rest::array(v, what); }
  static std::size_t size(const Value::ConstArray& a) { return a.Size(); }
  static const Value& member(const Value& obj, const char* name) { return rest::member(obj, name); }
  static const Value* optional_member(const Value& obj, const char* name) {
    return rest::optional_member(obj, name);
  }
  static std::string string_of(const Value& v, const char* what) {
    return rest::string_of(v, what);
  }
  static std::int32_t int32_of(const Value& v, const char* what) { return rest::int32_of(v, what); }
  static std::int64_t int64_of(const Value& v, const char* what) { return rest::int64_of(v, what); }
  static double double_of(const Value& v, const char* what) { return rest::double_of(v, what); }
  static bool bool_of(const Value& v, const char* what) { return rest::bool_of(v, what); }
  static void bytes_of(const Value& v, const char* what, Bytes& out) {
    rest::bytes_of(v, what, out);
  }
  static const Value& top(const Value& root) {
    if (!root.IsObject() || root.MemberCount() != 1)
      fail("body must be an object with exactly one member");
    return root;
  }
  static std::pair<std::string_view, const Value*> only_member(const Value& top) {
    const auto& [name, v] = *top.MemberBegin();
    return {std::string_view(name.GetString(), name.GetStringLength()), &v};
  }
  [[noreturn]] static void fail(const std::string& what) { rest::fail(what); }
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The number that ends at `end` (RapidJSON's position after reading it).
std::string_view number_ending_at(std::string_view json, std::size_t end) {
  end = std::min(end, json.size());
  std::size_t start = end;
  while (start > 0 &&
         (is_digit(json[start - 1]) || json[start - 1] == '.' || json[start - 1] == 'e' ||
          json[start - 1] == 'E' || json[start - 1] == '+' || json[start - 1] == '-'))
    --start;
  return json.substr(start, end - start);
}

// A JSON number's value, correctly rounded (std::from_chars); none beyond the
// double range; below it, zero with its sign, as strtod gives.
std::optional<double> exact_double(std::string_view number) {
  const char* const end = number.data() + number.size();
  double d = 0;
  const auto [at, ec] = std::from_chars(number.data(), end, d);
  if (at != end) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // Above the range or below it: strtod says which (hostile input only).
    const double rough = std::strtod(std::string(number).c_str(), nullptr);
    if (std::isinf(rough)) return std::nullopt;
    return std::signbit(rough) ? -0.0 : 0.0;
  }
  if (ec != std::errc{}) return std::nullopt;
  return d;
}

// The parse's SAX events into a Document, refusing nesting beyond
// kMaxNestingDepth: RapidJSON's parser recurses once per level, so a hostile
// depth must stop it before it overflows the stack.
class DepthLimitedHandler {
 public:
  DepthLimitedHandler(rapidjson::Document& doc, std::string_view json,
                      const rapidjson::MemoryStream& read)
      : doc_(doc),
        json_(json),
        read_(read),
        // One vectorised pass is cheaper than a search in every string.
        has_escapes_(!json.empty() && std::memchr(json.data(), '\\', json.size()) != nullptr) {}
  // Why the handler stopped the parse, or empty.
  std::string_view refusal() const { return refusal_; }

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned i) { return doc_.Uint(i); }
  bool Int64(std::int64_t i) { return doc_.Int64(i); }
  bool Uint64(std::uint64_t i) { return doc_.Uint64(i); }
  // RapidJSON's conversion is not used: see kParseFlags.
  bool Double(double) {
    const std::optional<double> d = exact_double(number_ending_at(json_, read_.Tell()));
    return d ? doc_.Double(*d) : refuse(kBeyondRange);
  }
  // Reader::Parse compiles a call for kParseNumbersAsStringsFlag, not used.
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return false; }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return !lone_surrogate(s, n) && doc_.String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    return !lone_surrogate(s, n) && doc_.Key(s, n, copy);
  }
  bool StartObject() { return enter() && doc_.StartObject(); }
  bool EndObject(rapidjson::SizeType members) {
    --depth_;
    return doc_.EndObject(members);
  }
  bool StartArray() { return enter() && doc_.StartArray(); }
  bool EndArray(rapidjson::SizeType elements) {
    --depth_;
    return doc_.EndArray(elements);
  }

 private:
  // RapidJSON 1.1 pairs a high surrogate escape with the low one it needs,
  // but writes a lone low one (\uDC00-\uDFFF) as the three bytes ED B0-BF xx,
  // which are not UTF-8. The document was checked before parsing, so those
  // bytes in a decoded string can only come from such an escape.
  bool lone_surrogate(const char* s, std::size_t n) {
    if (!has_escapes_) return false;
    const char* end = s + n;
    for (const char* p = s; (p = static_cast<const char*>(std::memchr(p, '\xED', end - p))); ++p) {
      if (p + 1 < end && static_cast<unsigned char>(p[1]) >= 0xA0)
        return !refuse("a lone UTF-16 surrogate escape in a string ending");
    }
    return false;
  }

  static constexpr std::string_view kBeyondRange = "a number beyond the double range";
  bool refuse(std::string_view why) {
    refusal_ = why;
    return false;
  }
  bool enter() {
    static const std::string too_deep =
        "arrays and objects nested deeper than " + std::to_string(kMaxNestingDepth);
    return ++depth_ <= kMaxNestingDepth || refuse(too_deep);
  }

  rapidjson::Document& doc_;
  std::string_view json_;
  const rapidjson::MemoryStream& read_;
  std::size_t depth_ = 0;
  bool has_escapes_;
  std::string_view refusal_;
};

// RapidJSON's default (normal precision) conversion may be an ulp off, which
// would fail verification of 17-digit values, so the handler converts every
// double again from its text. Not kParseFullPrecisionFlag: RapidJSON 1.1's
// full-precision conversion is wrong or undefined for some numbers, all found
// by the fuzz targets: below about 1e-300 it read outside its table of powers
// of ten ("0.1234567890123e-337" crashed the server) or gave -2.1e301 for
// "0.<31 zeros>1e-300"; beyond the range it gave -1.8e-306 for "581e308";
// and a zero significand reached __builtin_clzll(0) ("0e40" read as
// -2.4e229), as did a significand that rounds past 2^64
// ("18446744073709551615.56"). Not kParseValidateEncodingFlag: its check per
// character cost decode of strings/800 60% more instructions; read() checks
// UTF-8 first instead.
constexpr unsigned kParseFlags = rapidjson::kParseDefaultFlags;

class JsonCodec final : public Codec, public CodecStages {
 public:
  void encode(const Payload& in, std::string& out) override { encode_model(in, out); }
  void encode_message(const Message& in, std::string& out) override { encode_model(in, out); }

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
    if (fresh()) {
      doc_.reset();
      pool_allocator_.reset();
      doc_.emplace();  // a new document with its own allocator
    } else {
      reuse_pool();
    }
    // Unchecked, RapidJSON copies invalid UTF-8 (overlong forms included)
    // into strings, and echo returns it.
    if (!valid_utf8(wire)) fail("the document is not valid UTF-8");
    // What Document::Parse does, with the depth limit between reader and DOM.
    rapidjson::MemoryStream bytes(wire.data(), wire.size());
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(bytes);
    rapidjson::ParseResult result;
    std::string refusal;
    auto parse = [&](rapidjson::Document& doc) {
      DepthLimitedHandler handler(doc, wire, bytes);
      rapidjson::Reader reader;
      result = reader.Parse<kParseFlags>(in, handler);
      refusal = handler.refusal();
      return !result.IsError();
    };
    doc_->Populate(parse);
    if (!refusal.empty()) fail(refusal + " at offset " + std::to_string(result.Offset()));
    if (result.IsError())
      fail(std::string(rapidjson::GetParseError_En(result.Code())) + " at offset " +
           std::to_string(result.Offset()));
    // RapidJSON's MemoryStream reads a NUL byte as the end of its input, so
    // it stops there and ignores the bytes after it.
    if (bytes.Tell() != wire.size())
      fail("content after the document at offset " + std::to_string(bytes.Tell()));
  }

  void unbind(Payload& out) override {
    if (!doc_) throw std::logic_error("json: unbind without a read");
    out = TreeDecoder<JsonTree>::payload(*doc_);
  }

 private:
  // Fresh: a new StringBuffer and scratch string per call, as typical
  // RapidJSON code writes; reuse keeps both and their capacity.
  template <class Model>
  void encode_model(const Model& in, std::string& out) {
    if (fresh()) {
      rapidjson::StringBuffer buffer;
      std::string scratch;
      write_document(in, buffer, scratch, out);
    } else {
      buffer_.Clear();
      write_document(in, buffer_, scratch_, out);
    }
  }

  // The document into `out`; the one copy out of `buffer` stays because
  // RapidJSON's fast paths for numbers and strings exist only for a Writer
  // on its own StringBuffer (docs/reference/codecs.md has the measurement).
  template <class Model>
  static void write_document(const Model& in, rapidjson::StringBuffer& buffer, std::string& scratch,
                             std::string& out) {
    Encoder encoder(buffer, scratch);
    encoder.writer().StartObject();
    visit_model(encoder, in);
    encoder.writer().EndObject();
    out.assign(buffer.GetString(), buffer.GetSize());
  }

  // Reuse: the DOM lives in one pool buffer kept across parses (RapidJSON's
  // MemoryPoolAllocator takes a user buffer, which Clear() keeps), grown to
  // what the largest document so far used, so a steady-state parse
  // allocates no DOM memory.
  void reuse_pool() {
    const std::size_t used = doc_ ? doc_->GetAllocator().Size() : 0;
    doc_.reset();
    if (!pool_allocator_ || used > pool_bytes_) {
      pool_allocator_.reset();
      // Room for the chunk header and alignment padding besides the data.
      pool_bytes_ = std::max<std::size_t>(used + used / 8 + 256, 64 * 1024);
      pool_ = std::make_unique<char[]>(pool_bytes_);
      pool_allocator_.emplace(pool_.get(), pool_bytes_);
    } else {
      pool_allocator_->Clear();  // frees overflow chunks, keeps the buffer
    }
    doc_.emplace(&*pool_allocator_);
  }

  rapidjson::StringBuffer buffer_;
  std::string scratch_;  // base64 text, reused across encodes
  std::unique_ptr<char[]> pool_;
  std::size_t pool_bytes_ = 0;
  std::optional<rapidjson::MemoryPoolAllocator<>> pool_allocator_;
  std::optional<rapidjson::Document> doc_;  // on pool_allocator_ under reuse
};

}  // namespace

std::unique_ptr<Codec> make_json_codec() { return std::make_unique<JsonCodec>(); }

}  // namespace wsb::rest
