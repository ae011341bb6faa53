#include "common/payload.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <stdexcept>

namespace wsb {
namespace {

constexpr std::array<std::string_view, 8> kKindNames = {
    "text", "ints", "strings", "objects", "message-a", "message-b", "binary", "gml"};

// splitmix64: tiny, fast, and fully specified, so payloads are identical
// across compilers and standard libraries.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t bound) { return next() % bound; }
  // A double in [lo, hi) using all 53 mantissa bits, so most values need 17
  // significant digits to round-trip: a codec that prints fewer fails.
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }

 private:
  std::uint64_t state_;
};

constexpr std::string_view kAlphabet =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ";
// XML specials and 2- and 3-byte UTF-8 sequences (e-acute, CJK, euro sign).
constexpr std::array<std::string_view, 8> kSpecialTokens = {
    "<", ">", "&", "\"", "'", "\xC3\xA9", "\xE4\xB8\xAD", "\xE2\x82\xAC"};

// Exactly `length` bytes of valid UTF-8 that never starts or ends with a
// space (some XML stacks trim). `special` mixes in kSpecialTokens.
std::string make_string(Rng& rng, std::size_t length, bool special) {
  std::string s;
  s.reserve(length);
  while (s.size() < length) {
    const std::size_t room = length - s.size();
    if (special && rng.below(4) == 0) {
      const auto token = kSpecialTokens[rng.below(kSpecialTokens.size())];
      if (token.size() <= room) {
        s += token;
        continue;
      }
    }
    char c = kAlphabet[rng.below(kAlphabet.size())];
    if (c == ' ' && (s.empty() || room == 1)) c = 'x';
    s += c;
  }
  return s;
}

class Generator {
 public:
  Generator(std::uint64_t seed, Strings strings) : rng_(seed), strings_(strings) {}

  std::string next_string(std::size_t length) {
    const bool special = strings_ == Strings::escaped &&
                         (strings_made_++ % kSpecialStringPeriod) == kSpecialStringPeriod - 1;
    return make_string(rng_, length, special);
  }
  std::int32_t next_i32() { return static_cast<std::int32_t>(rng_.next()); }
  std::int64_t next_i64() { return static_cast<std::int64_t>(rng_.next()); }
  double uniform(double lo, double hi) { return rng_.uniform(lo, hi); }
  std::uint64_t below(std::uint64_t bound) { return rng_.below(bound); }
  Bytes bytes(std::size_t n) {
    Bytes out(n);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const std::uint64_t word = rng_.next();
      for (int b = 0; b < 8; ++b) out[i + b] = static_cast<std::uint8_t>(word >> (8 * b));
    }
    for (; i < n; ++i) out[i] = static_cast<std::uint8_t>(rng_.next());
    return out;
  }

  Metadata metadata() {
    return Metadata{next_string(24), next_string(24), next_string(40), next_i64()};
  }

 private:
  Rng rng_;
  Strings strings_;
  std::size_t strings_made_ = 0;
};

Building make_building(Generator& g, std::size_t index) {
  Building b;
  b.id = "bldg-" + std::to_string(index);
  b.name = g.next_string(24);
  b.height = g.uniform(3.0, 120.0);
  b.floors = static_cast<std::int32_t>(1 + g.below(40));
  // 20 vertices (a closed ring of 19 corners) is about 1 KB of GML with
  // full-precision coordinates, the building size cha-et-al describe.
  constexpr std::size_t kCorners = 19;
  const double cx = g.uniform(380000.0, 390000.0);
  const double cy = g.uniform(6670000.0, 6680000.0);
  for (std::size_t i = 0; i < kCorners; ++i) {
    const double angle = 2.0 * std::numbers::pi * static_cast<double>(i) / kCorners;
    const double r = g.uniform(8.0, 25.0);
    b.footprint.push_back({cx + r * std::cos(angle), cy + r * std::sin(angle)});
  }
  b.footprint.push_back(b.footprint.front());
  return b;
}

std::string size_label(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes);
}

std::size_t parse_size(std::string_view text) {
  std::size_t multiplier = 1;
  if (text.ends_with("MiB")) {
    multiplier = 1u << 20;
    text.remove_suffix(3);
  } else if (text.ends_with("KiB")) {
    multiplier = 1u << 10;
    text.remove_suffix(3);
  }
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
    throw std::invalid_argument("bad payload size '" + std::string(text) + "'");
  return value * multiplier;
}

std::size_t string_bytes(const std::vector<std::string>& v) {
  std::size_t n = 0;
  for (const auto& s : v) n += s.size();
  return n;
}

std::size_t metadata_bytes(const Metadata& m) {
  return m.recipient.size() + m.sender.size() + m.auth_token.size() + sizeof m.timestamp;
}

// Element equality with doubles compared under a DoubleFidelity.
struct Same {
  DoubleFidelity f;

