#include "conformance_cases.h"

#include <limits>

namespace wsb::testing {
namespace {

// XML specials, quotes, and 2-, 3- and 4-byte UTF-8.
const std::string kNasty = "a<b>&c\"d'e \xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80 ]]> &amp;";

Record edge_record(std::int64_t i64, std::int32_t i32, std::int16_t i16, std::string text) {
  Record r;
  r.title = text;
  r.author = "";
  r.body = std::move(text);
  r.sequence = i64;
  r.created = -i64 - 1;
  r.priority = i32;
  r.category = -i32 - 1;
  r.flags = 0;
  r.ttl = i16;
  return r;
}

}  // namespace

Bytes all_byte_values() {
  Bytes b(256);
  for (int i = 0; i < 256; ++i) b[i] = static_cast<std::uint8_t>(i);
  return b;
}

namespace {

std::vector<NamedPayload> make_conformance_payloads() {
  using I32 = std::numeric_limits<std::int32_t>;
  using I64 = std::numeric_limits<std::int64_t>;
  using I16 = std::numeric_limits<std::int16_t>;
  using Dbl = std::numeric_limits<double>;
  std::vector<NamedPayload> cases = {
      {"text_empty", Text{""}},
      {"text_nasty", Text{kNasty}},
      {"ints_empty", IntArray{}},
      {"ints_limits", IntArray{{I32::min(), -1, 0, 1, I32::max()}}},
      {"strings_empty_array", StringArray{}},
      {"strings_edge", StringArray{{"", kNasty, "plain", ""}}},
      {"objects_empty", ObjectArray{}},
      {"objects_doubles", ObjectArray{{{I32::min(), "", 0.1, true},
                                       {I32::max(), kNasty, 1.0 / 3.0, false},
                                       {0, "x", -2.2250738585072014e-308, true},
                                       {1, "y", Dbl::max(), false},
                                       {2, "z", Dbl::denorm_min(), true},
                                       {3, "w", 123456789.12345678, false},
                                       {4, "v", -0.0, true}}}},
      {"message_empty", Message{}},
      {"message_records", Message{{kNasty, "", "token", I64::min()},
                                  {edge_record(I64::max(), I32::max(), I16::max(), kNasty),
                                   edge_record(I64::min() + 1, I32::min() + 1, I16::min(), "")},
                                  {}}},
      {"message_attachment", Message{{"r", "s", "t", I64::max()}, {}, all_byte_values()}},
      {"message_both",
       Message{{"r", "s", "t", 0}, {edge_record(0, 0, 0, "body")}, all_byte_values()}},
      {"binary_empty", Binary{}},
      {"binary_all_bytes", Binary{all_byte_values()}},
      {"binary_odd_length", Binary{{0x00, 0xff, 0x7f}}},
      {"message_list_empty", MessageList{}},
      {"message_list",
       MessageList{{Message{{"r", "s", "t", 1}, {edge_record(2, 3, 4, kNasty)}, {}},
                    Message{{"r", "s", "t", 2}, {}, all_byte_values()}, Message{}}}},
      {"gml_empty", BuildingCollection{}},
      // GML's constraints hold (gml:id an NCName, a closed ring of 4 or
      // more points); the values are edge cases.
      {"gml_edge",
       BuildingCollection{
           {{"b-1", kNasty, 0.30000000000000004, I32::max(), {{0, 0}, {1, 0}, {0, 1}, {0, 0}}},
            {"_.x",
             "",
             -1e-300,
             0,
             {{1.0 / 3.0, -2.0 / 3.0},
              {1e300, -1e-300},
              {-0.0, Dbl::denorm_min()},
              {1.0 / 3.0, -2.0 / 3.0}}}}}},
  };
  // Both string shapes: plain (the studies' text) and escaped.
  for (const char* label :
       {"text", "ints/200", "strings/200", "objects/200", "message-a/100", "message-b/128KiB",
        "binary/1KiB", "gml/3", "strings/200:escaped", "objects/200:escaped",
        "message-a/100:escaped", "message-b/128KiB:escaped", "gml/3:escaped"}) {
    const PayloadSpec spec = parse_spec(label);
    std::string name = "generated_" + spec.label();
    for (auto& c : name)
      if (c == '/' || c == '-' || c == ':') c = '_';
    cases.push_back({name, generate(spec)});
  }
  return cases;
}

}  // namespace

const std::vector<NamedPayload>& conformance_payloads() {
  static const std::vector<NamedPayload> cases = make_conformance_payloads();
  return cases;
}

}  // namespace wsb::testing
