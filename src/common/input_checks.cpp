#include "common/input_checks.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>

namespace wsb {

bool Utf8Check::feed(std::string_view bytes) {
  // ASCII eight bytes at a time: most text is, and a byte-wise check of it
  // costs a parse of a string-heavy JSON document about 60% more
  // instructions.
  constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;
  std::size_t i = 0;
  while (needed_ == 0 && bytes.size() - i >= sizeof(std::uint64_t)) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + i, sizeof word);
    if ((word & kHighBits) != 0) break;
    i += sizeof word;
  }
  for (const char ch : bytes.substr(i)) {
    if (!ok_) return false;
    const auto b = static_cast<std::uint8_t>(ch);
    if (needed_ > 0) {
      if (b < lower_ || b > upper_) return ok_ = false;
      --needed_;
      lower_ = 0x80;
      upper_ = 0xBF;
      continue;
    }
    if (b < 0x80) continue;
    // The lead byte fixes the length and the range of the second byte
    // (Table 3-7 of the Unicode standard).
    if (b >= 0xC2 && b <= 0xDF) {
      needed_ = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      needed_ = 2;
      if (b == 0xE0) lower_ = 0xA0;  // overlong
      if (b == 0xED) upper_ = 0x9F;  // surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      needed_ = 3;
      if (b == 0xF0) lower_ = 0x90;  // overlong
      if (b == 0xF4) upper_ = 0x8F;  // beyond U+10FFFF
    } else {
      return ok_ = false;  // 0x80-0xC1 (a stray continuation, overlong), 0xF5-0xFF
    }
  }
  return ok_;
}

bool valid_utf8(std::string_view bytes) {
  Utf8Check check;
  return check.feed(bytes) && check.complete();
}

bool DoctypeCheck::feed(std::string_view bytes) {
  static constexpr std::string_view kDoctype = "<!DOCTYPE";
  for (std::size_t i = 0; i < bytes.size();) {
    if (matched_ == 0) {  // between matches, on to the next '<' (memchr)
      i = bytes.find('<', i);
      if (i == std::string_view::npos) return true;
    }
    const char c = bytes[i++];
    if (c == kDoctype[matched_]) {
      if (++matched_ == kDoctype.size()) return false;
    } else {
      matched_ = c == '<' ? 1 : 0;
    }
  }
  return matched_ != kDoctype.size();
}

std::string XmlTextCheck::feed(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size() && error_.empty();) {
    const char c = bytes[i];
    switch (state_) {
      case State::preamble:  // blank lines before the first boundary
        if (c != '\r' && c != '\n') {
          // gSOAP sends an MTOM message without attachments as a plain
          // envelope.
          state_ = c == '-' ? State::boundary : State::root;
          if (c == '-') delimiter_ = "\r\n";
          continue;
        }
        ++i;
        break;
      case State::boundary:  // "--boundary" up to its line's end
        ++i;
        if (c == '\n') {
          state_ = State::part_header;
          matched_ = 2;  // the boundary line's CRLF begins the header's end
        } else if (c != '\r') {
          delimiter_ += c;
        }
        break;
      case State::part_header:  // up to the blank line
        ++i;
        matched_ = c == "\r\n\r\n"[matched_] ? matched_ + 1 : (c == '\r' ? 1 : 0);
        if (matched_ == 4) {
          state_ = State::root;
          matched_ = 0;
        }
        break;
      case State::root: {
        if (delimiter_.empty()) {  // a whole document
          text(bytes.substr(i));
          return error_;
        }
        // The root part ends at the delimiter, whose first byte (CR) does not
        // recur in it.
        std::size_t j = i;
        while (j < bytes.size() && matched_ < delimiter_.size()) {
          matched_ = bytes[j] == delimiter_[matched_] ? matched_ + 1 : (bytes[j] == '\r' ? 1 : 0);
          ++j;
        }
        text(bytes.substr(i, j - i - (matched_ == delimiter_.size() ? matched_ : 0)));
        if (matched_ == delimiter_.size()) state_ = State::done;
        i = j;
        break;
      }
      case State::done:
        return error_;
    }
  }
  return error_;
}

