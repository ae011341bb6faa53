#include "xmlrpc/xmlrpc_http_head.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <string_view>
#include <vector>

#include "common/http_date.h"
#include "common/input_checks.h"

namespace wsb::xmlrpc {
namespace {

// RFC 9110 5.6.2 tchar.
constexpr std::array<bool, 256> kTchar = [] {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[static_cast<std::size_t>(c)] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[static_cast<std::size_t>(c)] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[static_cast<std::size_t>(c)] = true;
  for (const char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return kTchar[static_cast<unsigned char>(c)]; });
}

// field-vchar, SP and HTAB (RFC 9110 5.5); obs-text is admitted.
bool is_field_value_byte(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The last coding of a Transfer-Encoding list (empty elements skipped).
std::string_view last_coding(std::string_view list) {
  std::string_view last;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    if (const std::string_view item = trim_ows(list.substr(0, comma)); !item.empty()) last = item;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return last;
}

const char* reason_phrase(std::uint16_t status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

// What the request line says, or why it is refused.
struct RequestLine {
  std::uint16_t refusal = 0;
  const char* why = "";
  bool http10 = false;
  bool head_method = false;
  std::size_t scheme_at = std::string_view::npos;  // an absolute-form target's "http"
};

RequestLine parse_request_line(std::string_view line) {
  RequestLine r;
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) {
    r.refusal = 400;
    r.why = "a malformed request line";
    return r;
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  r.head_method = method == "HEAD";
  const bool target_ok = !target.empty() && std::all_of(target.begin(), target.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u != 0x7f;
  });
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!is_token(method) || !target_ok || version.size() != 8 || version.substr(0, 5) != "HTTP/" ||
      !digit(version[5]) || version[6] != '.' || !digit(version[7])) {
    r.refusal = 400;
    r.why = "a malformed request line";
    return r;
  }
  if (version[5] != '1') {
    r.refusal = 505;
    r.why = "only HTTP/1.x is served";
    return r;
  }
  r.http10 = version[7] == '0';
  // Abyss takes an absolute-form target with the scheme in lower case only.
  if (target.size() > 7 && iequals(target.substr(0, 7), "http://") && target.substr(0, 4) != "http")
    r.scheme_at = sp1 + 1;
  return r;
}

}  // namespace

RequestHead check_request_head(std::string& bytes, std::size_t max_bytes, std::size_t max_fields) {
  RequestHead h;
  const auto refuse = [&h](std::uint16_t status, const char* why) {
    h.refusal = status;
    h.why = why;
    h.length = 0;
    return h;
  };
  std::size_t blank = 0;
  while (blank < bytes.size() &&
         (bytes[blank] == '\n' ||
          (bytes[blank] == '\r' && blank + 1 < bytes.size() && bytes[blank + 1] == '\n')))
    blank += bytes[blank] == '\r' ? 2 : 1;
  if (blank > 0) bytes.erase(0, blank);

  const std::string_view all(bytes);
  RequestLine request;
  std::size_t pos = 0;
  std::size_t fields = 0;
  int hosts = 0;
  bool has_length = false;
  std::string_view length_value;
  bool has_coding = false;
  std::string_view coding;
  std::vector<std::size_t> spaces_at;  // empty, so unallocated, for every usual client
  for (bool first = true;; first = false) {
    const std::size_t nl = all.find('\n', pos);
    if (nl == std::string_view::npos || nl >= max_bytes) {
      // RFC 9112 3: a request line that has not ended is a target too long.
      if (all.size() >= max_bytes)
        return first ? refuse(414, "the request-target is too long")
                     : refuse(431, "request header fields too large");
      return h;  // the rest is yet to come
    }
    std::size_t end = nl;
    if (end > pos && all[end - 1] == '\r') --end;
    const std::string_view line = all.substr(pos, end - pos);
    const std::size_t line_at = pos;
    pos = nl + 1;
    if (first) {
      request = parse_request_line(line);
      h.head_method = request.head_method;
      if (request.refusal != 0) return refuse(request.refusal, request.why);
      if (request.scheme_at != std::string_view::npos) request.scheme_at += line_at;
      continue;
    }
    if (line.empty()) break;
    if (++fields > max_fields) return refuse(431, "too many header fields");
    if (line.front() == ' ' || line.front() == '\t')
      return refuse(400, "obsolete line folding in a header field");
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return refuse(400, "a header field without a colon");
    const std::string_view name = line.substr(0, colon);
    if (!is_token(name))
      return refuse(400, !name.empty() && (name.back() == ' ' || name.back() == '\t')
                             ? "whitespace between a header field name and its colon"
                             : "an invalid header field name");
    const std::string_view raw = line.substr(colon + 1);
    if (!std::all_of(raw.begin(), raw.end(),
                     [](char c) { return is_field_value_byte(static_cast<unsigned char>(c)); }))
      return refuse(400, "a control character in a header field value");
    // Abyss splits the name from the value at whitespace.
    if (!raw.empty() && raw.front() != ' ' && raw.front() != '\t')
      spaces_at.push_back(line_at + colon + 1);
    const std::string_view value = trim_ows(raw);
    if (iequals(name, "host")) {
      ++hosts;
      if (!valid_host(value)) return refuse(400, "an invalid Host field");  // RFC 9112 3.2
    } else if (iequals(name, "content-length")) {
      if (has_length && value != length_value)
        return refuse(400, "Content-Length fields that differ");
      std::uint64_t n = 0;
      const char* last = value.data() + value.size();
      if (const auto [ptr, ec] = std::from_chars(value.data(), last, n);
          value.empty() || ec != std::errc{} || ptr != last)
        return refuse(400, "invalid Content-Length");
      has_length = true;
      length_value = value;
      h.content_length = n;
    } else if (iequals(name, "transfer-encoding")) {
      has_coding = true;
      if (const std::string_view c = last_coding(value); !c.empty()) coding = c;
    }
  }
  if (has_coding) {
    // RFC 9112 6.1 and 6.3: framing a body by anything else is unsafe.
    if (request.http10) return refuse(400, "Transfer-Encoding in an HTTP/1.0 request");
    if (!iequals(coding, "chunked"))
      return refuse(400, "a Transfer-Encoding whose final coding is not chunked");
    if (has_length) return refuse(400, "both Transfer-Encoding and Content-Length");
    return refuse(411, "chunked request bodies are not accepted: send a Content-Length");
  }
  if (hosts > 1 || (hosts == 0 && !request.http10))
    return refuse(400, hosts > 1 ? "more than one Host field" : "no Host field");
  // Rewrites, back to front so the positions hold.
  for (auto at = spaces_at.rbegin(); at != spaces_at.rend(); ++at) bytes.insert(*at, 1, ' ');
  if (request.scheme_at != std::string_view::npos)
    for (std::size_t i = 0; i < 4; ++i)
      bytes[request.scheme_at + i] = static_cast<char>(bytes[request.scheme_at + i] | 0x20);
  h.length = pos + spaces_at.size();
  if (h.length > max_bytes) return refuse(431, "request header fields too large");
  return h;
}

std::string date_field(std::time_t now) {
  char field[35];
  format_http_date_field(now, field);
  return std::string(field, sizeof field) + "\r\n";
}

std::string refusal_reply(std::uint16_t status, const char* why, bool head_method) {
  const std::string body = std::string(why) + "\n";
  std::string reply = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
                      "\r\nConnection: close\r\n" + date_field(std::time(nullptr)) +
                      "Content-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
                      "\r\n\r\n";
  if (!head_method) reply += body;
  return reply;
}

}  // namespace wsb::xmlrpc
