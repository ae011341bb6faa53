// XmlTextCheck::base64_elements: the codecs' check of base64 text, by a
// search of the whole message for the start tags of base64 elements. It
// runs on every decode of a SOAP codec, so it costs under half an
// instruction a byte (AVX2): one vector pass for where a name may begin,
// one over a base64 text's run of plain characters, and the lexer
// (SimpleContentCheck) only for a text those cannot vouch for.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "common/input_checks.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace wsb {
namespace {

constexpr std::size_t npos = std::string_view::npos;

// Where the markup opened by the "<!" or "<?" at `at` ends (SimpleContentCheck's
// bang and skip states): "-->", "]]>", "?>" or, for a declaration, ">".
std::size_t markup_end(std::string_view xml, std::size_t at) {
  std::string_view until = "?>";
  std::size_t from = at + 2;
  if (xml[at + 1] == '!') {
    if (from >= xml.size()) return xml.size();
    until = xml[from] == '[' ? "]]>" : xml[from] == '-' ? "-->" : ">";
    ++from;
  }
  const std::size_t end = xml.find(until, from);
  return end == npos ? xml.size() : end + until.size();
}

// The first '<' followed by `c` ('!' or '?') in [from, to): those are rare
// in a message, '<' is not.
std::size_t next_markup(std::string_view xml, char c, std::size_t from, std::size_t to) {
  const std::size_t end = std::min(to + 1, xml.size());
  for (std::size_t at = from + 1; at < end; ++at) {
    const void* hit = std::memchr(xml.data() + at, c, end - at);
    if (hit == nullptr) break;
    at = static_cast<std::size_t>(static_cast<const char*>(hit) - xml.data());
    if (xml[at - 1] == '<') return at - 1;
  }
  return npos;
}

bool name_ends(char c) { return kXmlNameEnds[static_cast<unsigned char>(c)]; }

// Where the start tag whose local name was found at `at`, `length` bytes
// long, begins ("<" or "<prefix:"), or npos if the match is not one.
std::size_t start_tag(std::string_view xml, std::size_t at, std::size_t length) {
  constexpr std::size_t kLongestName = 128;  // SimpleContentCheck's
  if (at == 0 || at + length >= xml.size()) return npos;
  if (!name_ends(xml[at + length])) return npos;
  std::size_t lt = at - 1;
  if (xml[lt] == ':') {
    while (lt > 0 && xml[lt - 1] != '<' && xml[lt - 1] != ':' && !name_ends(xml[lt - 1])) --lt;
    if (lt == 0 || lt == at - 1 || xml[lt - 1] != '<') return npos;
    --lt;
  }
  if (xml[lt] != '<' || at + length - lt - 1 > kLongestName) return npos;
  return lt;
}

// The range of a byte of the names. For a vector test, in two
// instructions: b + bias, as signed, is above `above` if b is outside it.
struct Range {
  unsigned char lowest = 0xff;
  unsigned char highest = 0;
  void add(unsigned char b) {
    lowest = std::min(lowest, b);
    highest = std::max(highest, b);
  }
  char bias() const { return static_cast<char>(0x80 - lowest); }
  char above() const { return static_cast<char>(0x80 + (highest - lowest)); }
  bool contains(unsigned char b) const {
    return static_cast<unsigned char>(b - lowest) <= highest - lowest;
  }
};

// The base64 elements' names, and the ranges of their first two bytes,
// which the vector pass looks for after a '<' or ':'. A position it finds
// is tested against the names' first four bytes, as one word, before a
// name whole: "<wsb:author>" passes the ranges of "attachment",
// "binary" and "buildingsDocument", a hundred times in a message.
class Names {
 public:
  explicit Names(std::span<const std::string> names) : names_(names) {
    for (const std::string& name : names) {
      if (name.empty()) continue;
      ++count_;
      first.add(static_cast<unsigned char>(name[0]));
      if (name.size() == 1) {  // any byte may follow
        second.add(0);
        second.add(0xff);
      } else {
        second.add(static_cast<unsigned char>(name[1]));
      }
      if (name.size() < sizeof(std::uint32_t) || heads_used_ == heads_.size()) {
        any_head_ = true;
      } else {
        std::memcpy(&heads_[heads_used_++], name.data(), sizeof(std::uint32_t));
      }
    }
    // Unused heads repeat the first: four tests, without a loop.
    for (std::size_t k = heads_used_; k < heads_.size() && heads_used_ > 0; ++k)
      heads_[k] = heads_[0];
  }
  bool none() const { return count_ == 0; }
  // Whether a name may begin at `at`, by its first four bytes.
  bool may_begin(const char* data, std::size_t size, std::size_t at) const {
    std::uint32_t word = 0;
    if (any_head_ || size - at < sizeof word) return true;
    std::memcpy(&word, data + at, sizeof word);
    // One test, no branch per name (clang's -Wbitwise-instead-of-logical
    // wants the ints spelled out).
    return (static_cast<int>(word == heads_[0]) | static_cast<int>(word == heads_[1]) |
            static_cast<int>(word == heads_[2]) | static_cast<int>(word == heads_[3])) != 0;
  }
  // The length of the name of the start tag whose local name begins at
  // `at`, or 0 if none is there.
  std::size_t at(std::string_view xml, std::size_t at) const {
    for (const std::string& name : names_)
      if (!name.empty() && xml.substr(at, name.size()) == name &&
          start_tag(xml, at, name.size()) != npos)
        return name.size();
    return 0;
  }