void XmlTextCheck::text(std::string_view bytes) {
  if (gather_) {
    if (root_.empty()) {
      root_ = bytes;
    } else {
      if (root_copy_.empty()) root_copy_ = root_;
      root_copy_ += bytes;
      root_ = root_copy_;
    }
    return;
  }
  if (text_checks_ && !utf8_.feed(bytes))
    error_ = "the message is not valid UTF-8";
  else if (text_checks_ && !doctype_.feed(bytes))
    error_ = "DTDs are not accepted";
  else if (simple_)
    error_ = simple_->feed(bytes);
}

namespace {

// "lt", "#60", "#x3C": what a reference may name without a DTD.
bool predefined_or_character(std::string_view name) {
  if (name == "lt" || name == "gt" || name == "amp" || name == "quot" || name == "apos")
    return true;
  if (!name.starts_with('#') || name.size() < 2) return false;
  const bool hex = name[1] == 'x';
  const std::string_view digits = name.substr(hex ? 2 : 1);
  if (digits.empty()) return false;
  for (const char d : digits)
    if (!(d >= '0' && d <= '9') && !(hex && ((d >= 'a' && d <= 'f') || (d >= 'A' && d <= 'F'))))
      return false;
  return true;
}

// "#x10FFFF" is the longest reference that can be valid.
constexpr std::size_t kLongestReference = 8;

}  // namespace

namespace {

// The bytes of `text` above ' ': XML whitespace is at or below it, every
// other character above (those outside the alphabet are gSOAP's to
// refuse). GCC's -O2 leaves a byte loop scalar, about 5 instructions a
// byte, most of what the check cost on a 128 KiB attachment; this tests 32
// bytes per round and counts byte by byte only in a word that holds
// whitespace, which gSOAP's base64 has none of.
std::size_t count_above_space(std::string_view text) {
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  constexpr std::uint64_t kLow = 0x7f7f7f7f7f7f7f7fULL;
  // (b & 0x7f) + 0x5f reaches 0x80 from 0x21 on, without a carry into the
  // next byte; b's own high bit covers the bytes above 0x7f.
  constexpr std::uint64_t kAdd = 0x5f5f5f5f5f5f5f5fULL;
  auto above = [&](std::size_t at) {
    std::uint64_t word;
    std::memcpy(&word, text.data() + at, sizeof word);
    return (((word & kLow) + kAdd) | word) & kHigh;
  };
  std::size_t count = 0;
  std::size_t i = 0;
  for (; text.size() - i >= 32; i += 32) {
    if ((above(i) & above(i + 8) & above(i + 16) & above(i + 24)) == kHigh)
      count += 32;
    else
      for (std::size_t w = i; w < i + 32; w += 8) count += std::popcount(above(w));
  }
  for (; i < text.size(); ++i) count += static_cast<unsigned char>(text[i]) > ' ' ? 1 : 0;
  return count;
}

}  // namespace

std::string_view Base64TextCheck::feed(std::string_view text) {
  if (pads_ == 0) {
    const std::size_t pad = std::min(text.find('='), text.size());
    chars_ += count_above_space(text.substr(0, pad));
    text.remove_prefix(pad);
  }
  for (const char c : text) {
    if (c == '=') {
      if (++pads_ > 2) return "invalid base64: more than two '='";
    } else if (static_cast<unsigned char>(c) > ' ') {
      return "invalid base64: data after the padding";
    }
  }
  return {};
}

std::string_view Base64TextCheck::finish() const {
  if ((chars_ + pads_) % 4 != 0) return "invalid base64: length not a multiple of 4";
  return {};
}

