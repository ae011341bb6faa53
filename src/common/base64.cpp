#include "common/base64.h"

#include <openssl/evp.h>

#include <algorithm>

#include "common/codec.h"

namespace wsb {
namespace {

// Every base64 character is above ' ', every whitespace character at or
// below it: one comparison per byte, which the compiler vectorises.
bool has_space(std::string_view text) {
  unsigned char low = 0xff;
  for (const char c : text) low = std::min(low, static_cast<unsigned char>(c));
  return low <= ' ';
}

// EVP_DecodeBlock takes int lengths; it also tolerates '=' inside the text
// and leaves padding bytes in its count, so padding is checked here.
void decode_compact(std::string_view text, Bytes& out) {
  if (text.size() % 4 != 0) throw DecodeError("invalid base64: length not a multiple of 4");
  if (text.size() > static_cast<std::size_t>(INT32_MAX) / 4 * 3)
    throw DecodeError("base64 text too large");
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  if (text.substr(0, text.size() - padding).find('=') != std::string_view::npos)
    throw DecodeError("invalid base64: padding inside the text");
  out.resize(text.size() / 4 * 3);
  if (text.empty()) return;
  const int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) throw DecodeError("invalid base64: character outside the alphabet");
  out.resize(static_cast<std::size_t>(n) - padding);
}

}  // namespace

void base64_append(const std::uint8_t* data, std::size_t size, std::string& out) {
  const std::size_t old = out.size();
  out.resize(old + (size + 2) / 3 * 4 + 1);  // EVP_EncodeBlock writes a NUL
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + old), data,
                                static_cast<int>(size));
  out.resize(old + static_cast<std::size_t>(n));
}

std::string base64_encode(const Bytes& data) {
  std::string out;
  base64_append(data.data(), data.size(), out);
  return out;
}

void base64_decode(std::string_view text, Bytes& out) {
  if (!has_space(text)) return decode_compact(text, out);
  // Branch-free compaction: libxml2 breaks base64 lines every 72 characters,
  // so XML bodies always take this path.
  std::string compact(text.size(), '\0');
  std::size_t n = 0;
  for (const char c : text) {
    compact[n] = c;
    n += (c != ' ' && c != '\t' && c != '\r' && c != '\n') ? 1 : 0;
  }
  compact.resize(n);
  decode_compact(compact, out);
}

}  // namespace wsb