  Range first;
  Range second;

 private:
  std::span<const std::string> names_;
  std::size_t count_ = 0;
  std::array<std::uint32_t, 4> heads_{};
  std::size_t heads_used_ = 0;
  bool any_head_ = false;  // a name shorter than four bytes, or more than four names
};

// The candidate (a '<' or ':') whose bit is the lowest of `hits` that
// passes the names' test of its first four bytes, or npos.
[[gnu::always_inline]] inline std::size_t first_passing(std::uint64_t hits, std::size_t base,
                                                        const char* data, std::size_t size,
                                                        const Names& names) {
  for (; hits != 0; hits &= hits - 1) {
    const std::size_t at = base + static_cast<std::size_t>(std::countr_zero(hits));
    if (names.may_begin(data, size, at + 1)) return at;
  }
  return npos;
}

// The vector passes, with SSE2 and AVX2 (x86-64 has SSE2; AVX2 is used
// where the CPU has it, and halves their instructions).
#if defined(__x86_64__)

// The first candidate that passes the names' test in the blocks from `i`
// on that end 66 bytes before `size` (each test reads two bytes further),
// or npos with `i` where the blocks ended. A candidate is a '<' or ':'
// then bytes in the names' first and second ranges; the first test is
// (b & 0xf9) == 0x38, which '8' and '>' pass too, in two instructions
// where an exact one takes three.
std::size_t candidate_sse2(const char* data, std::size_t& i, std::size_t size, const Names& names) {
  const __m128i mask = _mm_set1_epi8(static_cast<char>(0xf9)), opens = _mm_set1_epi8(0x38);
  const __m128i bias1 = _mm_set1_epi8(names.first.bias()),
                above1 = _mm_set1_epi8(names.first.above());
  const __m128i bias2 = _mm_set1_epi8(names.second.bias());
  const __m128i above2 = _mm_set1_epi8(names.second.above());
  auto load = [&](const char* at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at)); };
  auto block = [&](const char* at) {
    const __m128i open = _mm_cmpeq_epi8(_mm_and_si128(load(at), mask), opens);
    const __m128i out1 = _mm_cmpgt_epi8(_mm_add_epi8(load(at + 1), bias1), above1);
    const __m128i out2 = _mm_cmpgt_epi8(_mm_add_epi8(load(at + 2), bias2), above2);
    return _mm_andnot_si128(out2, _mm_andnot_si128(out1, open));
  };
  auto bits = [](__m128i v) { return static_cast<std::uint64_t>(_mm_movemask_epi8(v) & 0xffff); };
  for (; i + 66 <= size; i += 64) {
    const __m128i a = block(data + i), b = block(data + i + 16);
    const __m128i c = block(data + i + 32), d = block(data + i + 48);
    if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))) == 0) continue;
    const std::uint64_t hits = bits(a) | bits(b) << 16 | bits(c) << 32 | bits(d) << 48;
    if (const std::size_t at = first_passing(hits, i, data, size, names); at != npos) return at;
  }
  return npos;
}

// The AVX2 functions below, lambdas included, compile for AVX2 and run
// only where the CPU has it (use_avx2); GCC and clang spell the region
// differently.
#if defined(__clang__)
#define WSB_AVX2_BEGIN \
  _Pragma("clang attribute push(__attribute__((target(\"avx2\"))), apply_to = function)")
#define WSB_AVX2_END _Pragma("clang attribute pop")
#else
#define WSB_AVX2_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2\")")
#define WSB_AVX2_END _Pragma("GCC pop_options")
#endif

