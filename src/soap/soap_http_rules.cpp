// The HTTP/1.1 rules gSOAP's own parser does not keep; see
// soap_http_rules.h.
#include "soap/soap_http_rules.h"

#include <array>
#include <chrono>
#include <cstring>
#include <ctime>

#include "common/http_date.h"

namespace wsb::soap {
namespace {

// What each byte may be, as bits: a token's (a field name's), a field
// value's and a request line's.
constexpr std::uint8_t kToken = 1;
constexpr std::uint8_t kValue = 2;
constexpr std::uint8_t kLine = 4;
constexpr std::uint8_t kHost = 8;

constexpr std::array<std::uint8_t, 256> kClass = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0x21; c < 0x7f; ++c) t[c] = kValue | kLine;  // VCHAR
  for (int c = 0x80; c < 0x100; ++c) t[c] = kValue;         // obs-text
  t[' '] = kValue | kLine;
  t['\t'] = kValue;
  for (int c = '0'; c <= '9'; ++c) t[c] |= kToken | kHost;
  for (int c = 'a'; c <= 'z'; ++c) t[c] |= kToken | kHost;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] |= kToken | kHost;
  for (const char c : std::string_view("!#$%&'*+-.^_`|~"))
    t[static_cast<unsigned char>(c)] |= kToken;
  // A Host value's others: unreserved, pct-encoded, sub-delims, ':' before
  // a port and an IP literal's brackets.
  for (const char c : std::string_view("-._~%!$&'()*+,;=:[]"))
    t[static_cast<unsigned char>(c)] |= kHost;
  return t;
}();

bool is(char c, std::uint8_t bits) { return (kClass[static_cast<unsigned char>(c)] & bits) != 0; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

int HeaderScan::feed(std::string_view bytes, std::size_t max_bytes) {
  std::size_t i = 0;
  const std::size_t n = bytes.size();
  while (i < n && state_ != State::done) {
    const char c = bytes[i];
    switch (state_) {
      case State::start:
        if (c != '\r' && c != '\n')
          state_ = State::request_line;
        else
          ++i;
        break;
      case State::request_line:
        while (i < n && is(bytes[i], kLine)) ++i;
        if (i == n) break;
        if (bytes[i] == '\r')
          state_ = State::request_cr;
        else if (bytes[i] == '\n')
          state_ = State::line_start;
        else
          return refuse("a control character in the request line");
        ++i;
        break;
      case State::request_cr:
      case State::value_cr:
      case State::end_cr:
        if (c != '\n') return refuse("a CR not followed by LF in the request header");
        state_ = state_ == State::end_cr ? State::done : State::line_start;
        ++i;
        break;
      case State::line_start:
        ++i;
        if (c == '\r')
          state_ = State::end_cr;
        else if (c == '\n')
          state_ = State::done;
        else if (c == ' ' || c == '\t')
          return refuse("a folded header field line (obs-fold)");
        else if (is(c, kToken))
          state_ = State::name;
        else
          return refuse("a header field line without a field name");
        break;
      case State::name:
        while (i < n && is(bytes[i], kToken)) ++i;
        if (i == n) break;
        if (bytes[i] == ':')
          state_ = State::value;
        else if (bytes[i] == ' ' || bytes[i] == '\t')
          return refuse("whitespace between a header field's name and its colon");
        else if (bytes[i] == '\r' || bytes[i] == '\n')
          return refuse("a header field line without a colon");
        else
          return refuse("an invalid character in a header field name");
        ++i;
        break;
      case State::value:
        while (i < n && is(bytes[i], kValue)) ++i;
        if (i == n) break;
        if (bytes[i] == '\r')
          state_ = State::value_cr;
        else if (bytes[i] == '\n')
          state_ = State::line_start;
        else
          return refuse("a control character in a header field value");
        ++i;
        break;
      case State::done:
        break;
    }
  }
  bytes_ += i;
  if (bytes_ > max_bytes) {
    const bool in_target = state_ == State::start || state_ == State::request_line;
    why_ = in_target ? "the request target is over the server's header limit"
                     : "the request header is over the server's limit";
    return in_target ? 414 : 431;
  }
  return 0;
}

bool other_major_version(std::string_view request_line) {
  const std::size_t n = request_line.size();
  if (n < 9 || request_line.substr(n - 9, 6) != " HTTP/" || request_line[n - 2] != '.')
    return false;
  const char major = request_line[n - 3];
  return major >= '0' && major <= '9' && major != '1';
}

void TransferCodings::add(std::string_view field_value) {
  present = true;
  while (!field_value.empty()) {
    const std::size_t comma = field_value.find(',');
    const std::string_view coding = trim(field_value.substr(0, comma));
    field_value.remove_prefix(comma == std::string_view::npos ? field_value.size() : comma + 1);
    if (coding.empty()) continue;            // a list may have empty elements
    if (chunked_last) chunked_twice = true;  // chunked must be the last, and once
    chunked_last = iequals(coding, "chunked");
    if (!chunked_last) other = true;
  }
}

bool valid_host(std::string_view value) {
  for (const char c : value)
    if (!is(c, kHost)) return false;
  return true;
}

bool to_origin_form(Context* ctx) {
  char* path = ctx->path;
  if (path[0] == '/') return true;
  std::string_view target(path);
  std::size_t scheme = 0;
  if (target.size() >= 7 && iequals(target.substr(0, 7), "http://"))
    scheme = 7;
  else if (target.size() >= 8 && iequals(target.substr(0, 8), "https://"))
    scheme = 8;
  if (scheme == 0) return false;
  const std::size_t end = target.find_first_of("/?", scheme);
  if (end == scheme) return false;  // no authority
  if (end == std::string_view::npos) {
    std::strcpy(path, "/");
    return true;
  }
  const bool query_only = target[end] == '?';
  const std::size_t rest = target.size() - end;
  // "?q" becomes "/?q", within soap::path (the target is longer).
  std::memmove(path + (query_only ? 1 : 0), path + end, rest + 1);
  if (query_only) path[0] = '/';
  return true;
}

const char* date_field() { return http_date_field().data(); }

}  // namespace wsb::soap
