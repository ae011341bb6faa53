#include "rest/http_negotiation.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace wsb::rest {
namespace {

struct MediaType {
  std::string_view type;
  std::string_view subtype;
};

// Indexed by Format.
constexpr std::array<MediaType, 4> kMediaTypes = {{
    {"application", "json"},
    {"application", "xml"},
    {"application", "x-protobuf"},
    {"text", "plain"},
}};

// Tie-break order after `preferred`.
constexpr std::array<Format, 4> kOrder = {Format::json, Format::xml, Format::protobuf,
                                          Format::text};

bool is_ows(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// Splits "type/subtype" (parameters already cut off); false if malformed.
bool split_media_type(std::string_view s, MediaType& out) {
  const auto slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == s.size()) return false;
  out.type = trim(s.substr(0, slash));
  out.subtype = trim(s.substr(slash + 1));
  return !out.type.empty() && !out.subtype.empty();
}

// The q parameter of a media range ("q=0.5"); 1 if absent, nullopt if
// malformed or out of [0, 1].
std::optional<double> quality(std::string_view params) {
  double q = 1.0;
  while (!params.empty()) {
    const auto semi = params.find(';');
    const std::string_view param = trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    if (param.size() < 2 || lower(param[0]) != 'q' || param[1] != '=') continue;
    const std::string_view value = param.substr(2);
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), q);
    if (value.empty() || ec != std::errc{} || end != value.data() + value.size() || q < 0.0 ||
        q > 1.0)
      return std::nullopt;
  }
  return q;
}

}  // namespace

std::string_view media_type(Format format) {
  switch (format) {
    case Format::json:
      return "application/json";
    case Format::xml:
      return "application/xml";
    case Format::protobuf:
      return "application/x-protobuf";
    case Format::text:
      return "text/plain; charset=utf-8";
  }
  return {};
}

std::string_view codec_name(Format format) {
  switch (format) {
    case Format::json:
      return "json";
    case Format::xml:
      return "xml";
    case Format::protobuf:
      return "protobuf";
    case Format::text:
      return "text";
  }
  return {};
}

std::optional<Format> format_of_codec(std::string_view codec) {
  for (const Format f : kOrder)
    if (codec == codec_name(f)) return f;
  return std::nullopt;
}

std::optional<Format> format_of_content_type(std::string_view content_type) {
  content_type = trim(content_type.substr(0, content_type.find(';')));
  if (content_type.empty()) return Format::json;
  MediaType m;
  if (!split_media_type(content_type, m)) return std::nullopt;
  for (const Format f : kOrder) {
    const MediaType& known = kMediaTypes[static_cast<std::size_t>(f)];
    if (iequals(m.type, known.type) && iequals(m.subtype, known.subtype)) return f;
  }
  return std::nullopt;
}

std::optional<Format> negotiate(std::string_view accept, bool text_allowed, Format preferred) {
  if (trim(accept).empty()) return preferred;
  // What clients send most: exactly one of the binary-safe types, which
  // the ranges below would pick alone (a tenth of their instructions).
  for (const Format f : {Format::json, Format::xml, Format::protobuf})
    if (accept == media_type(f)) return f;
  // Per format: the q of the most specific matching range so far.
  std::array<double, 4> q{};
  std::array<int, 4> specificity{};
  while (!accept.empty()) {
    const auto comma = accept.find(',');
    const std::string_view range = trim(accept.substr(0, comma));
    accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
    const auto semi = range.find(';');
    MediaType m;
    if (!split_media_type(range.substr(0, semi), m)) continue;  // malformed: ignored
    const auto range_q =
        quality(semi == std::string_view::npos ? std::string_view() : range.substr(semi + 1));
    if (!range_q) continue;
    for (std::size_t f = 0; f < kMediaTypes.size(); ++f) {
      int s = 0;
      if (m.type == "*" && m.subtype == "*")
        s = 1;
      else if (iequals(m.type, kMediaTypes[f].type) && m.subtype == "*")
        s = 2;
      else if (iequals(m.type, kMediaTypes[f].type) && iequals(m.subtype, kMediaTypes[f].subtype))
        s = 3;
      if (s > specificity[f]) {
        specificity[f] = s;
        q[f] = *range_q;
      }
    }
  }
  if (!text_allowed) q[static_cast<std::size_t>(Format::text)] = 0.0;
  std::optional<Format> best;
  double best_q = 0.0;
  for (const Format f : kOrder) {
    if (q[static_cast<std::size_t>(f)] > best_q) {
      best_q = q[static_cast<std::size_t>(f)];
      best = f;
    }
  }
  if (best && q[static_cast<std::size_t>(preferred)] == best_q) return preferred;
  return best;
}

}  // namespace wsb::rest
