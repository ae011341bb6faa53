// `json-simdjson`: the json codec's bytes (json_codec.cpp writes them)
// decoded with simdjson's On Demand API, as its performance notes advise:
// one ondemand::parser kept across calls (its buffers stay allocated), a
// padded input buffer kept across calls, error codes rather than
// exceptions. The fields of each object are read in document order in one
// pass, each value as the model needs it; nothing builds a DOM, so decode
// has no read/unbind stages.
//
// It accepts what the json codec accepts and decodes it to the same payload:
// members in any order, the first of duplicate members, unknown members
// ignored. On Demand checks only the values one reads, so an unknown member's
// value is walked too (validate), and malformed JSON anywhere is refused.
#include <simdjson.h>

#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

#include "common/base64.h"
#include "rest/rest_codecs.h"

namespace wsb::rest {
namespace {

namespace od = simdjson::ondemand;

[[noreturn]] void fail(const std::string& what) { throw DecodeError("json-simdjson: " + what); }

// A simdjson error on `what`, which the model wants as `expected`.
[[noreturn]] void fail_on(simdjson::error_code error, const char* what, const char* expected) {
  if (error == simdjson::INCORRECT_TYPE) fail(std::string(what) + " is not " + expected);
  fail(std::string(what) + ": " + simdjson::error_message(error));
}

template <class T>
T get(simdjson::simdjson_result<T>&& result, const char* what, const char* expected) {
  T value{};
  if (const auto error = std::move(result).get(value)) fail_on(error, what, expected);
  return value;
}

od::object object(od::value v, const char* what) { return get(v.get_object(), what, "an object"); }
od::array array(od::value v, const char* what) { return get(v.get_array(), what, "an array"); }

std::string string_of(od::value v, const char* what) {
  return std::string(get(v.get_string(), what, "a string"));
}

std::int64_t int64_of(od::value v, const char* what) {
  return get(v.get_int64(), what, "a 64-bit integer");
}

std::int32_t int32_of(od::value v, const char* what) {
  std::int64_t i = 0;
  if (const auto error = v.get_int64().get(i); error ||
                                               i < std::numeric_limits<std::int32_t>::min() ||
                                               i > std::numeric_limits<std::int32_t>::max())
    fail_on(error ? error : simdjson::INCORRECT_TYPE, what, "a 32-bit integer");
  return static_cast<std::int32_t>(i);
}

std::int16_t int16_of(od::value v, const char* what) {
  const std::int32_t i = int32_of(v, what);
  if (i < std::numeric_limits<std::int16_t>::min() || i > std::numeric_limits<std::int16_t>::max())
    fail(std::string(what) + " is out of 16-bit range");
  return static_cast<std::int16_t>(i);
}

double double_of(od::value v, const char* what) {
  return get(v.get_double(), what, "a number within the double range");
}

bool bool_of(od::value v, const char* what) { return get(v.get_bool(), what, "a boolean"); }

void bytes_of(od::value v, const char* what, Bytes& out) {
  const std::string_view text = get(v.get_string(), what, "a base64 string");
  try {
    base64_decode(text, out);
  } catch (const DecodeError& e) {
    fail(std::string(what) + ": " + e.what());
  }
}

// The whole of a value nobody reads (an unknown or duplicate member):
// On Demand would skip it unchecked. `level` is the nesting level the value
// has if it is an array or object, counted as json counts it (the body's
// object is level 1), so that both refuse the same depth.
void validate(od::value v, std::size_t level) {
  const od::json_type type = get(v.type(), "a value", "JSON");
  if ((type == od::json_type::object || type == od::json_type::array) && level > kMaxNestingDepth)
    fail("arrays and objects nested deeper than " + std::to_string(kMaxNestingDepth));
  switch (type) {
    case od::json_type::object:
      for (auto field : object(v, "a value")) {
        od::field f = get(std::move(field), "a member", "a member");
        get(f.unescaped_key(), "a member name", "a string");
        validate(f.value(), level + 1);
      }
      return;
    case od::json_type::array:
      for (auto item : array(v, "a value"))
        validate(get(std::move(item), "an item", "a value"), level + 1);
      return;
    case od::json_type::number:
      double_of(v, "a number");
      return;
    case od::json_type::string:
      get(v.get_string(), "a string", "a string");
      return;
    case od::json_type::boolean:
      bool_of(v, "a literal");
      return;
    case od::json_type::null:
      if (!get(v.is_null(), "a literal", "null")) fail("a literal is not null");
      return;
  }
}

// Each member of the object `v` (at nesting `level`) in document order to
// on_member(index in `names`, value); the first of duplicates only, unknown
// ones validated and ignored. Every name not in `optional` is required.
template <std::size_t N, class OnMember>
void members(od::value v, std::size_t level, const char* what, const char* const (&names)[N],
             OnMember on_member, std::initializer_list<std::size_t> optional = {}) {
  static_assert(N <= 32);
  std::uint32_t seen = 0;
  for (auto field : object(v, what)) {
    od::field f = get(std::move(field), what, "an object");
    const std::string_view key = get(f.unescaped_key(), "a member name", "a string");
    std::size_t i = 0;
    while (i < N && key != names[i]) ++i;
    if (i == N || (seen & (1u << i)) != 0) {
      validate(f.value(), level + 1);
      continue;
    }
    seen |= 1u << i;
    on_member(i, f.value());
  }
  std::uint32_t required = (N == 32 ? ~0u : (1u << N) - 1);
  for (const std::size_t i : optional) required &= ~(1u << i);
  if (const std::uint32_t missing = required & ~seen)
    fail(std::string("missing member '") + names[std::countr_zero(missing)] + "'");
}

// Each item of an array into `out`. Not reserved first: count_elements()
// is a second pass over the array's structural index, which cost more than
// the vector's growth (decode/json-simdjson/ints/800 212 K instructions
// with it, 185 K without; objects/800 1.60 M, 1.38 M).
template <class T, class Item>
void each(od::value v, const char* what, std::vector<T>& out, Item item) {
  out.clear();
  for (auto element : array(v, what))
    out.push_back(item(get(std::move(element), what, "an array")));
}

void expect_type(std::optional<std::string>& type, const char* expected) {
  if (type != expected) fail(std::string("\"type\" must be \"") + expected + "\"");
}

Record record(od::value v, std::size_t level) {
  static constexpr const char* kNames[] = {"title",    "author",   "body",  "sequence", "created",
                                           "priority", "category", "flags", "ttl"};
  Record r;
  members(v, level, "record", kNames, [&r](std::size_t i, od::value m) {
    switch (i) {
      case 0:
        r.title = string_of(m, "title");
        break;
      case 1:
        r.author = string_of(m, "author");
        break;
      case 2:
        r.body = string_of(m, "body");
        break;
      case 3:
        r.sequence = int64_of(m, "sequence");
        break;
      case 4:
        r.created = int64_of(m, "created");
        break;
      case 5:
        r.priority = int32_of(m, "priority");
        break;
      case 6:
        r.category = int32_of(m, "category");
        break;
      case 7:
        r.flags = int32_of(m, "flags");
        break;
      default:
        r.ttl = int16_of(m, "ttl");
        break;
    }
  });
  return r;
}

Message message(od::value v, std::size_t level) {
  static constexpr const char* kNames[] = {"recipient", "sender",  "authToken",
                                           "timestamp", "records", "attachment"};
  Message m;
  members(v, level, "message", kNames,
          [&m, level](std::size_t i, od::value member) {
            switch (i) {
              case 0:
                m.meta.recipient = string_of(member, "recipient");
                break;
              case 1:
                m.meta.sender = string_of(member, "sender");
                break;
              case 2:
                m.meta.auth_token = string_of(member, "authToken");
                break;
              case 3:
                m.meta.timestamp = int64_of(member, "timestamp");
                break;
              case 4:
                each(member, "records", m.records,
                     [level](od::value r) { return record(r, level + 2); });
                break;
              default:
                bytes_of(member, "attachment", m.attachment);
                break;
            }
          },
          {4, 5});
  return m;
}

// [[x, y], ...], the one ring of a Polygon, into `out`.
void footprint(od::value rings, std::vector<Point>& out) {
  std::size_t count = 0;
  for (auto ring : array(rings, "coordinates")) {
    if (++count > 1) break;
    each(get(std::move(ring), "coordinates", "an array"), "footprint", out, [](od::value p) {
      double xy[2] = {0, 0};
      std::size_t n = 0;
      for (auto c : array(p, "point")) {
        if (n == 2) fail("point does not have two coordinates");
        xy[n] = double_of(get(std::move(c), n == 0 ? "x" : "y", "a number"), n == 0 ? "x" : "y");
        ++n;
      }
      if (n != 2) fail("point does not have two coordinates");
      return Point{xy[0], xy[1]};
    });
  }
  if (count != 1) fail("a building's Polygon must have exactly one ring");
}

Building feature(od::value v, std::size_t level) {
  static constexpr const char* kFeature[] = {"type", "id", "properties", "geometry"};
  static constexpr const char* kProperties[] = {"name", "height", "floors"};
  static constexpr const char* kGeometry[] = {"type", "coordinates"};
  Building b;
  std::optional<std::string> type, geometry_type;
  members(v, level, "feature", kFeature, [&](std::size_t i, od::value m) {
    switch (i) {
      case 0:
        type = string_of(m, "type");
        break;
      case 1:
        b.id = string_of(m, "id");
        break;
      case 2:
        members(m, level + 1, "properties", kProperties, [&b](std::size_t j, od::value p) {
          if (j == 0)
            b.name = string_of(p, "name");
          else if (j == 1)
            b.height = double_of(p, "height");
          else
            b.floors = int32_of(p, "floors");
        });
        break;
      default:
        members(m, level + 1, "geometry", kGeometry, [&](std::size_t j, od::value g) {
          if (j == 0)
            geometry_type = string_of(g, "type");
          else
            footprint(g, b.footprint);
        });
        expect_type(geometry_type, "Polygon");
    }
  });
  expect_type(type, "Feature");
  return b;
}

BuildingCollection buildings(od::value v, std::size_t level) {
  static constexpr const char* kNames[] = {"type", "features"};
  BuildingCollection p;
  std::optional<std::string> type;
  members(v, level, "buildings", kNames, [&](std::size_t i, od::value m) {
    if (i == 0)
      type = string_of(m, "type");
    else
      each(m, "features", p.buildings, [level](od::value f) { return feature(f, level + 2); });
  });
  expect_type(type, "FeatureCollection");
  return p;
}

// The body's one member, by name; the body's object is level 1, so an
// object or array as the member's value is level 2.
Payload payload(std::string_view kind, od::value v) {
  if (kind == "text") return Text{string_of(v, "text")};
  if (kind == "ints") {
    IntArray p;
    each(v, "ints", p.values, [](od::value i) { return int32_of(i, "int"); });
    return p;
  }
  if (kind == "strings") {
    StringArray p;
    each(v, "strings", p.values, [](od::value s) { return string_of(s, "string"); });
    return p;
  }
  if (kind == "objects") {
    static constexpr const char* kNames[] = {"id", "name", "value", "active"};
    ObjectArray p;
    each(v, "objects", p.values, [](od::value item) {
      Object o;
      members(item, 3, "object", kNames, [&o](std::size_t i, od::value m) {
        switch (i) {
          case 0:
            o.id = int32_of(m, "id");
            break;
          case 1:
            o.name = string_of(m, "name");
            break;
          case 2:
            o.value = double_of(m, "value");
            break;
          default:
            o.active = bool_of(m, "active");
            break;
        }
      });
      return o;
    });
    return p;
  }
  if (kind == "message") return message(v, 2);
  if (kind == "messages") {
    MessageList p;
    each(v, "messages", p.messages, [](od::value m) { return message(m, 3); });
    return p;
  }
  if (kind == "binary") {
    Binary p;
    bytes_of(v, "binary", p.data);
    return p;
  }
  if (kind == "buildings") return buildings(v, 2);
  fail("unknown payload member '" + std::string(kind) + "'");
}

class JsonSimdjsonCodec final : public Codec {
 public:
  JsonSimdjsonCodec() { make_parser(); }

