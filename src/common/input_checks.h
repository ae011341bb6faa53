// Streaming checks of request bytes that a library would otherwise take
// leniently: UTF-8 (gSOAP decodes overlong forms, so "\xc0\xaf" becomes
// "/"), a DTD (gSOAP skips one silently), HTTP/1.1 chunked framing (gSOAP
// skips non-hex characters in a chunk size). Each check is fed the bytes in
// pieces, as they arrive. And one whole-value check: a Host field's value
// (valid_host; Beast and Abyss take any).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace wsb {

// True if `host` is a valid Host field value (RFC 9110 7.2: uri-host
// [":" port]; empty when the target has no authority): the characters of
// a reg-name, an IPv4 address or a bracketed IPv6 literal, and a port.
inline bool valid_host(std::string_view host) {
  for (const char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("-._~!$&'()*+,;=:[]%").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

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

// The lexical form of xsd:base64Binary (RFC 4648 padded base64, whitespace
// anywhere), fed the element's text in pieces. gSOAP's reader stops at the
// first '=' and skips the rest of the text, and decodes an unpadded tail,
// so "AAA=A", "A===" and "AAAAA" would decode; its alphabet check stays
// gSOAP's. Counting is all it does: a run of text costs a vectorised pass.
class Base64TextCheck {
 public:
  // Empty, or why the text so far is not base64.
  std::string_view feed(std::string_view text);
  // One character of the text (a resolved character reference).
  std::string_view feed(char c) { return feed(std::string_view(&c, 1)); }
  // Empty, or why the text, now complete, is not base64.
  std::string_view finish() const;

 private:
  std::size_t chars_ = 0;  // non-whitespace characters before the padding
  std::size_t pads_ = 0;   // '=' so far
};

namespace detail {
// Set by tests: XmlTextCheck::base64_elements uses SSE2 alone, as on a CPU
// without AVX2, so each of its vector passes can be tested.
inline bool base64_search_without_avx2 = false;
}  // namespace detail

// Bytes that end a start tag's name.
inline constexpr auto kXmlNameEnds = [] {
  std::array<bool, 256> ends{};
  for (const unsigned char c : std::string_view(" \t\r\n/>")) ends[c] = true;
  return ends;
}();

// Elements of simple type (xsd:string, xsd:int, ...) hold text only (XML
// Schema 1.0 part 1, 3.3.4: no element children). gSOAP reads markup
// inside one as part of its text, so "<name><b>x</b></name>" arrives as
// the string "<b>x</b>", indistinguishable from escaped "&lt;b&gt;". This
// lexer, fed the document in pieces, refuses a start tag inside an element
// whose local name `is_simple` says is of simple type. It also refuses a
// reference to an entity no DTD declared (not well-formed XML, which gSOAP
// reads as U+007F): only the five predefined ones and character references
// remain. With `is_base64`, the text of the elements it names is held to
// xsd:base64Binary's lexical form (Base64TextCheck); without `is_simple`
// only that is checked.
class SimpleContentCheck {
 public:
  using IsSimple = bool (*)(std::string_view local_name);
  explicit SimpleContentCheck(IsSimple is_simple, IsSimple is_base64 = nullptr)
      : is_simple_(is_simple), is_base64_(is_base64) {}
  // Empty, or why the document is refused.
  std::string feed(std::string_view bytes);

 private:
  enum class State : std::uint8_t { text, reference, lt, name, tag, quoted, bang, skip, end_tag };
  void base64_reference();
  void end_base64();

  IsSimple is_simple_;
  IsSimple is_base64_;
  State state_ = State::text;
  std::string name_;           // the start tag's or reference's name so far
  bool opens_simple_ = false;  // the start tag being read is of a simple element
  std::string_view until_;     // what ends a comment, CDATA section or PI
  std::size_t matched_ = 0;
  char quote_ = 0;
  char previous_ = 0;
  std::string open_simple_;  // the simple element we are inside, if any
  bool opens_base64_ = false;
  std::optional<Base64TextCheck> base64_;  // inside a base64 element's text
  std::string error_;
};

// The text of an XML document, fed in pieces: valid UTF-8 and no DTD. For
// a multipart (MTOM) package only the root part, the XML, is text: the
// attachments are binary. A `multipart` body that does not begin with a
// boundary is taken as a whole document.
class XmlTextCheck {
 public:
  XmlTextCheck() = default;
  // With `is_simple`, markup inside elements of simple type is refused too,
  // with `is_base64` malformed base64 text (SimpleContentCheck).
  explicit XmlTextCheck(bool multipart, SimpleContentCheck::IsSimple is_simple = nullptr,
                        SimpleContentCheck::IsSimple is_base64 = nullptr)
      : state_(multipart ? State::preamble : State::root) {
    if (is_simple != nullptr || is_base64 != nullptr) simple_.emplace(is_simple, is_base64);
  }
  // Only the base64 text of a document, or of a package's root part: the
  // codecs keep gSOAP's other leniencies (docs/reference/codecs.md).
  static XmlTextCheck base64_only(bool multipart, SimpleContentCheck::IsSimple is_base64) {
    XmlTextCheck check(multipart, nullptr, is_base64);
    check.text_checks_ = false;
    return check;
  }
  // The same check as base64_only's, of a whole `message` at once: rather
  // than lex every tag, it searches for the start tags of the `names`
  // (those `is_base64` accepts) and checks their text, lexing only a text
  // that is not plain base64 (base64_elements.cpp). Matches inside
  // comments, CDATA sections and PIs, found by a search for "<!" and "<?",
  // are passed over; '<' is in no attribute value or text of well-formed XML.
  static std::string base64_elements(bool multipart, std::span<const std::string> names,
                                     SimpleContentCheck::IsSimple is_base64,
                                     std::string_view message);
  // Empty, or why the text is refused (from the first failure on).
  std::string feed(std::string_view bytes);

 private:
  enum class State : std::uint8_t { preamble, boundary, part_header, root, done };
  void text(std::string_view bytes);

  State state_ = State::root;
  std::string delimiter_;  // "\r\n--" and the boundary
  std::size_t matched_ = 0;
  Utf8Check utf8_;
  DoctypeCheck doctype_;
  std::optional<SimpleContentCheck> simple_;
  bool text_checks_ = true;  // UTF-8 and DTD
  bool gather_ = false;      // base64_elements: the root text is kept in root_
  std::string_view root_;
  std::string root_copy_;  // a root part in more than one piece
  std::string error_;
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
  // How many bytes of the last feed() are the message's: all of them,
  // unless its last chunk ended inside them.
  std::size_t used() const { return used_; }

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
  std::size_t used_ = 0;
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
      used_ = i;
      return "malformed chunked encoding";
    }
  }
  used_ = i;
  return {};
}

}  // namespace wsb
