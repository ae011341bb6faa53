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

// The bytes of chunk framing between two runs of chunk data that a chunk
// needs at most: CRLF, 16 hex digits, CRLF. Beyond them, chunk extensions,
// leading zeros and trailer fields count against max_header_bytes with the
// header (RFC 9112 7.1 leaves their size to the server): gSOAP alone would
// hold them up to the body limit.
constexpr std::size_t kChunkLineAllowance = 20;

// Feeds body bytes to the checks; false (and c.refusal set) on the first
// failure.
bool check_body(Connection& c, std::string_view bytes) {
  auto text = [&c](std::string_view data) {
    if (c.refusal.empty()) c.refusal = c.checks.text.feed(data);
  };
  if (!c.chunked) {
    text(bytes);
    return c.refusal.empty();
  }
  // Each gap between data runs is framing; what exceeds the allowance is
  // charged as header.
  const std::size_t max_header = c.limits->max_header_bytes;
  std::size_t at = 0;
  auto over = [&c, max_header](std::size_t gap) {
    const std::size_t excess = gap > kChunkLineAllowance ? gap - kChunkLineAllowance : 0;
    return c.scan.bytes() + c.framing_excess + excess > max_header;
  };
  auto data = [&](std::string_view run) {
    const auto start = static_cast<std::size_t>(run.data() - bytes.data());
    c.framing_gap += start - at;
    if (c.framing_gap > kChunkLineAllowance)
      c.framing_excess += c.framing_gap - kChunkLineAllowance;
    c.framing_gap = 0;
    at = start + run.size();
    text(run);
  };
  if (std::string error = c.checks.framing.feed(bytes, data); !error.empty()) {
    c.refusal = std::move(error);
    c.refusal_status = 400;
    return false;
  }
  c.framing_gap += c.checks.framing.used() - at;
  if (c.refusal.empty() && over(c.framing_gap)) {
    c.refusal = "the request's header, chunk lines and trailer fields exceed " +
                std::to_string(max_header) + " bytes";
    c.refusal_status = 431;
  }
  return c.refusal.empty();
}

const char* reason_phrase(int status) {
  switch (status) {
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Bad Request";
  }
}

// HTTP's answer to a request refused before gSOAP parsed any of it, then
// the close (lingering: the rest of the request may be on its way).
void refuse_raw(Context* ctx, int status, std::string_view why) {
  Connection& c = connection_of(ctx);
  const std::string reply =
      "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\n" + date_field() +
      "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
      std::to_string(why.size()) + "\r\nConnection: close\r\n\r\n" + std::string(why);
  raw_send(ctx, reply.data(), reply.size());
  if (c.memory_out == nullptr && soap_valid_socket(ctx->socket)) ::shutdown(ctx->socket, SHUT_WR);
  ctx->keep_alive = 0;
  c.answered = true;
}

int refuse_header_too_large(Context* ctx, std::size_t max_fields, std::size_t max_bytes) {
  refuse_raw(ctx, 431,
             "the request header exceeds " + std::to_string(max_fields) + " fields, " +
                 std::to_string(max_bytes) + " bytes or a line of " + std::to_string(SOAP_HDRLEN) +
                 " bytes\n");
  return ctx->error = SOAP_STOP;
}

// HTTP's answer to a request whose framing is lost: 400 (or `status`),
// then the close (SOAP_STOP: nothing more to send, no second request).
int refuse_bad_request(Context* ctx, std::string_view why, int status = 400) {
  refuse_raw(ctx, status, why);
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
  if (c.answered) return 0;  // refused: nothing more of it is read
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
    refuse_raw(ctx, 400, "the request is not HTTP/1.x\n");
    return 0;
  }
  if (n > 0 && !c.scan.done()) {
    if (const int status = c.scan.feed(std::string_view(buf, n), c.limits->max_header_bytes)) {
      refuse_raw(ctx, status, std::string(c.scan.why()) + "\n");
      return 0;
    }
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

}  // namespace

// gSOAP's parse ends with the envelope, which may end before the body its
// Content-Length declares: the rest is read (and checked) before the
// request is served, so a body cut short by the close is refused, and the
// next request starts where this body ends.
bool finish_body(Context* ctx, Connection& c) {
  char sink[4096];
  while (c.length_declared && c.body_left > 0)
    if (receive(ctx, c, sink, std::min<ULONG64>(sizeof sink, c.body_left)) == 0) return false;
  return true;
}

namespace {

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
  if (c.drop_body) return SOAP_OK;  // a HEAD's reply, past its header
  if (c.responding) {
    mark_server(kMarshalled);
    c.probe->reply_handed();
  }
  return raw_send(ctx, data, size);
}

