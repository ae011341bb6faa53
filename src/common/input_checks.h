// Streaming checks of request bytes that a library would otherwise take
// leniently: UTF-8 (gSOAP decodes overlong forms, so "\xc0\xaf" becomes
// "/"), a DTD (gSOAP skips one silently), HTTP/1.1 chunked framing (gSOAP
// skips non-hex characters in a chunk size). Each check is fed the bytes in
// pieces, as they arrive.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

namespace wsb {

// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing
// above U+10FFFF. A character may be split between two feeds.
class Utf8Check {
 public:
  // False once the bytes so far are not a prefix of valid UTF-8.
  bool feed(std::string_view bytes);
  // True if everything fed is valid and no character is left unfinished.
  bool complete() const { return ok_ && needed_ == 0; }

 private:
  bool ok_ = true;
  std::uint8_t needed_ = 0;                   // continuation bytes still to come
  std::uint8_t lower_ = 0x80, upper_ = 0xBF;  // range of the next one
};

bool valid_utf8(std::string_view bytes);

// Finds "<!DOCTYPE" across feeds.
class DoctypeCheck {
 public:
  // False once a DOCTYPE declaration has begun.
  bool feed(std::string_view bytes);

 private:
  std::size_t matched_ = 0;
};

// HTTP/1.1 chunked framing (RFC 9112 7.1): hex sizes, optional extensions,
// CRLFs, a last chunk and trailer fields. Hands the chunks' data on.
class ChunkedCheck {
 public:
  // Feeds framing bytes; `data` receives each run of chunk data. Returns an
  // error text once the framing is malformed, else empty.
  template <class DataFn>
  std::string feed(std::string_view bytes, DataFn&& data);
  bool done() const { return state_ == State::done; }

 private:
  enum class State : std::uint8_t {
    size,
    extension,
    size_lf,
    data,
    data_cr,
    data_lf,
    trailer,
    trailer_lf,
    done,
    bad
  };
  // One framing byte; false when malformed.
  bool step(char c);

  State state_ = State::size;
  std::uint64_t left_ = 0;     // data bytes of the current chunk still to come
  bool digits_ = false;        // the current size line has a digit
  bool trailer_empty_ = true;  // the current trailer line is empty so far
};

template <class DataFn>
std::string ChunkedCheck::feed(std::string_view bytes, DataFn&& data) {
  std::size_t i = 0;
  while (i < bytes.size() && state_ != State::done) {
    if (state_ == State::data) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(left_, bytes.size() - i));
      data(bytes.substr(i, n));
      i += n;
      left_ -= n;
      if (left_ == 0) state_ = State::data_cr;
      continue;
    }
    if (!step(bytes[i++])) {
      state_ = State::bad;
      return "malformed chunked encoding";
    }
  }
  return {};
}

}  // namespace wsb
