// One gsoap connection's keep-alive serve loop (serve_requests), the
// faults it sends for requests that never reach an operation, and the
// connection's part when one does (Exchange::operation_entered).
#include <string>
#include <vector>

#include "common/clock.h"
#include "soap/soap_connection.h"

namespace wsb::soap {
namespace server_detail {

// HTTP 413 with a SOAP Fault saying so: soap_send_fault takes an HTTP
// status in soap::error for the reply's status.
int refuse_too_large(Context* ctx) {
  if (ctx->version == 0) ctx->version = 1;  // see answer_unreadable()
  declare_used(ctx, kFaultNamespaces);
  soap_sender_fault(ctx,
                    ("request body larger than the server's limit of " +
                     std::to_string(connection_of(ctx).max_body) + " bytes")
                        .c_str(),
                    nullptr);
  return ctx->error = 413;
}

// Writes the fault in soap::error as the reply, as the generated code writes
// a response (HTTP 500, or the HTTP status in soap::error). Not
// soap_send_fault: it always closes the connection and skips the reply to
// a peer that has only stopped sending. With `close`, the connection ends
// after the reply.
void send_fault(Context* soap, bool close) {
  if (close) soap->keep_alive = 0;
  declare_used(soap, kFaultNamespaces);
  const int status = soap->error;
  soap_set_fault(soap);
  soap->error = SOAP_OK;
  soap->encodingStyle = nullptr;
  soap_serializeheader(soap);
  soap_serializefault(soap);
  auto envelope = [&] {
    return soap_envelope_begin_out(soap) || soap_putheader(soap) || soap_body_begin_out(soap) ||
           soap_putfault(soap) || soap_body_end_out(soap) || soap_envelope_end_out(soap);
  };
  if (soap_begin_count(soap) || ((soap->mode & SOAP_IO_LENGTH) && envelope()) ||
      soap_end_count(soap) || soap_response(soap, status) || envelope() || soap_end_send(soap) ||
      close)
    soap_closesock(soap);
}

// A request that failed before its operation ran: a fault, and the
// connection closes after it, as part of the body may still be unread.
void answer_unreadable(Connection& c) {
  Context* soap = c.ctx;
  // No envelope was read, so no SOAP version either: answer in 1.1
  // (without it gSOAP's faultcode reads "at source").
  if (soap->version == 0) soap->version = 1;
  if (!c.refusal.empty()) {
    soap_sender_fault(soap, c.refusal.c_str(), nullptr);
    if (c.refusal_status != 0) soap->error = c.refusal_status;
  } else if (c.over_limit) {
    // timed_recv stopped the body at the limit (one without a declared
    // length: a declared one is refused in parse_callback).
    refuse_too_large(soap);
  } else if (soap->error == SOAP_EOF || c.peer_eof) {
    // gSOAP takes an end of input for a vanished peer, or reports whatever
    // its parser made of the last tag.
    soap_sender_fault(soap, "the request body ended before its SOAP envelope did", nullptr);
    // The peer closed before its Content-Length was read: HTTP's answer to a
    // message cut short (the fault says why). A whole body whose envelope
    // ends early stays a SOAP Fault with 500.
    if (c.peer_eof) soap->error = 400;
  } else if (soap->error >= SOAP_POST) {
    // gSOAP took the body for a REST payload (error = soap::status).
    soap_sender_fault(soap, "the request body is not a SOAP envelope", nullptr);
  }
  send_fault(soap, true);
}

// The generated serve() loop, with three changes: a fault the service
// raised does not end the connection; a request that cannot be read gets a
// fault rather than silence; and each request's memory is released before
// the next one is read.
void serve_requests(Connection& c, Operations& operations) {
  Context* soap = c.ctx;
  soap->keep_alive = soap->max_keep_alive + 1;
  do {
    if (soap->keep_alive > 0 && soap->max_keep_alive > 0) soap->keep_alive--;
    c.entered = false;
    c.refused = false;
    c.header_parsed = false;
    c.chunked = false;
    c.codings = {};
    c.scan = {};
    c.host_fields = 0;
    c.bad_host = false;
    c.head = false;
    c.drop_body = false;
    c.framing_excess = 0;
    c.framing_gap = 0;
    c.body_held = false;
    std::vector<std::string>().swap(c.held);
    c.held_next = 0;
    c.held_offset = 0;
    c.content_length.reset();
    c.bad_length = false;
    c.header_fields = 0;
    c.header_bytes = 0;
    c.checks = {};
    c.refusal.clear();
    c.refusal_status = 0;
    c.responding = false;
    c.request_bytes = 0;
    c.next_request_at = 0;
    c.over_limit = false;
    c.peer_eof = false;
    c.io_stop = IoStop::none;
    c.timing_asked = false;
    c.timing.end();
    c.last_recv_ns = 0;
    soap->http_extra_header = nullptr;
    read_all_namespaces(soap);
    const bool read = soap_begin_serve(soap) == SOAP_OK;
    if (read && operations.dispatch() == SOAP_OK) {
      operations.release();
      continue;
    }
    // SOAP_STOP up to SOAP_POST: answered already (a GET).
    if (soap->error >= SOAP_STOP && soap->error < SOAP_POST) {
      operations.release();
      continue;
    }
    // The peer closed the connection between requests.
    if (soap->error == SOAP_EOF && !c.header_parsed) return;
    if (c.refused) {
      // The service refused a request read to its end: the connection goes
      // on.
      send_fault(soap, false);
      operations.release();
      continue;
    }
    // The reply failed to go out (the peer went away or stopped reading
    // until the send timeout): nothing more can be said on this connection.
    if (c.entered) return;
    // soap_begin_serve has answered and closed, but for the failures
    // answer_unreadable() handles; dispatch() answers nothing.
    if (!read && soap->error != SOAP_EOF && soap->error < SOAP_POST) return;
    answer_unreadable(c);
    return;
  } while (soap->keep_alive);
}

// Bytes gSOAP read past this request (a pipelined next request) sit in
// the buffer the reply is about to be written through: keep them for
// timed_recv to hand back, before what it has not handed out yet. A held
// chunked body ends exactly at its last chunk (what followed it is in
// pending already): nothing of it or of gSOAP's buffer is the next
// request's.
void keep_pipelined(Context* ctx, Connection& c) {
  const bool held = !c.held.empty();
  std::vector<std::string>().swap(c.held);
  c.held_next = 0;
  c.held_offset = 0;
  if (c.next_request_at != 0)
    c.pending.insert(0, ctx->buf + c.next_request_at, ctx->buflen - c.next_request_at);
  else if (ctx->ahead == 0 && ctx->bufidx < ctx->buflen && !c.length_declared && !held)
    c.pending.insert(0, ctx->buf + ctx->bufidx, ctx->buflen - ctx->bufidx);
  c.next_request_at = 0;
}

}  // namespace server_detail

// Every Exchange is a Connection's (serve_connection hands its Connection
// to the operations).
bool Exchange::operation_entered(Context* ctx) {
  auto& c = static_cast<server_detail::Connection&>(*this);
  if (!server_detail::finish_body(ctx, c)) return false;
  c.entered = true;
  keep_pipelined(ctx, c);
  c.probe->request_read(c.last_recv_ns);
  if (c.timing_asked) c.timing.begin(c.last_recv_ns != 0 ? c.last_recv_ns : now_ns());
  return true;
}

}  // namespace wsb::soap