  void encode(const Payload& in, std::string& out) override {
    json_->set_allocation(allocation());
    json_->encode(in, out);
  }
  void encode_message(const Message& in, std::string& out) override {
    json_->set_allocation(allocation());
    json_->encode_message(in, out);
  }
  std::string content_type() const override { return json_->content_type(); }

  // The copy into the padded buffer is part of decode and of its timed
  // region: simdjson reads up to SIMDJSON_PADDING bytes past the end, which
  // a string_view of received bytes does not promise are readable.
  void decode(std::string_view wire, Payload& out) override {
    if (fresh()) {
      make_parser();
      padded_.reset();
      padded_capacity_ = 0;
    }
    const std::size_t capacity = wire.size() + simdjson::SIMDJSON_PADDING;
    if (capacity > padded_capacity_) {
      padded_ = std::make_unique_for_overwrite<char[]>(capacity);
      padded_capacity_ = capacity;
    }
    if (!wire.empty()) std::memcpy(padded_.get(), wire.data(), wire.size());
    std::memset(padded_.get() + wire.size(), 0, simdjson::SIMDJSON_PADDING);

    od::document doc;
    if (const auto error = parser_->iterate(padded_.get(), wire.size(), padded_capacity_).get(doc))
      fail(std::string("the document: ") + simdjson::error_message(error));
    od::object top;
    if (doc.get_object().get(top)) fail("body must be an object with exactly one member");
    std::optional<Payload> decoded;
    for (auto field : top) {
      od::field f = get(std::move(field), "the body", "an object");
      if (decoded) fail("body must be an object with exactly one member");
      const std::string kind(get(f.unescaped_key(), "a member name", "a string"));
      decoded = payload(kind, f.value());
    }
    if (!decoded) fail("body must be an object with exactly one member");
    // At the end of the document, there is no location left.
    if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS)
      fail("content after the body's object");
    out = std::move(*decoded);
  }

 private:
  void make_parser() {
    parser_ = std::make_unique<od::parser>();
    // Only the nesting depth is set here; iterate() sizes the buffers.
    if (parser_->allocate(4096, kMaxNestingDepth) != simdjson::SUCCESS) throw std::bad_alloc();
  }

  std::unique_ptr<Codec> json_ = make_json_codec();  // writes the bytes
  std::unique_ptr<od::parser> parser_;
  std::unique_ptr<char[]> padded_;  // the wire bytes, then SIMDJSON_PADDING zeros
  std::size_t padded_capacity_ = 0;
};

}  // namespace

std::unique_ptr<Codec> make_json_simdjson_codec() { return std::make_unique<JsonSimdjsonCodec>(); }

}  // namespace wsb::rest
