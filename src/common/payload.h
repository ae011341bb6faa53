// The payload model shared by every codec, protocol and benchmark.
//
// Each entry of the payload catalogue (docs/reference/payloads.md) maps to one
// alternative of Payload.
// The model is plain C++ so that "what was sent" and "what was decoded" can be
// compared with operator== regardless of wire format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace wsb {

using Bytes = std::vector<std::uint8_t>;

struct Text {
  std::string value;
  bool operator==(const Text&) const = default;
};

struct IntArray {
  std::vector<std::int32_t> values;
  bool operator==(const IntArray&) const = default;
};

struct StringArray {
  std::vector<std::string> values;
  bool operator==(const StringArray&) const = default;
};

// cai-ottosson Table 5: an id, a short name, a floating-point value, a boolean.
struct Object {
  std::int32_t id = 0;
  std::string name;
  double value = 0.0;
  bool active = false;
  bool operator==(const Object&) const = default;
};

struct ObjectArray {
  std::vector<Object> values;
  bool operator==(const ObjectArray&) const = default;
};

// aihkisalo-paaso Fig. 1: the application metadata common to messages A and B.
struct Metadata {
  std::string recipient;
  std::string sender;
  std::string auth_token;
  std::int64_t timestamp = 0;  // nanoseconds since the epoch
  bool operator==(const Metadata&) const = default;
};

// One of message A's 100 payload elements: 150 bytes of text in three
// 50-byte string fields and 30 bytes of integer data (2 x int64, 3 x int32,
// 1 x int16), i.e. 180 raw bytes per record and 18,000 per message.
struct Record {
  std::string title;
  std::string author;
  std::string body;
  std::int64_t sequence = 0;
  std::int64_t created = 0;
  std::int32_t priority = 0;
  std::int32_t category = 0;
  std::int32_t flags = 0;
  std::int16_t ttl = 0;
  bool operator==(const Record&) const = default;
};

// Message A carries records and no attachment; message B carries an
// attachment and no records. One type keeps every codec's schema single.
struct Message {
  Metadata meta;
  std::vector<Record> records;
  Bytes attachment;
  bool operator==(const Message&) const = default;
};

struct Binary {
  Bytes data;
  bool operator==(const Binary&) const = default;
};

struct Point {
  double x = 0.0;
  double y = 0.0;
  bool operator==(const Point&) const = default;
};

// cha-et-al: a building footprint, about 1 KB when written as GML.
struct Building {
  std::string id;
  std::string name;
  double height = 0.0;
  std::int32_t floors = 0;
  std::vector<Point> footprint;  // closed ring: first point == last point
  bool operator==(const Building&) const = default;
};

struct BuildingCollection {
  std::vector<Building> buildings;
  bool operator==(const BuildingCollection&) const = default;
};

// What the messaging service's "receive" returns: every queued message,
// oldest first. Not a catalogue entry; it exists so every codec can carry
// the reply of E5's receive operation.
struct MessageList {
  std::vector<Message> messages;
  bool operator==(const MessageList&) const = default;
};

using Payload = std::variant<Text, IntArray, StringArray, ObjectArray, Message, Binary,
                             BuildingCollection, MessageList>;

// Catalogue entries. message-a and message-b share the Message type.
enum class Kind { text, ints, strings, objects, message_a, message_b, binary, gml };

std::string_view kind_name(Kind kind);
// Throws std::invalid_argument for an unknown name.
Kind kind_from_name(std::string_view name);

// The text in generated strings. `plain` (the default) is ASCII letters,
// digits and spaces, the shape of the studies' payloads. `escaped` makes
// every kSpecialStringPeriod-th string mix in XML specials and 2- and 3-byte
// UTF-8, so each codec's escaping path is measured too.
enum class Strings { plain, escaped };

std::string_view strings_name(Strings strings);
// Throws std::invalid_argument for an unknown name.
Strings strings_from_name(std::string_view name);

// Whether the kind has generated strings, i.e. whether `Strings` changes it
// (not for text, ints and binary).
bool has_generated_strings(Kind kind);

// A catalogue entry and its size: item count for arrays, record count for
// message-a, attachment bytes for message-b, bytes for binary, building
// count for gml; ignored for text.
struct PayloadSpec {
  Kind kind = Kind::text;
  std::size_t n = 0;
  Strings strings = Strings::plain;

  // Stable label used in benchmark names, e.g. "ints/3200", "binary/1MiB",
  // "strings/800:escaped". The suffix appears only where it changes the
  // payload, so equal labels always mean equal payloads.
  std::string label() const;
  bool operator==(const PayloadSpec&) const = default;
};

inline constexpr std::string_view kEscapedSuffix = ":escaped";

// Parses a label as produced by PayloadSpec::label(); throws
// std::invalid_argument on malformed input (including ":escaped" on a kind
// without generated strings).
PayloadSpec parse_spec(std::string_view label);

inline constexpr std::uint64_t kDefaultSeed = 0x5eed'2009'0001ULL;

// In Strings::escaped payloads, every 8th generated string carries XML
// special characters and 2- and 3-byte UTF-8; the rest are plain ASCII.
// 4-byte UTF-8 (outside the Basic Multilingual Plane) is left to the edge-case
// tests: xmlrpc-c cannot carry it, and the catalogue must fit every codec.
inline constexpr std::size_t kSpecialStringPeriod = 8;

// Deterministic: the same spec and seed give the same payload with any
// compiler (splitmix64, no std:: distributions, which are
// implementation-defined); gml coordinates also go through libm's sin/cos.
Payload generate(const PayloadSpec& spec, std::uint64_t seed = kDefaultSeed);

// Bytes of application data the payload carries (string bytes, integer and
// floating-point widths, binary length), independent of any encoding: the
// size a memcpy floor copies and the denominator of overhead ratios.
std::size_t raw_size(const Payload& payload);

// Items a benchmark reports per operation (array elements, records, bytes
// of a binary, buildings; 1 for text).
std::size_t item_count(const Payload& payload);

// How closely two doubles must agree for payloads to count as equal.
// The default is bit-exact (==). A codec whose library cannot round-trip
// doubles exactly declares its documented loss instead: values agree if
// |a - b| <= relative * max(|a|, |b|), or if both are below `tiny` in
// magnitude (where such libraries lose all precision).
struct DoubleFidelity {
  double relative = 0.0;
  double tiny = 0.0;
  bool exact() const { return relative == 0.0 && tiny == 0.0; }
};

// Short human description of the first difference, or empty if equal (with
// doubles compared under `fidelity`). Used by verification so a mismatch
// says where it is, not just that it is.
std::string describe_difference(const Payload& expected, const Payload& actual,
                                DoubleFidelity fidelity = {});

}  // namespace wsb