namespace {

// What RFC 9112 refuses in a parsed header that gSOAP serves: a Host
// missing (HTTP/1.1) or repeated (3.2), an unusable Transfer-Encoding
// (6.1, 6.3), a Content-Length that is not one number, a target in no
// form a POST or GET takes (3.2). Answers and returns SOAP_STOP, or 0.
int framing_refusal(Context* ctx, Connection& c) {
  const bool http10 = std::string_view(ctx->msgbuf).ends_with("HTTP/1.0");
  if (c.host_fields > 1 || (c.host_fields == 0 && !http10) || c.bad_host)
    return refuse_bad_request(ctx, "an HTTP/1.1 request needs exactly one valid Host field\n");
  if (c.codings.present) {
    // The body's end is lost to a Transfer-Encoding that is not chunked
    // alone, or that disagrees with a Content-Length (request smuggling).
    if (http10) return refuse_bad_request(ctx, "Transfer-Encoding in an HTTP/1.0 request\n");
    if (c.content_length || c.bad_length)
      return refuse_bad_request(ctx, "both Transfer-Encoding and Content-Length\n");
    if (!c.codings.chunked_last || c.codings.chunked_twice)
      return refuse_bad_request(ctx, "Transfer-Encoding whose final coding is not chunked\n");
    if (c.codings.other)
      return refuse_bad_request(ctx, "a transfer coding other than chunked\n", 501);
  }
  // gSOAP reads "-1" as 2^64-1 (a 413) and "abc" as 0 (a 500 later).
  if (c.bad_length) return refuse_bad_request(ctx, "invalid Content-Length\n");
  if (!to_origin_form(ctx)) return refuse_bad_request(ctx, "invalid request target\n");
  return 0;
}

}  // namespace

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
  if (c.answered) return ctx->error = SOAP_STOP;  // refused as its bytes came
  if (error) return error;
  if (other_major_version(ctx->msgbuf))
    return refuse_bad_request(ctx, "only HTTP/1.x is served\n", 505);
  // gSOAP takes a first line that is not HTTP for raw XML and would
  // answer CGI-style ("Status: 500", no status line), which no HTTP
  // client can read.
  if (!http_request_line(ctx, c)) return refuse_bad_request(ctx, "the request is not HTTP/1.x\n");
  if (const int status = framing_refusal(ctx, c)) return status;
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
    if (c.refusal_status != 0) return refuse_bad_request(ctx, c.refusal + "\n", c.refusal_status);
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
  if (soap_tag_cmp(key, "Transfer-Encoding") == 0) {
    c.chunked = true;
    c.codings.add(value);
  }
  if ((key[0] | 0x20) == 'h' && soap_tag_cmp(key, "Host") == 0) {
    ++c.host_fields;
    if (!valid_host(value)) c.bad_host = true;
  }
  // Expect in HTTP/1.0 is to be ignored (RFC 9110 10.1.1): gSOAP would
  // send 100 Continue, which an HTTP/1.0 client does not read.
  if ((key[0] | 0x20) == 'e' && soap_tag_cmp(key, "Expect") == 0 &&
      std::string_view(ctx->msgbuf).ends_with("HTTP/1.0"))
    return SOAP_OK;
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
  // Every reply has a Date (RFC 9110 6.6.1), gSOAP's none.
  const char* extra = date_field();
  if (c.timing.active()) {
    const std::string value = c.timing.value();
    c.timing.end();
    if (!value.empty()) {
      c.timing_header = std::string(extra) + "\r\nServer-Timing: " + value;
      extra = c.timing_header.c_str();
    }
  }
  // A 405 lists the methods served (RFC 9110 15.5.6).
  if (status == 405 || (status >= SOAP_GET_METHOD && status <= SOAP_HTTP_METHOD)) {
    c.timing_header = std::string(extra) + "\r\nAllow: GET, HEAD, POST, OPTIONS";
    extra = c.timing_header.c_str();
  }
  ctx->http_extra_header = extra;
  const int error = engine_io().response(ctx, status, count);
  if (error != SOAP_OK || !c.head) return error;
  // A HEAD's reply is GET's header alone: it goes out now, the body that
  // follows is dropped (timed_send).
  const int flushed = soap_flush(ctx);
  c.drop_body = true;
  return flushed;
}

// A GET's or HEAD's reply is written through the buffer that may hold a
// pipelined request's first bytes.
int get_callback(Context* ctx) {
  Connection& c = connection_of(ctx);
  keep_pipelined(ctx, c);
  return answer_get(ctx, c.endpoint);
}

int head_callback(Context* ctx) {
  connection_of(ctx).head = true;
  return get_callback(ctx);
}

}  // namespace wsb::soap::server_detail
