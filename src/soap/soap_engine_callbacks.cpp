// The engine callbacks of a gsoap connection. gSOAP reads and parses as
// one stream, so its I/O callbacks (timed_recv, timed_send) and its HTTP
// callbacks (parse_callback, header_callback, response_callback) are where
// the request's end, the reply's last block and the size limit show; they
// record them on the Connection (soap_connection.h). Limits, framing and
// the input checks gSOAP does not make are enforced here; see
// docs/servers/stacks/gsoap.md for why each is done as it is.
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/clock.h"
#include "soap/soap_connection.h"

namespace wsb::soap::server_detail {
const EngineIo& engine_io() {
  static const EngineIo io = [] {
    Context* ctx = soap_new();
    if (ctx == nullptr) throw std::bad_alloc();
    const EngineIo fns{ctx->fclosesocket, ctx->fshutdownsocket, ctx->fparse, ctx->fparsehdr,
                       ctx->fresponse};
    soap_free(ctx);
    return fns;
  }();
  return io;
}

// The connection's own bytes, from the socket or from memory. Once gSOAP
// has closed the connection (a malformed MIME body does), nothing: its own
// I/O would fall back to the process's stdin and stdout.
std::size_t raw_recv(Context* ctx, char* buf, std::size_t size) {
  Connection& c = connection_of(ctx);
  if (!soap_valid_socket(ctx->socket)) return 0;
  if (c.memory_out == nullptr) return socket_recv(ctx, buf, size, c.io_stop);
  const std::size_t n = std::min(size, c.memory_in.size());
  std::memcpy(buf, c.memory_in.data(), n);
  c.memory_in.remove_prefix(n);
  return n;
}

int raw_send(Context* ctx, const char* data, std::size_t size) {
  Connection& c = connection_of(ctx);
  if (!soap_valid_socket(ctx->socket)) return SOAP_EOF;
  if (c.memory_out == nullptr) return socket_send(ctx, data, size, c.io_stop);
  c.memory_out->append(data, size);
  return SOAP_OK;
}

// ---- engine callbacks of a connection ----

namespace {

// A body without a declared length (chunked) is cut off when the bytes read
// for its request exceed ServerLimits::max_body_bytes by this much, room
// for the HTTP header and the chunk framing; one with a Content-Length is
// held to the limit exactly.
constexpr ULONG64 kHeaderAllowance = 64 * 1024;

// Whether the request began with "METHOD target HTTP/1.x". Checked on
// what the header's first read brought (a header read in several pieces
// is taken as HTTP: gSOAP found its end).
bool http_request_line(const Context* ctx, const Connection& c) {
  if (c.request_bytes != ctx->buflen) return true;
  const std::string_view head(ctx->buf, ctx->buflen);
  std::string_view line = head.substr(0, head.find('\n'));
  if (line.size() == head.size()) return true;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const auto first_space = line.find(' ');
  return first_space != std::string_view::npos && first_space > 0 &&
         line.find(' ', first_space + 1) != std::string_view::npos &&
         (line.ends_with(" HTTP/1.1") || line.ends_with(" HTTP/1.0"));
}

// Whether `head`, the first bytes of a request, can begin a request line:
// optional empty lines, then a method token of capital letters. gSOAP takes
// anything else for a bare XML message and answers its failure with 500.
bool starts_like_http(std::string_view head) {
  const auto start = head.find_first_not_of("\r\n");
  if (start == std::string_view::npos) return true;
  for (std::size_t i = start; i < head.size(); ++i) {
    if (head[i] == ' ') return i > start;
    if (head[i] < 'A' || head[i] > 'Z') return false;
  }
  return true;
}

// Feeds body bytes to the checks; false (and c.refusal set) on the first
// failure.
bool check_body(Connection& c, std::string_view bytes) {
  auto text = [&c](std::string_view data) {
    if (c.refusal.empty()) c.refusal = c.checks.text.feed(data);
  };
  if (c.chunked) {
    if (std::string error = c.checks.framing.feed(bytes, text); !error.empty()) {
      c.refusal = std::move(error);
      c.refusal_status = 400;
    }
  } else {
    text(bytes);
  }
  return c.refusal.empty();
}

// HTTP's answer to a request refused before gSOAP parsed any of it, then
// the close.
void refuse_raw(Context* ctx, int status, std::string_view reason, std::string_view why) {
  const std::string reply = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
                            "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
                            std::to_string(why.size()) + "\r\nConnection: close\r\n\r\n" +
                            std::string(why);
  raw_send(ctx, reply.data(), reply.size());
  if (connection_of(ctx).memory_out == nullptr) ::shutdown(ctx->socket, SHUT_WR);
  ctx->keep_alive = 0;
}

int refuse_header_too_large(Context* ctx, std::size_t max_fields, std::size_t max_bytes) {
  refuse_raw(ctx, 431, "Request Header Fields Too Large",
             "the request header exceeds " + std::to_string(max_fields) + " fields, " +
                 std::to_string(max_bytes) + " bytes or a line of " + std::to_string(SOAP_HDRLEN) +
                 " bytes\n");
  return ctx->error = SOAP_STOP;
}

// HTTP's answer to a request whose framing is lost: 400, then the close
// (SOAP_STOP: nothing more to send, no second request).
int refuse_bad_request(Context* ctx, std::string_view why) {
  refuse_raw(ctx, 400, "Bad Request", why);
  return ctx->error = SOAP_STOP;
}

}  // namespace

namespace {

// Why a request over soap::transfer_timeout is refused.
std::string request_too_slow(const Context* ctx) {
  return "the request body took longer than " + std::to_string(ctx->transfer_timeout) +
         " s to arrive";
}

// One read of the request as it arrives, checked and counted: 0 at its end,
// at the size limit or on a refusal.
std::size_t receive(Context* ctx, Connection& c, char* buf, std::size_t size) {
  // gSOAP reads on past a Content-Length when its parser wants more (a body
  // that ends inside the XML), until the idle timeout. The body ends where
  // its header says.
  const bool bounded = c.header_parsed && c.length_declared;
  if (bounded) {
    if (c.body_left == 0) return 0;
    size = std::min<ULONG64>(size, c.body_left);
  }
  std::size_t n;
  if (!c.pending.empty()) {
    n = std::min(size, c.pending.size());
    std::memcpy(buf, c.pending.data(), n);
    c.pending.erase(0, n);
  } else {
    n = raw_recv(ctx, buf, size);
  }
  if (bounded) c.body_left -= n;
  if (n == 0 && c.io_stop == IoStop::none) c.peer_eof = true;
  // A request cut short by a timeout is answered with 408 (a wait between
  // requests just ends the connection).
  if (n == 0 && c.io_stop != IoStop::none && c.header_parsed && c.refusal.empty()) {
    c.refusal = c.io_stop == IoStop::idle ? "no byte of the request body came for " +
                                                std::to_string(c.limits->keepalive_timeout_s) + " s"
                                          : request_too_slow(ctx);
    c.refusal_status = 408;
  }
  if (n > 0 && !c.header_parsed && c.request_bytes == 0 &&
      !starts_like_http(std::string_view(buf, n))) {
    refuse_raw(ctx, 400, "Bad Request", "the request is not HTTP/1.x\n");
    return 0;
  }
  if (n > 0 && c.header_parsed && !check_body(c, std::string_view(buf, n))) return 0;
  if (n > 0) {
    // Any read may be a request's last: each starts the served time anew
    // (the last before the operation stands), with a read of its own before
    // the one kRequestReceived takes. It ends at the reply's last block.
    c.probe->serving_starts();
    if (c.probe->active() || c.timing_asked) c.last_recv_ns = now_ns();
    c.request_bytes += n;
    // The size limit for bodies without a declared length (see
    // kHeaderAllowance): to gSOAP the input ends here.
    if (c.request_bytes > c.max_body + kHeaderAllowance) {
      c.over_limit = true;
      return 0;
    }
  }
  return n;
}

// A chunked body is held in blocks of this size while it is read.
constexpr std::size_t kHeldBlock = 64 * 1024;

// Once the last chunk is in: what came after it in the last `read` bytes
// held is the next request's start.
void split_after_last_chunk(Connection& c, std::size_t read) {
  const std::size_t used = c.checks.framing.used();
  if (read <= used) return;
  std::string& block = c.held.back();
  const std::size_t end = block.size() - (read - used);
  c.pending.insert(0, block, end);
  block.resize(end);
}

// Reads a chunked body to its last chunk before gSOAP parses any of it.
// Parsed as it arrived, a body refused at the limit would have cost what
// gSOAP's parse holds for the bytes read so far: up to three times their
// size for one long element (its text in blocks, their copy, the string).
// Held, it costs the bytes themselves. False if the body was refused (the
// size limit, a check, the transfer timeout) or the peer stopped sending.
bool hold_chunked_body(Context* ctx, Connection& c) {
  const auto started = std::chrono::steady_clock::now();
  std::size_t last_read = 0;
  while (!c.checks.framing.done()) {
    // Each block is filled before the next is made: a client trickling
    // bytes costs the bytes, not a block per read.
    if (c.held.empty() || c.held.back().size() == kHeldBlock) c.held.emplace_back();
    std::string& block = c.held.back();
    const std::size_t filled = block.size();
    block.resize(kHeldBlock);
    const std::size_t n = receive(ctx, c, block.data() + filled, kHeldBlock - filled);
    block.resize(filled + n);
    last_read = n;
    if (n == 0) {
      std::vector<std::string>().swap(c.held);
      return false;
    }
    // gSOAP's bound on a message's transfer, which its own reads check.
    if (ctx->transfer_timeout > 0 &&
        std::chrono::steady_clock::now() - started > std::chrono::seconds(ctx->transfer_timeout)) {
      std::vector<std::string>().swap(c.held);
      c.refusal = request_too_slow(ctx);
      c.refusal_status = 408;
      return false;
    }
  }
  split_after_last_chunk(c, last_read);
  return true;
}

// The next held bytes; each block is released once read.
std::size_t take_held(Connection& c, char* buf, std::size_t size) {
  std::string& block = c.held[c.held_next];
  const std::size_t n = std::min(size, block.size() - c.held_offset);
  std::memcpy(buf, block.data() + c.held_offset, n);
  c.held_offset += n;
  if (c.held_offset == block.size()) {
    std::string().swap(block);
    ++c.held_next;
    c.held_offset = 0;
  }
  return n;
}

}  // namespace

std::size_t timed_recv(Context* ctx, char* buf, std::size_t size) {
  Connection& c = connection_of(ctx);
  if (c.header_parsed && c.chunked && !c.body_held) {
    c.body_held = true;
    if (!hold_chunked_body(ctx, c)) return 0;
  }
  if (c.held_next < c.held.size()) return take_held(c, buf, size);
  // A held body ends where its last chunk did.
  if (c.body_held && !c.held.empty()) return 0;
  return receive(ctx, c, buf, size);
}

int timed_send(Context* ctx, const char* data, std::size_t size) {
  // Each block of the reply overwrites the mark: the last one stands.
  Connection& c = connection_of(ctx);
  if (c.responding) {
    mark_server(kMarshalled);
    c.probe->reply_handed();
  }
  return raw_send(ctx, data, size);
}

// HTTP header parsed: refuse a declared body over the limit before
// reading it. An HTTP status returned here becomes gSOAP's reply (a
// SOAP Fault with that status).
int parse_callback(Context* ctx) {
  const int error = engine_io().parse(ctx);
  Connection& c = connection_of(ctx);
  const std::size_t max_fields = c.limits->max_header_fields;
  const std::size_t max_bytes = c.limits->max_header_bytes;
  // SOAP_HDR: a line over gSOAP's SOAP_HDRLEN, or header_callback's stop.
  if (error == SOAP_HDR || c.header_fields > max_fields || c.header_bytes > max_bytes)
    return refuse_header_too_large(ctx, max_fields, max_bytes);
  if (error) return error;
  // gSOAP takes a first line that is not HTTP for raw XML and would
  // answer CGI-style ("Status: 500", no status line), which no HTTP
  // client can read.
  if (!http_request_line(ctx, c)) return refuse_bad_request(ctx, "the request is not HTTP/1.x\n");
  // gSOAP reads "-1" as 2^64-1 (a 413) and "abc" as 0 (a 500 later).
  if (c.bad_length) return refuse_bad_request(ctx, "invalid Content-Length\n");
  c.header_parsed = true;
  // What of the body the header's read already brought in is in gSOAP's
  // buffer past the header.
  c.length_declared = !c.chunked;
  const ULONG64 buffered = ctx->buflen - ctx->bufidx;
  c.body_left = ctx->length > buffered ? ctx->length - buffered : 0;
  // gSOAP's parser stops at the envelope's end, not at the body's: what
  // follows the body (a newline after the envelope) is not the next
  // request.
  if (c.length_declared && buffered > ctx->length) c.next_request_at = ctx->bufidx + ctx->length;
  if (ctx->length > connection_of(ctx).max_body) return refuse_too_large(ctx);
  const std::size_t body_buffered = c.chunked ? buffered : std::min<ULONG64>(buffered, ctx->length);
  if (!check_body(c, std::string_view(ctx->buf + ctx->bufidx, body_buffered))) {
    if (c.refusal_status != 0) return refuse_bad_request(ctx, c.refusal + "\n");
    declare_used(ctx, kFaultNamespaces);
    soap_sender_fault(ctx, c.refusal.c_str(), nullptr);
    return ctx->error = SOAP_FAULT;
  }
  if (c.chunked) {
    // A chunked body is held (hold_chunked_body), from its first bytes:
    // gSOAP's buffer ends with the header, and its next read (timed_recv)
    // gets the body from the held blocks, exactly to its last chunk.
    c.held.emplace_back(ctx->buf + ctx->bufidx, buffered);
    ctx->buflen = ctx->bufidx;
    if (c.checks.framing.done()) split_after_last_chunk(c, buffered);
  }
  return SOAP_OK;
}

// One header field: notes a Transfer-Encoding (chunked), which replaces
// Content-Length framing, and a Content-Length that is not one decimal
// number (RFC 9110 8.6), which parse_callback refuses.
int header_callback(Context* ctx, const char* key, const char* value) {
  Connection& c = connection_of(ctx);
  ++c.header_fields;
  c.header_bytes += std::strlen(key) + std::strlen(value) + 4;
  // Stops reading a header flood at the limit: parse_callback answers 431.
  const ServerLimits& limits = *c.limits;
  if (c.header_fields > limits.max_header_fields || c.header_bytes > limits.max_header_bytes)
    return SOAP_HDR;
  if (soap_tag_cmp(key, "Transfer-Encoding") == 0) c.chunked = true;
  if (soap_tag_cmp(key, "Content-Type") == 0)
    c.checks.text =
        XmlTextCheck(soap_tag_cmp(value, "multipart/*") == 0, is_simple_element, is_base64_element);
  // Asked for Server-Timing: from here on the request's reads are timed
  // (with probes off they were not); the header's own read just ended.
  if (soap_tag_cmp(key, kServerTimingRequestHeader) == 0) {
    c.timing_asked = true;
    if (c.last_recv_ns == 0) c.last_recv_ns = now_ns();
  }
  if (soap_tag_cmp(key, "Content-Length") == 0) {
    ULONG64 length = 0;
    const char* end = value + std::strlen(value);
    const auto [ptr, ec] = std::from_chars(value, end, length);
    if (ec != std::errc{} || ptr != end || ptr == value ||
        (c.content_length && *c.content_length != length))
      c.bad_length = true;
    else
      c.content_length = length;
  }
  return engine_io().parse_header(ctx, key, value);
}

// The reply's HTTP header is about to be written: a request that asked
// gets its phases in it. gSOAP writes the header after a counting pass
// over the reply and serialises it again as it sends, so "marshal" here
// is that counting pass (docs/servers/stacks/gsoap.md).
int response_callback(Context* ctx, int status, ULONG64 count) {
  Connection& c = connection_of(ctx);
  if (c.timing.active()) {
    const std::string value = c.timing.value();
    c.timing.end();
    if (!value.empty()) {
      c.timing_header = "Server-Timing: " + value;
      ctx->http_extra_header = c.timing_header.c_str();
    }
  }
  return engine_io().response(ctx, status, count);
}

int get_callback(Context* ctx) { return answer_get(ctx, connection_of(ctx).endpoint); }

}  // namespace wsb::soap::server_detail