// A reference in base64 text stands for its character: "&#65;" is an 'A'.
// The predefined ones stand for characters outside the alphabet, as does
// any reference beyond ASCII: counted, and refused by gSOAP.
void SimpleContentCheck::base64_reference() {
  char c = '&';
  if (name_.starts_with('#')) {
    const bool hex = name_.size() > 1 && name_[1] == 'x';
    unsigned value = 0;
    const char* first = name_.data() + (hex ? 2 : 1);
    const auto [end, ec] =
        std::from_chars(first, name_.data() + name_.size(), value, hex ? 16 : 10);
    if (ec == std::errc{} && end == name_.data() + name_.size() && value < 0x80)
      c = static_cast<char>(value);
  }
  if (const std::string_view why = base64_->feed(c); !why.empty()) error_ = why;
}

// The base64 text ended (its end tag, or an <xop:Include> child under MTOM,
// whose text around it is whitespace).
void SimpleContentCheck::end_base64() {
  if (const std::string_view why = base64_->finish(); !why.empty()) error_ = why;
  base64_.reset();
}

namespace {

// Bytes the lexer must see inside a start tag: a table, so a tag is passed
// over in a tight loop rather than byte by byte through the switch (as a
// name is, with kXmlNameEnds).
constexpr auto kTagStops = [] {
  std::array<bool, 256> stops{};
  for (const unsigned char c : std::string_view("\"'>")) stops[c] = true;
  return stops;
}();

}  // namespace

std::string SimpleContentCheck::feed(std::string_view bytes) {
  constexpr std::size_t kLongestName = 128;
  // A codec's check (no is_simple) looks at references only in base64 text.
  const bool references = is_simple_ != nullptr;
  // Text, names, tag bodies, quoted values and end tags are most of a
  // document: each is passed over a run at a time, not byte by byte
  // through the switch.
  for (std::size_t i = 0; i < bytes.size() && error_.empty(); ++i) {
    if (state_ == State::text) {
      // memchr for '<', then for a (rarer) '&' before it.
      const std::size_t lt = std::min(bytes.find('<', i), bytes.size());
      std::size_t amp = std::string_view::npos;
      if (references || base64_) amp = bytes.substr(0, lt).find('&', i);
      const std::size_t run = i;
      i = amp == std::string_view::npos ? lt : amp;
      if (base64_) {
        if (const std::string_view why = base64_->feed(bytes.substr(run, i - run)); !why.empty()) {
          error_ = why;
          break;
        }
      }
      if (i == bytes.size()) break;
    } else if (state_ == State::name) {
      std::size_t end = i;
      while (end < bytes.size() && !kXmlNameEnds[static_cast<unsigned char>(bytes[end])]) ++end;
      // A name whole in this piece is looked at where it lies; one split
      // across pieces is gathered in name_.
      std::string_view name = bytes.substr(i, std::min(end - i, kLongestName));
      if (!name_.empty() || end == bytes.size()) {
        name_.append(bytes.substr(i, std::min(end - i, kLongestName - name_.size())));
        name = name_;
      }
      if (end == bytes.size()) break;
      i = end;
      const auto colon = name.find(':');
      const std::string_view local = name.substr(colon == std::string::npos ? 0 : colon + 1);
      opens_simple_ = is_simple_ != nullptr && is_simple_(local);
      opens_base64_ = is_base64_ != nullptr && is_base64_(local);
      if (opens_simple_ && name.data() != name_.data()) name_ = name;
      state_ = State::tag;
    } else if (state_ == State::tag) {
      std::size_t end = i;
      while (end < bytes.size() && !kTagStops[static_cast<unsigned char>(bytes[end])]) ++end;
      if (end > i) previous_ = bytes[end - 1];  // a '/' before '>' closes the element
      if (end == bytes.size()) break;
      i = end;
    } else if (state_ == State::quoted) {
      i = bytes.find(quote_, i);
      if (i == std::string_view::npos) break;
    } else if (state_ == State::end_tag) {
      i = bytes.find('>', i);
      if (i == std::string_view::npos) break;
    }
    const char c = bytes[i];
    switch (state_) {
      case State::text:
        if (c == '<') state_ = State::lt;
        if (c == '&') {
          state_ = State::reference;
          name_.clear();
        }
        break;
      case State::reference:
        if (c != ';') {
          if (name_.size() <= kLongestReference)
            name_ += c;
          else if (is_simple_ != nullptr)
            error_ = "entity reference too long";
          break;
        }
        // Without is_simple (a codec), gSOAP's reading of undeclared
        // entities is kept.
        if (is_simple_ != nullptr && !predefined_or_character(name_))
          error_ = "reference to undeclared entity &" + name_ + ";";
        else if (base64_)
          base64_reference();
        state_ = State::text;
        break;
      case State::lt:
        // A comment or CDATA section would hide base64 text from this
        // check, not from gSOAP's reader.
        if (base64_ && (c == '!' || c == '?')) {
          error_ = "markup inside an xsd:base64Binary element";
          break;
        }
        if (base64_) end_base64();
        if (c == '/') {
          state_ = State::end_tag;
          open_simple_.clear();
        } else if (c == '!') {
          state_ = State::bang;
        } else if (c == '?') {
          state_ = State::skip;
          until_ = "?>";
          matched_ = 0;
        } else if (!open_simple_.empty()) {
          error_ = "markup inside <" + open_simple_ + ">, an element of simple type";
        } else {
          name_.clear();
          state_ = State::name;
          --i;  // the name begins at c
          continue;
        }
        break;
      case State::name:  // handled above: the name ended at c
      case State::tag:
        if (c == '"' || c == '\'') {
          quote_ = c;
          state_ = State::quoted;
        } else if (c == '>') {
          if (previous_ != '/' && opens_simple_) open_simple_ = name_;
          if (previous_ != '/' && opens_base64_) base64_.emplace();
          state_ = State::text;
        }
        break;
      case State::quoted:
        if (c == quote_) state_ = State::tag;
        break;
      case State::bang:  // a comment, a CDATA section or a declaration
        until_ = c == '[' ? "]]>" : c == '-' ? "-->" : ">";
        matched_ = 0;
        state_ = State::skip;
        break;
      case State::skip:
        if (c == until_[matched_])
          ++matched_;
        else if (c != until_[0])
          matched_ = 0;
        else if (matched_ < 2 || until_[1] != until_[0])  // "]]]>" and "--->" end too
          matched_ = 1;
        if (matched_ == until_.size()) state_ = State::text;
        break;
      case State::end_tag:
        state_ = State::text;  // c is its '>'
        break;
    }
    previous_ = c;
  }
  return error_;
}

