// Requests with a large stretch of body, streamed a piece at a time so that
// the client's own memory stays small beside the server's in the same
// process, and what a server costs in resident memory while it reads them
// (tests/servers/body_memory_test, framing_memory_test).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "common/codec.h"
#include "common/payload.h"
#include "common/rpc_binding.h"
#include "common/transport.h"
#include "process_memory.h"
#include "wire_peer.h"

namespace wsb::testing {

// ASan's quarantine keeps freed blocks resident (256 MiB by default): RSS
// would measure the sanitizer's allocator, not the server's.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kRssMeasurable = false;
#else
inline constexpr bool kRssMeasurable = true;
#endif
inline constexpr char kRssUnderAsan[] = "RSS under AddressSanitizer measures its quarantine";

// This process's peak RSS growth since construction.
class PeakRss {
 public:
  PeakRss() : reset_(reset_peak_rss()), before_kb_(status_kb("VmRSS")) {}
  bool reset() const { return reset_; }
  std::uint64_t grown_bytes() const {
    const std::uint64_t peak_kb = status_kb("VmHWM");
    return (peak_kb > before_kb_ ? peak_kb - before_kb_ : 0) * 1024;
  }

 private:
  bool reset_;
  std::uint64_t before_kb_;
};

// The limits the memory tests give a server: small, so that a case takes
// seconds.
inline constexpr std::size_t kMemoryMaxBody = std::size_t{32} << 20;
inline constexpr std::size_t kMemoryMaxHeader = 16 * 1024;
inline ServerOptions memory_test_options() {
  ServerOptions options;
  options.limits.max_body_bytes = kMemoryMaxBody;
  options.limits.max_header_bytes = kMemoryMaxHeader;
  return options;
}

inline std::string mib(std::uint64_t bytes) {
  std::ostringstream out;
  out.precision(1);
  out << std::fixed << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return out.str();
}

// A request of the stack's native codec whose body holds `pad` bytes, sent
// in pieces, between `before` and `after`.
struct PaddedCall {
  std::string request_line;  // "POST /RPC2 HTTP/1.1"
  std::string fields;        // each with its CRLF
  std::string before;
  std::string after;
};

// The codec a stack carries natively: REST with JSON where it has it (the
// beast stacks, whose other codecs ride the common transport), else its
// only one.
inline const CodecEntry& native_codec(const std::string& stack) {
  const auto& codecs = find_stack(stack).codecs;
  return find_codec(std::ranges::find(codecs, "json") != codecs.end() ? "json" : codecs.front());
}

// What stands for the padding in an encoded body.
inline constexpr std::string_view kPadMark = "@@PAD@@";

inline PaddedCall split_at_mark(std::string request_line, std::string fields,
                                const std::string& body) {
  const std::size_t at = body.find(kPadMark);
  return {std::move(request_line), std::move(fields), body.substr(0, at),
          body.substr(at + kPadMark.size())};
}

// The RPC call `args` as the stack's client puts it on the wire, its
// encoding `transform`ed to place the mark.
template <typename Transform>
PaddedCall rpc_call(const CodecEntry& entry, const CallArgs& args, Transform transform) {
  auto rpc = entry.make_rpc();
  std::string body;
  rpc->encode_call(args, body);
  std::string fields = "Content-Type: " + rpc->call_content_type() + "\r\n";
  if (const auto [name, value] = rpc->call_header(); !name.empty())
    fields += std::string(name) + ": " + std::string(value) + "\r\n";
  return split_at_mark("POST " + std::string(rpc->path()) + " HTTP/1.1", fields, transform(body));
}

// ping, whose padding the server reads and then has no use for: what it
// holds is what its framing holds. REST: GET /ping with a body the route
// ignores; an RPC call: a comment before the document's root.
inline PaddedCall padded_ping(const std::string& stack) {
  const CodecEntry& entry = native_codec(stack);
  if (!entry.make_rpc)
    return {"GET /ping HTTP/1.1", "Content-Type: application/octet-stream\r\n", "", ""};
  return rpc_call(entry, CallArgs{.op = Operation::ping}, [](std::string body) {
    const std::size_t declaration = body.find("?>");
    const std::size_t at = declaration == std::string::npos ? 0 : declaration + 2;
    return body.insert(at, "<!--" + std::string(kPadMark) + "-->");
  });
}

// echo of a text that is the padding: the server holds it, decoded and in
// its reply.
inline PaddedCall padded_echo(const std::string& stack) {
  const CodecEntry& entry = native_codec(stack);
  const Payload text{Text{std::string(kPadMark)}};
  if (entry.make_rpc)
    return rpc_call(entry, CallArgs{.op = Operation::echo, .payload = &text},
                    [](std::string body) { return body; });
  auto codec = entry.make();
  std::string body;
  codec->encode(text, body);
  return split_at_mark("POST /echo HTTP/1.1", "Content-Type: " + codec->content_type() + "\r\n",
                       body);
}

enum class Framing { declared, chunked, chunked_trailer };

// xmlrpc-c's handler reads no chunked body: its front answers one with 411
// before reading it (docs/servers/stacks/xmlrpc-c.md), which bounds what
// any chunked framing costs it.
inline bool refuses_chunked(const std::string& stack) { return stack == "xmlrpc-c"; }
inline constexpr int kLengthRequired = 411;

inline std::string chunk_size_line(std::size_t n) {
  std::ostringstream line;
  line << std::hex << n << "\r\n";
  return line.str();
}

// Sends `call` with `pad` bytes of 'a' as padding, 1 MiB a piece (a chunk
// each when chunked); false once the server stops taking it.
inline bool send_padded(WirePeer& peer, const PaddedCall& call, std::size_t pad, Framing framing,
                        const std::string& more_fields = "") {
  static const std::string piece(std::size_t{1} << 20, 'a');
  std::string head = call.request_line + "\r\nHost: localhost\r\n" + call.fields + more_fields;
  if (framing == Framing::declared)
    head += "Content-Length: " + std::to_string(call.before.size() + pad + call.after.size()) +
            "\r\n\r\n";
  else
    head += "Transfer-Encoding: chunked\r\n\r\n";
  const auto send_part = [&](std::string_view part) {
    if (framing == Framing::declared || part.empty()) return peer.send(part);
    return peer.send(chunk_size_line(part.size())) && peer.send(part) && peer.send("\r\n");
  };
  bool open = peer.send(head) && send_part(call.before);
  for (std::size_t sent = 0; open && sent < pad; sent += piece.size())
    open = send_part(std::string_view(piece).substr(0, pad - sent));
  open = open && send_part(call.after);
  if (framing == Framing::chunked) return open && peer.send("0\r\n\r\n");
  if (framing == Framing::chunked_trailer)
    return open && peer.send("0\r\nX-Checksum: 0123456789abcdef\r\nX-Note: trailer\r\n\r\n");
  return open;
}

}  // namespace wsb::testing
