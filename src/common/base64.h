// Base64 (RFC 4648, standard alphabet, padded) for the codecs whose library
// has none of its own (RapidJSON, libxml2's reader). Backed by OpenSSL's
// EVP_EncodeBlock / EVP_DecodeBlock: about 1.7 GB/s here, where libsodium's
// constant-time codec managed 0.15 GB/s and would have dominated the
// binary payloads' figures.
#pragma once

#include <string>
#include <string_view>

#include "common/payload.h"

namespace wsb {

// Appends the encoding of `data` to `out`.
void base64_append(const std::uint8_t* data, std::size_t size, std::string& out);
std::string base64_encode(const Bytes& data);

// Replaces `out` with the decoded bytes. Whitespace (as XML pretty-printers
// and MIME line-wrapping insert) is ignored; anything else outside the
// alphabet, or bad padding, throws DecodeError.
void base64_decode(std::string_view text, Bytes& out);

}  // namespace wsb
