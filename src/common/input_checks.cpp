#include "common/input_checks.h"

#include <algorithm>
#include <limits>

namespace wsb {

bool Utf8Check::feed(std::string_view bytes) {
  for (const char ch : bytes) {
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
  for (const char c : bytes) {
    if (matched_ == kDoctype.size()) return false;
    if (c == kDoctype[matched_]) {
      ++matched_;
    } else {
      matched_ = c == '<' ? 1 : 0;
    }
  }
  return matched_ != kDoctype.size();
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
