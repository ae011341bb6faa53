// The guard in front of xmlrpc-c 1.33.14's parser. Defects its input reaches
// before any check of ours could (found by testing: tests/xmlrpc/xmlrpc_test.cpp;
// in the server the first is a remote crash: tests/xmlrpc/xmlrpc_stack_test.cpp):
// - <i8> text that is not a 64-bit integer crashes the parser;
// - <base64> text is decoded leniently, so garbage decodes silently;
// - a DOCTYPE's entities are expanded without bound (billion laughs hangs);
// - deep element nesting overflows the stack before xmlrpc-c's nesting limit;
// - a struct parses in time quadratic in its number of members.
// One pass rejects these; it is not a parser: what it cannot vouch for is
// refused, the rest is left to xmlrpc-c (docs/servers/stacks/xmlrpc-c.md has more).
#include "xmlrpc/xmlrpc_guard.h"

#include <xmlrpc-c/base.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <xmlrpc-c/girerr.hpp>
#include <xmlrpc-c/xml.hpp>

#include "common/codec.h"
#include "xmlrpc/xmlrpc_limits.h"

namespace wsb::xmlrpc {
namespace {

[[noreturn]] void fail(std::string_view what) { throw DecodeError("xmlrpc: " + std::string(what)); }

// The common nesting limit, in elements. A <value> level costs three
// elements (<value><array><data> or <value><struct><member>); 256 admits
// xmlrpc-c's 64-value nesting limit with room to spare, far below the depth
// that overflows the stack.
constexpr std::size_t kMaxElementDepth = kMaxNestingDepth;
// kMaxStructMembers (xmlrpc_limits.h) keeps a hostile struct's quadratic
// insertion cost within a small constant factor of linear.

// Whether a byte is a base64 digit, or XML whitespace (xmlrpc-c breaks its
// base64 into CRLF-terminated lines). Written once for a byte and once for
// 16 at a time (GCC's and Clang's vector extension, SSE2 on x86-64): a
// 128 KiB attachment is checked twice a round trip, and a branch per byte
// cost 13 instructions a byte, the whole of the stack's excess over
// xmlrpc-c's own sample on an echo of it.
using Bytes16 = unsigned char __attribute__((vector_size(16)));

template <typename T>
T base64_digit(T c) {
  const T letter = static_cast<T>((c | 0x20) - 'a') < 26;
  const T decimal = static_cast<T>(c - '0') < 10;
  return static_cast<T>(letter | decimal | (c == '+') | (c == '/'));
}
template <typename T>
T xml_space(T c) {
  return static_cast<T>((c == ' ') | (c == '\t') | (c == '\r') | (c == '\n'));
}

struct Base64Counts {
  std::size_t digits = 0;
  std::size_t spaces = 0;
};

// Digits and whitespace in `text`.
Base64Counts count_base64(std::string_view text) {
  Base64Counts counts;
  std::size_t i = 0;
  // Lanes count to at most 255 (a comparison is 0 or -1 a lane), then
  // are added up.
  constexpr std::size_t kRounds = 255;
  while (text.size() - i >= sizeof(Bytes16)) {
    Bytes16 digits{};
    Bytes16 spaces{};
    for (std::size_t r = 0; r < kRounds && text.size() - i >= sizeof(Bytes16); ++r) {
      Bytes16 c;
      std::memcpy(&c, text.data() + i, sizeof c);
      digits -= base64_digit(c);
      spaces -= xml_space(c);
      i += sizeof c;
    }
    for (std::size_t lane = 0; lane < sizeof(Bytes16); ++lane) {
      counts.digits += digits[lane];
      counts.spaces += spaces[lane];
    }
  }
  for (; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    counts.digits += base64_digit(c) != 0;
    counts.spaces += xml_space(c) != 0;
  }
  return counts;
}

// Padded RFC 4648 base64 with whitespace anywhere, the same rule as
// wsb::base64_decode: before the first '=' digits and whitespace only,
// after it '=' (at most two) and whitespace only.
void check_base64(std::string_view text) {
  const std::size_t first_pad = std::min(text.find('='), text.size());
  const std::string_view data = text.substr(0, first_pad);
  const Base64Counts counts = count_base64(data);
  if (counts.digits + counts.spaces != data.size())
    fail("invalid base64: character outside the alphabet");
  std::size_t pads = 0;
  for (const char c : text.substr(first_pad)) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '=')
      ++pads;
    else if (base64_digit(u) != 0)
      fail("invalid base64: data after padding");
    else if (xml_space(u) == 0)
      fail("invalid base64: character outside the alphabet");
  }
  if (pads > 2 || (counts.digits + pads) % 4 != 0) fail("invalid base64: bad length or padding");
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

}  // namespace

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