WSB_AVX2_BEGIN

// 128 bytes a round: the loop's own instructions are a fifth of a round.
std::size_t candidate_avx2(const char* data, std::size_t& i, std::size_t size, const Names& names) {
  const __m256i mask = _mm256_set1_epi8(static_cast<char>(0xf9));
  const __m256i opens = _mm256_set1_epi8(0x38);
  const __m256i bias1 = _mm256_set1_epi8(names.first.bias());
  const __m256i above1 = _mm256_set1_epi8(names.first.above());
  const __m256i bias2 = _mm256_set1_epi8(names.second.bias());
  const __m256i above2 = _mm256_set1_epi8(names.second.above());
  auto load = [&](const char* at) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
  };
  auto block = [&](const char* at) {
    const __m256i open = _mm256_cmpeq_epi8(_mm256_and_si256(load(at), mask), opens);
    const __m256i out1 = _mm256_cmpgt_epi8(_mm256_add_epi8(load(at + 1), bias1), above1);
    const __m256i out2 = _mm256_cmpgt_epi8(_mm256_add_epi8(load(at + 2), bias2), above2);
    return _mm256_andnot_si256(out2, _mm256_andnot_si256(out1, open));
  };
  auto bits = [&](__m256i v) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm256_movemask_epi8(v)));
  };
  for (; i + 130 <= size; i += 128) {
    const __m256i a = block(data + i), b = block(data + i + 32);
    const __m256i c = block(data + i + 64), d = block(data + i + 96);
    const __m256i any = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d));
    if (_mm256_testz_si256(any, any)) continue;
    if (const std::size_t at = first_passing(bits(a) | bits(b) << 32, i, data, size, names);
        at != npos)
      return at;
    if (const std::size_t at = first_passing(bits(c) | bits(d) << 32, i + 64, data, size, names);
        at != npos)
      return at;
  }
  return candidate_sse2(data, i, size, names);
}

WSB_AVX2_END

// Plain base64 text: bytes above '*' (so no whitespace, '&' or, as signed,
// bytes above 0x7f) other than '<' (0x3c) and '=' (0x3d). Other bytes
// outside the alphabet are gSOAP's to refuse. Where the 64-byte blocks at
// or after `i` first hold another, or where they end.
std::size_t plain_blocks_sse2(const char* data, std::size_t i, std::size_t size) {
  const __m128i star = _mm_set1_epi8('*'), mask = _mm_set1_epi8(static_cast<char>(0xfe));
  const __m128i lt_or_pad = _mm_set1_epi8('<');
  auto plain = [&](const char* at) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    const __m128i stop = _mm_cmpeq_epi8(_mm_and_si128(v, mask), lt_or_pad);
    return _mm_andnot_si128(stop, _mm_cmpgt_epi8(v, star));
  };
  for (; i + 64 <= size; i += 64) {
    const __m128i all = _mm_and_si128(_mm_and_si128(plain(data + i), plain(data + i + 16)),
                                      _mm_and_si128(plain(data + i + 32), plain(data + i + 48)));
    if (_mm_movemask_epi8(all) != 0xffff) break;
  }
  return i;
}

WSB_AVX2_BEGIN

std::size_t plain_blocks_avx2(const char* data, std::size_t i, std::size_t size) {
  const __m256i star = _mm256_set1_epi8('*'), mask = _mm256_set1_epi8(static_cast<char>(0xfe));
  const __m256i lt_or_pad = _mm256_set1_epi8('<');
  auto plain = [&](const char* at) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
    const __m256i stop = _mm256_cmpeq_epi8(_mm256_and_si256(v, mask), lt_or_pad);
    return _mm256_andnot_si256(stop, _mm256_cmpgt_epi8(v, star));
  };
  for (; i + 128 <= size; i += 128) {
    const __m256i all =
        _mm256_and_si256(_mm256_and_si256(plain(data + i), plain(data + i + 32)),
                         _mm256_and_si256(plain(data + i + 64), plain(data + i + 96)));
    if (_mm256_movemask_epi8(all) != -1) break;
  }
  return plain_blocks_sse2(data, i, size);
}

WSB_AVX2_END

bool use_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has && !detail::base64_search_without_avx2;
}

#endif