bool ChunkedCheck::step(char c) {
  auto hex = [](char h) -> int {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
  };
  switch (state_) {
    case State::size:
      if (const int d = hex(c); d >= 0) {
        if (left_ > (std::numeric_limits<std::uint64_t>::max() >> 4)) return false;
        left_ = left_ * 16 + static_cast<unsigned>(d);
        digits_ = true;
        return true;
      }
      if (!digits_) return false;
      if (c == ';' || c == ' ' || c == '\t') {
        state_ = State::extension;
        return true;
      }
      if (c != '\r') return false;
      state_ = State::size_lf;
      return true;
    case State::extension:
      if (c == '\r') state_ = State::size_lf;
      return c != '\n';
    case State::size_lf:
      if (c != '\n') return false;
      digits_ = false;
      if (left_ == 0) {
        state_ = State::trailer;
        trailer_empty_ = true;
      } else {
        state_ = State::data;
      }
      return true;
    case State::data_cr:
      state_ = State::data_lf;
      return c == '\r';
    case State::data_lf:
      state_ = State::size;
      return c == '\n';
    case State::trailer:
      if (c == '\r') {
        state_ = State::trailer_lf;
        return true;
      }
      trailer_empty_ = false;
      return c != '\n';
    case State::trailer_lf:
      if (c != '\n') return false;
      state_ = trailer_empty_ ? State::done : State::trailer;
      trailer_empty_ = true;
      return true;
    case State::data:
    case State::done:
      return true;
    case State::bad:
      return false;
  }
  return false;
}

}  // namespace wsb