  bool operator()(double a, double b) const {
    // A NaN that comes back as a NaN is the value that was sent (protobuf
    // carries any bit pattern).
    if (std::isnan(a) && std::isnan(b)) return true;
    if (a == b || f.exact()) return a == b;
    const double scale = std::max(std::fabs(a), std::fabs(b));
    return std::fabs(a - b) <= f.relative * scale || scale < f.tiny;
  }
  bool operator()(const Object& a, const Object& b) const {
    return a.id == b.id && a.name == b.name && (*this)(a.value, b.value) && a.active == b.active;
  }
  bool operator()(const Point& a, const Point& b) const {
    return (*this)(a.x, b.x) && (*this)(a.y, b.y);
  }
  bool operator()(const Building& a, const Building& b) const {
    return a.id == b.id && a.name == b.name && (*this)(a.height, b.height) &&
           a.floors == b.floors && a.footprint.size() == b.footprint.size() &&
           std::equal(a.footprint.begin(), a.footprint.end(), b.footprint.begin(), *this);
  }
  template <class T>
  bool operator()(const T& a, const T& b) const {
    return a == b;
  }
};

template <class T>
std::string first_vector_difference(std::string_view what, const std::vector<T>& a,
                                    const std::vector<T>& b, const Same& same = {}) {
  if (a.size() != b.size())
    return std::string(what) + " count " + std::to_string(a.size()) +
           " != " + std::to_string(b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return std::string(what) + "[" + std::to_string(i) + "] differs";
  return {};
}

}  // namespace

std::string_view kind_name(Kind kind) { return kKindNames[static_cast<std::size_t>(kind)]; }

Kind kind_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == name) return static_cast<Kind>(i);
  throw std::invalid_argument("unknown payload kind '" + std::string(name) + "'");
}

std::string_view strings_name(Strings strings) {
  return strings == Strings::escaped ? "escaped" : "plain";
}

Strings strings_from_name(std::string_view name) {
  if (name == "plain") return Strings::plain;
  if (name == "escaped") return Strings::escaped;
  throw std::invalid_argument("unknown string shape '" + std::string(name) +
                              "' (plain or escaped)");
}

bool has_generated_strings(Kind kind) {
  return kind != Kind::text && kind != Kind::ints && kind != Kind::binary;
}

std::string PayloadSpec::label() const {
  const std::string kind_part(kind_name(kind));
  const std::string suffix =
      strings == Strings::escaped && has_generated_strings(kind) ? std::string(kEscapedSuffix) : "";
  switch (kind) {
    case Kind::text:
      return kind_part;
    case Kind::message_b:
    case Kind::binary:
      return kind_part + "/" + size_label(n) + suffix;
    default:
      return kind_part + "/" + std::to_string(n) + suffix;
  }
}

PayloadSpec parse_spec(std::string_view label) {
  if (label.ends_with(kEscapedSuffix)) {
    PayloadSpec spec = parse_spec(label.substr(0, label.size() - kEscapedSuffix.size()));
    if (!has_generated_strings(spec.kind))
      throw std::invalid_argument("payload '" + std::string(label) +
                                  "' has no generated strings to escape");
    spec.strings = Strings::escaped;
    return spec;
  }
  const auto slash = label.find('/');
  const Kind kind = kind_from_name(label.substr(0, slash));
  if (kind == Kind::text) {
    if (slash != std::string_view::npos)
      throw std::invalid_argument("text takes no size: '" + std::string(label) + "'");
    return {kind, 0};
  }
  if (slash == std::string_view::npos)
    throw std::invalid_argument("payload '" + std::string(label) + "' needs a size");
  return {kind, parse_size(label.substr(slash + 1))};
}

Payload generate(const PayloadSpec& spec, std::uint64_t seed) {
  Generator g(seed ^ (static_cast<std::uint64_t>(spec.kind) << 56) ^ spec.n, spec.strings);
  switch (spec.kind) {
    case Kind::text:
      // The E1 "network latency" reply: fixed, short, plain.
      return Text{"Hello from wsbench"};
    case Kind::ints: {
      IntArray p;
      p.values.reserve(spec.n);
      for (std::size_t i = 0; i < spec.n; ++i) p.values.push_back(g.next_i32());
      return p;
    }
    case Kind::strings: {
      StringArray p;
      p.values.reserve(spec.n);
      for (std::size_t i = 0; i < spec.n; ++i) p.values.push_back(g.next_string(8 + g.below(17)));
      return p;
    }
    case Kind::objects: {
      ObjectArray p;
      p.values.reserve(spec.n);
      for (std::size_t i = 0; i < spec.n; ++i)
        p.values.push_back(Object{static_cast<std::int32_t>(i), g.next_string(8 + g.below(9)),
                                  g.uniform(-1e6, 1e6), g.below(2) == 1});
      return p;
    }
    case Kind::message_a: {
      Message m;
      m.meta = g.metadata();
      m.records.reserve(spec.n);
      for (std::size_t i = 0; i < spec.n; ++i) {
        Record r;
        r.title = g.next_string(50);
        r.author = g.next_string(50);
        r.body = g.next_string(50);
        r.sequence = static_cast<std::int64_t>(i);
        r.created = g.next_i64();
        r.priority = g.next_i32();
        r.category = g.next_i32();
        r.flags = g.next_i32();
        r.ttl = static_cast<std::int16_t>(g.next_i32());
        m.records.push_back(std::move(r));
      }
      return m;
    }
    case Kind::message_b: {
      Message m;
      m.meta = g.metadata();
      m.attachment = g.bytes(spec.n);
      return m;
    }
    case Kind::binary:
      return Binary{g.bytes(spec.n)};
    case Kind::gml: {
      BuildingCollection c;
      c.buildings.reserve(spec.n);
      for (std::size_t i = 0; i < spec.n; ++i) c.buildings.push_back(make_building(g, i));
      return c;
    }
  }
  throw std::logic_error("unhandled payload kind");
}

