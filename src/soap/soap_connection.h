// The gsoap server's connection (Connection) and the parts of its
// handling that share it; internal to src/soap. Three files:
//   soap_server.cpp            the server: listening socket, accept thread,
//                              a thread per connection, stop; serve_bytes
//   soap_serve_loop.cpp        one connection's keep-alive serve loop and
//                              the faults for requests that never reach an
//                              operation
//   soap_engine_callbacks.cpp  the engine's I/O and HTTP callbacks on a
//                              connection: framing, limits, input checks,
//                              pipelining, Server-Timing
// Request handling (the operations) is soap_operations.cpp's.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/input_checks.h"
#include "common/phases.h"
#include "common/transport.h"
#include "soap/soap_binding.h"
#include "soap/soap_http_rules.h"
#include "soap/soap_operations.h"
#include "soap/soap_socket_io.h"

namespace wsb::soap::server_detail {

using CloseFn = int (*)(Context*, SOAP_SOCKET);
using ParseFn = int (*)(Context*);
using ParseHeaderFn = int (*)(Context*, const char*, const char*);
using ShutdownFn = int (*)(Context*, SOAP_SOCKET, int);
using ResponseFn = int (*)(Context*, int, ULONG64);

class GsoapServer;  // soap_server.cpp

// One accepted connection: its copy of the master context, its thread, and
// what the engine callbacks record about the current request.
struct Connection : Exchange {
  GsoapServer* server = nullptr;         // null when served from memory (serve_bytes)
  const ServerLimits* limits = nullptr;  // the server's, or serve_bytes' own
  Endpoint endpoint;                     // the server's, for the WSDL's default location
  Context* ctx = nullptr;
  SOAP_SOCKET socket = SOAP_INVALID_SOCKET;  // guarded by GsoapServer::mutex_
  std::thread thread;
  std::atomic<bool> finished{false};
  std::optional<ConnectionProbe> probe;  // set before the thread starts
  std::int64_t last_recv_ns = 0;         // when the last bytes came in (probes on)
  bool entered = false;                  // the current request reached its operation
  bool header_parsed = false;            // the current request's HTTP header is in
  ULONG64 request_bytes = 0;             // read for the current request
  bool over_limit = false;               // the current request outgrew max_body
  bool peer_eof = false;                 // the peer stopped sending during it
  IoStop io_stop = IoStop::none;         // a timeout ended a read or write
  ULONG64 max_body = 0;                  // ServerLimits::max_body_bytes
  bool chunked = false;                  // the request has a Transfer-Encoding
  TransferCodings codings;               // ... and its codings
  HeaderScan scan;                       // the header's syntax and size, as it arrives
  std::size_t host_fields = 0;           // Host fields in the header
  bool bad_host = false;                 // one is not a host
  bool head = false;                     // a HEAD: the reply goes without its body
  bool drop_body = false;                // ... and its header is out
  std::size_t framing_excess = 0;        // chunk lines and trailers, counted as header
  std::size_t framing_gap = 0;           // framing bytes since the last chunk data
  bool answered = false;                 // the request was refused before gSOAP parsed it
  bool lingered = false;                 // the connection's close has drained its input
  bool length_declared = false;          // the body's end is its Content-Length...
  ULONG64 body_left = 0;                 // ... this many bytes from here
  std::string pending;                   // read past the request: the next one's start
  // A chunked body, read whole before gSOAP parses it (hold_chunked_body),
  // and how far gSOAP has read it.
  bool body_held = false;
  std::vector<std::string> held;
  std::size_t held_next = 0;    // the block gSOAP reads next
  std::size_t held_offset = 0;  // in it
  bool timing_asked = false;    // the request carries kServerTimingRequestHeader
  ServerTimingRecorder timing;  // its phases, when asked
  std::string timing_header;    // "Server-Timing: ..." for the reply's header
  // Where in gSOAP's buffer the next pipelined request starts, when the
  // header's read brought in more than this request's declared body; 0 if
  // it did not.
  std::size_t next_request_at = 0;
  // Set by serve_bytes: the bytes come from memory_in and go to memory_out
  // instead of a socket.
  std::string_view memory_in;
  std::string* memory_out = nullptr;

  // The current request's Content-Length, if declared, and whether one is
  // not a number or two disagree.
  std::optional<ULONG64> content_length;
  bool bad_length = false;

  // Header fields so far and their bytes (name, value, ": ", CRLF).
  std::size_t header_fields = 0;
  std::size_t header_bytes = 0;
  // The body as it arrives, checked where gSOAP is lenient
  // (common/input_checks.h).
  struct BodyChecks {
    ChunkedCheck framing;
    XmlTextCheck text{false, is_simple_element, is_base64_element};
  } checks;
  // Why the body was refused while it was read, and the HTTP status of the
  // refusal (0: a SOAP Fault with gSOAP's status).
  std::string refusal;
  int refusal_status = 0;
};

inline Connection& connection_of(Context* ctx) { return *static_cast<Connection*>(ctx->user); }

// The engine's own callbacks, taken from a fresh context: the connection's
// (soap_engine_callbacks.cpp) add to them and hand over. Reads and writes
// are soap_socket_io.h's, not gSOAP's.
struct EngineIo {
  CloseFn close;
  ShutdownFn shutdown;
  ParseFn parse;
  ParseHeaderFn parse_header;
  ResponseFn response;
};

const EngineIo& engine_io();

// ---- soap_engine_callbacks.cpp: the connection's callbacks ----

// The connection's own bytes, from the socket or from memory.
std::size_t raw_recv(Context* ctx, char* buf, std::size_t size);
int raw_send(Context* ctx, const char* data, std::size_t size);
// soap::frecv and soap::fsend: the request's reads and the reply's blocks.
std::size_t timed_recv(Context* ctx, char* buf, std::size_t size);
int timed_send(Context* ctx, const char* data, std::size_t size);
// soap::fparse: the HTTP header is in (limits, framing, the body's start).
int parse_callback(Context* ctx);
// soap::fparsehdr: one header field.
int header_callback(Context* ctx, const char* key, const char* value);
// soap::fresponse: the reply's HTTP header (Server-Timing).
int response_callback(Context* ctx, int status, ULONG64 count);
// soap::fget: the WSDL and the XOP schema (answer_get).
int get_callback(Context* ctx);
// soap::fhead: what fget answers, without the body.
int head_callback(Context* ctx);
// Reads the rest of a declared body gSOAP's parse left unread; false if
// the body ended early or was refused (the connection's state says why).
bool finish_body(Context* ctx, Connection& c);
// Keeps what gSOAP read past the current request (the next one's start)
// before a reply is written through the buffer holding it.
void keep_pipelined(Context* ctx, Connection& c);

// ---- soap_serve_loop.cpp ----

// HTTP 413 with a SOAP Fault saying so.
int refuse_too_large(Context* ctx);

// The connection's requests until it closes (the generated serve() loop,
// changed as soap_serve_loop.cpp says).
void serve_requests(Connection& c, Operations& operations);

}  // namespace wsb::soap::server_detail