// Calls visit(p) for every p where xml[p - 1] may be '<' or ':' and a name
// may begin at p; visit returns where the search goes on (a '<' or ':' at
// or after it), or npos to stop it.
template <class Visit>
void for_each_candidate(std::string_view xml, const Names& names, Visit visit) {
  const char* data = xml.data();
  std::size_t i = 0;  // where the search goes on
#if defined(__x86_64__)
  const bool avx2 = use_avx2();
  for (;;) {
    const std::size_t at = avx2 ? candidate_avx2(data, i, xml.size(), names)
                                : candidate_sse2(data, i, xml.size(), names);
    if (at == npos) break;
    i = visit(at + 1);
    if (i == npos) return;
  }
#endif
  // A name ends before the document does: it is two bytes after its '<'.
  while (i + 2 < xml.size()) {
    const bool open = (static_cast<unsigned char>(data[i]) & 0xf9) == 0x38;
    if (!open || !names.first.contains(static_cast<unsigned char>(data[i + 1])) ||
        !names.second.contains(static_cast<unsigned char>(data[i + 2])) ||
        !names.may_begin(data, xml.size(), i + 1)) {
      ++i;
      continue;
    }
    i = visit(i + 1);
    if (i == npos) return;
  }
}

// The first byte at or after `from` that is not plain base64 text.
std::size_t plain_end(std::string_view xml, std::size_t from) {
  std::size_t i = from;
#if defined(__x86_64__)
  i = use_avx2() ? plain_blocks_avx2(xml.data(), i, xml.size())
                 : plain_blocks_sse2(xml.data(), i, xml.size());
#endif
  for (; i < xml.size(); ++i) {
    const auto c = static_cast<unsigned char>(xml[i]);
    if (c <= '*' || c >= 0x80 || c == '<' || c == '=') break;
  }
  return i;
}

// Where the search goes on after the well-formed base64 element whose name
// ends at `name_end`, or npos if the element is not one the vector passes
// can vouch for: whitespace or a reference in its text, markup inside it,
// wrong padding. SimpleContentCheck then decides.
std::size_t plain_element(std::string_view xml, std::size_t name_end) {
  std::size_t i = name_end;
  for (; i < xml.size() && xml[i] != '>'; ++i)
    if (xml[i] == '"' || xml[i] == '\'') {
      i = xml.find(xml[i], i + 1);
      if (i == npos) return npos;
    }
  if (i == xml.size()) return npos;
  if (xml[i - 1] == '/') return i + 1;  // empty: no text
  const std::size_t text = i + 1;
  const std::size_t pad = plain_end(xml, text);
  std::size_t end = pad;
  while (end < xml.size() && xml[end] == '=' && end - pad < 3) ++end;
  const bool whole = (end - text) % 4 == 0 && end - pad <= 2;
  if (!whole || end + 1 >= xml.size() || xml[end] != '<' || xml[end + 1] == '!' ||
      xml[end + 1] == '?')
    return npos;
  return end;
}

}  // namespace

std::string XmlTextCheck::base64_elements(bool multipart, std::span<const std::string> names,
                                          SimpleContentCheck::IsSimple is_base64,
                                          std::string_view message) {
  XmlTextCheck root(multipart);
  root.gather_ = true;
  root.text_checks_ = false;
  if (std::string why = root.feed(message); !why.empty()) return why;
  const std::string_view xml = root.root_;
  const Names table(names);
  if (table.none()) return {};
  std::size_t passed = 0;  // the markup that begins before this is passed over
  std::string error;
  for_each_candidate(xml, table, [&](std::size_t at) -> std::size_t {
    const std::size_t length = table.at(xml, at);
    if (length == 0) return at;
    // Matches inside comments, CDATA sections and PIs are passed over.
    // Markup is looked for up to a match only: without a base64 element,
    // a message costs no search for it.
    while (passed < at) {
      const std::size_t markup =
          std::min(next_markup(xml, '!', passed, at), next_markup(xml, '?', passed, at));
      passed = markup == npos ? at : markup_end(xml, markup);
    }
    if (passed > at) return passed;
    // Plain base64 text holds no markup: the search for it goes on after.
    if (const std::size_t next = plain_element(xml, at + length); next != npos)
      return passed = next;
    // The start tag and the text, up to and including the byte after the
    // next '<': what ends the text, or the markup refused inside it.
    const std::size_t lt = start_tag(xml, at, length);
    std::size_t end = xml.find('<', at + length);
    end = end == npos ? xml.size() : std::min(end + 2, xml.size());
    SimpleContentCheck check(nullptr, is_base64);
    error = check.feed(xml.substr(lt, end - lt));
    return error.empty() ? at + length : npos;
  });
  return error;
}

}  // namespace wsb