std::size_t raw_size(const Payload& payload) {
  struct Visitor {
    std::size_t operator()(const Text& p) const { return p.value.size(); }
    std::size_t operator()(const IntArray& p) const { return p.values.size() * 4; }
    std::size_t operator()(const StringArray& p) const { return string_bytes(p.values); }
    std::size_t operator()(const ObjectArray& p) const {
      std::size_t n = 0;
      for (const auto& o : p.values) n += 4 + o.name.size() + 8 + 1;
      return n;
    }
    std::size_t operator()(const Message& p) const {
      std::size_t n = metadata_bytes(p.meta) + p.attachment.size();
      for (const auto& r : p.records)
        n += r.title.size() + r.author.size() + r.body.size() + 2 * 8 + 3 * 4 + 2;
      return n;
    }
    std::size_t operator()(const MessageList& p) const {
      std::size_t n = 0;
      for (const auto& m : p.messages) n += (*this)(m);
      return n;
    }
    std::size_t operator()(const Binary& p) const { return p.data.size(); }
    std::size_t operator()(const BuildingCollection& p) const {
      std::size_t n = 0;
      for (const auto& b : p.buildings)
        n += b.id.size() + b.name.size() + 8 + 4 + b.footprint.size() * 16;
      return n;
    }
  };
  return std::visit(Visitor{}, payload);
}

std::size_t item_count(const Payload& payload) {
  struct Visitor {
    std::size_t operator()(const Text&) const { return 1; }
    std::size_t operator()(const IntArray& p) const { return p.values.size(); }
    std::size_t operator()(const StringArray& p) const { return p.values.size(); }
    std::size_t operator()(const ObjectArray& p) const { return p.values.size(); }
    std::size_t operator()(const Message& p) const {
      return p.records.empty() ? p.attachment.size() : p.records.size();
    }
    std::size_t operator()(const Binary& p) const { return p.data.size(); }
    std::size_t operator()(const BuildingCollection& p) const { return p.buildings.size(); }
    std::size_t operator()(const MessageList& p) const { return p.messages.size(); }
  };
  return std::visit(Visitor{}, payload);
}

std::string describe_difference(const Payload& expected, const Payload& actual,
                                DoubleFidelity fidelity) {
  if (expected.index() != actual.index()) return "payload types differ";
  if (expected == actual) return {};
  struct Visitor {
    const Payload& other;
    Same same;
    std::string operator()(const Text& a) const {
      return "text '" + a.value + "' != '" + std::get<Text>(other).value + "'";
    }
    std::string operator()(const IntArray& a) const {
      return first_vector_difference("ints", a.values, std::get<IntArray>(other).values);
    }
    std::string operator()(const StringArray& a) const {
      return first_vector_difference("strings", a.values, std::get<StringArray>(other).values);
    }
    std::string operator()(const ObjectArray& a) const {
      return first_vector_difference("objects", a.values, std::get<ObjectArray>(other).values,
                                     same);
    }
    std::string operator()(const Message& a) const {
      const auto& b = std::get<Message>(other);
      if (!(a.meta == b.meta)) return "message metadata differs";
      if (a.attachment != b.attachment)
        return first_vector_difference("attachment", a.attachment, b.attachment);
      return first_vector_difference("records", a.records, b.records);
    }
    std::string operator()(const Binary& a) const {
      return first_vector_difference("binary", a.data, std::get<Binary>(other).data);
    }
    std::string operator()(const BuildingCollection& a) const {
      return first_vector_difference("buildings", a.buildings,
                                     std::get<BuildingCollection>(other).buildings, same);
    }
    std::string operator()(const MessageList& a) const {
      return first_vector_difference("messages", a.messages, std::get<MessageList>(other).messages);
    }
  };
  return std::visit(Visitor{actual, Same{fidelity}}, expected);
}

}  // namespace wsb
