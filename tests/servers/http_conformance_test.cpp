// HTTP/1.1 conformance of the HTTP/1.1 servers, one table: each row is one
// requirement an origin server can fail from the wire (RFC 9112 sections
// 2-9, RFC 9110 sections 5-10 and 15), the raw request that tries it and
// the answer the RFC asks for, run against beast, beast-tls, gsoap,
// gsoap-tls and xmlrpc-c in process. The expected answers are the RFC's,
// not what a server happens to do. Where a requirement cannot apply to a
// server the table says why and the row is skipped with that reason. The
// table of docs/servers/http-conformance.md is this table; a test keeps
// them equal.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/codec.h"
#include "common/rpc_binding.h"
#include "common/service.h"
#include "common/transport.h"
#include "docs_table.h"
#include "http_request.h"
#include "http_servers_under_test.h"
#include "http_wire.h"

namespace wsb {
namespace {

using namespace std::chrono_literals;
using testing::Call;
using testing::chunked_answer;
using testing::closes;
using testing::Ending;
using testing::has_date;
using testing::header_section_only;
using testing::Probe;
using testing::refused_and_closed;
using testing::refused_or_served;
using testing::Request;
using testing::served;
using testing::served_or_closed;
using testing::servers;
using testing::ServerUnderTest;
using testing::show;
using testing::status_in;
using testing::two_to_the_64_plus;
using testing::WireConnection;
using testing::WireResponse;

// ---- the table ----

struct Requirement {
  const char* id;      // in test names
  const char* where;   // the RFC section
  const char* must;    // the requirement, in short
  const char* answer;  // what the row accepts
  std::function<void(Probe&)> check;
  // Why it cannot apply to a server; "" where it does.
  std::function<std::string(const ServerUnderTest&)> not_applicable = {};
};

std::string no_get(const ServerUnderTest& s) {
  return s.served.method == "GET" ? ""
                                  : "serves no GET: its one resource, /RPC2, takes XML-RPC POSTs";
}

// HEAD of `target` pipelined before a GET of it: the GET's status and
// fields, no body, and the GET after it answered in full (unless the HEAD's
// reply announced the close).
void head_like_get(Probe& p, const std::string& target) {
  const Request get = p.request("GET " + target);
  const WireResponse alone = p.send(get);
  ASSERT_TRUE(alone.ok()) << show(alone);
  Request head = get;
  head.method = "HEAD";
  head.line = "HEAD" + get.line.substr(3);
  p.c = std::make_unique<WireConnection>(p.at, p.s.tls);
  p.c->send(head.bytes() + get.bytes());
  const WireResponse h = p.c->read("HEAD");
  EXPECT_TRUE(status_in(h, {alone.status}));
  if (h.header("Connection").value_or("") == "close") {
    EXPECT_TRUE(closes(*p.c)) << "after a HEAD reply with Connection: close";
  } else {
    const WireResponse g = p.c->read("GET");
    EXPECT_TRUE(status_in(g, {alone.status})) << "the GET after the HEAD";
    EXPECT_EQ(g.body, alone.body) << "the GET after the HEAD";
  }
  auto without_date = [](std::vector<std::string> names) {
    std::erase(names, "date");
    std::ranges::sort(names);
    return names;
  };
  if (h.ok()) {
    EXPECT_EQ(without_date(h.names()), without_date(alone.names())) << show(h);
  }
  if (const auto cl = h.header("Content-Length")) {
    EXPECT_EQ(*cl, std::to_string(alone.body.size()));
  }
}

const std::vector<Requirement>& requirements() {
  static const std::vector<Requirement> all = {
      // ---- RFC 9112: message syntax and framing ----
      {"ws_before_first_field", "RFC 9112 §2.2",
       "whitespace between the start-line and the first field: reject, or ignore that line",
       "400 (Host was on the ignored line)",
       [](Probe& p) {
         Request r = p.request(p.s.served);
         r.fields = " " + r.fields;  // " Host: ..."
         EXPECT_TRUE(status_in(p.send(r), {400}));
       }},
      {"bare_cr_in_field", "RFC 9112 §2.2",
       "a bare CR: the element is invalid, or each bare CR is replaced by SP", "400, or served",
       [](Probe& p) {
         EXPECT_TRUE(
             refused_or_served(p.send(p.request(p.s.served).add("X-Cr: a\rb")), p.s.served));
       }},
      {"major_version_unsupported", "RFC 9112 §2.3, RFC 9110 §15.6.6",
       "an HTTP major version the server does not speak is refused",
       "505, or the close without a reply",
       [](Probe& p) {
         const WireResponse r = p.send(p.request(p.s.served).version("HTTP/3.0"));
         if (r.ok()) {
           EXPECT_TRUE(status_in(r, {505}));
         } else {
           EXPECT_TRUE(closes(*p.c)) << show(r);
         }
       }},
      {"target_too_long", "RFC 9112 §3",
       "a request-target longer than the server parses: 414 (URI Too Long)",
       "414 for a 70,000-byte target, or served",
       [](Probe& p) {
         Call long_target = p.s.served;
         long_target.target += (long_target.target.find('?') == std::string::npos ? "?" : "&");
         long_target.target += "pad=" + std::string(70000, 'a');
         const WireResponse r = p.send(p.request(long_target));
         if (!(r.ok() && r.status == 414)) {
           EXPECT_TRUE(served(r, p.s.served)) << "(or 414)";
         }
       }},
      {"host_missing", "RFC 9112 §3.2", "an HTTP/1.1 request without Host: 400", "400",
       [](Probe& p) { EXPECT_TRUE(status_in(p.send(p.request(p.s.served).drop("Host")), {400})); }},
      {"host_repeated", "RFC 9112 §3.2", "more than one Host field line: 400", "400",
       [](Probe& p) {
         EXPECT_TRUE(status_in(p.send(p.request(p.s.served).add("Host: " + p.host())), {400}));
       }},
      {"host_invalid", "RFC 9112 §3.2", "a Host whose value is not a valid uri-host: 400", "400",
       [](Probe& p) {
         EXPECT_TRUE(
             status_in(p.send(p.request(p.s.served).drop("Host").add("Host: bad/host")), {400}));
       }},
      {"absolute_form", "RFC 9112 §3.2.2, §3.3",
       "the absolute-form is accepted, its authority used and Host ignored", "served",
       [](Probe& p) {
         Request r = p.request(p.s.served).drop("Host").add("Host: other.example");
         r.line = p.s.served.method + (p.s.tls ? " https://" : " http://") + p.host() +
                  p.s.served.target + " HTTP/1.1";
         EXPECT_TRUE(served(p.send(r), p.s.served));
       }},
      {"ws_before_colon", "RFC 9112 §5.1", "whitespace between a field name and the colon: 400",
       "400",
       [](Probe& p) {
         EXPECT_TRUE(status_in(p.send(p.request(p.s.served).add("X-Space : 1")), {400}));
       }},
      {"field_without_colon", "RFC 9112 §5, §2.2 (SHOULD)",
       "a field line with no colon does not match the grammar: 400", "400",
       [](Probe& p) {
         EXPECT_TRUE(status_in(p.send(p.request(p.s.served).add("X-No-Colon")), {400}));
       }},
      {"field_name_not_token", "RFC 9110 §5.1, RFC 9112 §2.2 (SHOULD)",
       "a field name that is not a token: 400", "400",
       [](Probe& p) {
         EXPECT_TRUE(status_in(p.send(p.request(p.s.served).add("X(Bad): 1")), {400}));
       }},
      {"nul_in_field_value", "RFC 9110 §5.5",
       "NUL (or CR, LF) in a field value: reject, or replace each with SP", "400, or served",
       [](Probe& p) {
         EXPECT_TRUE(refused_or_served(
             p.send(p.request(p.s.served).add(std::string("X-Nul: a\0b", 10))), p.s.served));
       }},
      {"obs_fold", "RFC 9112 §5.2",
       "obs-fold: 400, or each fold replaced by SP (the folded line is no field of its own)",
       "400, or served at once",
       [](Probe& p) {
         const Request r = p.request(p.s.served).add("X-Folded: a\r\n Content-Length: 1000");
         EXPECT_TRUE(refused_or_served(p.send(r, 3s), p.s.served));
       }},
      {"te_final_not_chunked", "RFC 9112 §6.3",
       "a request whose final transfer coding is not chunked: 400, then close", "400 and the close",
       [](Probe& p) {
         Request r = p.request(p.s.post).drop("Content-Length").add("Transfer-Encoding: gzip");
         refused_and_closed(p, r);
       }},
      {"te_and_content_length", "RFC 9112 §6.1",
       "Transfer-Encoding and Content-Length: served by the coding or refused, then close either "
       "way",
       "400 or served, then the close",
       [](Probe& p) {
         Request r = p.request(p.s.post).chunked().add("Content-Length: 3");
         EXPECT_TRUE(refused_or_served(p.send(r), p.s.post));
         EXPECT_TRUE(closes(*p.c));
       }},
      {"http10_transfer_encoding", "RFC 9112 §6.1",
       "an HTTP/1.0 request with Transfer-Encoding has faulty framing: close after it",
       "the close, after at most one reply",
       [](Probe& p) {
         Request r =
             p.request(p.s.post).chunked().version("HTTP/1.0").add("Connection: keep-alive");
         const WireResponse reply = p.send(r);
         EXPECT_TRUE(closes(*p.c)) << show(reply);
       }},
      {"content_length_not_a_number", "RFC 9112 §6.3", "an invalid Content-Length: 400, then close",
       "400 and the close",
       [](Probe& p) {
         refused_and_closed(p,
                            p.request(p.s.post).drop("Content-Length").add("Content-Length: abc"));
       }},
      {"content_length_plus_sign", "RFC 9112 §6.3, RFC 9110 §8.6",
       "Content-Length is 1*DIGIT: \"+N\" is invalid: 400, then close", "400 and the close",
       [](Probe& p) {
         const std::string n = std::to_string(p.s.post.body.size());
         refused_and_closed(
             p, p.request(p.s.post).drop("Content-Length").add("Content-Length: +" + n));
       }},
      {"content_length_list_differs", "RFC 9112 §6.3, RFC 9110 §8.6",
       "a Content-Length list of differing values: 400, then close", "400 and the close",
       [](Probe& p) {
         const std::size_t n = p.s.post.body.size();
         refused_and_closed(
             p, p.request(p.s.post)
                    .drop("Content-Length")
                    .add("Content-Length: " + std::to_string(n) + ", " + std::to_string(n + 1)));
       }},
      {"content_length_repeated_differs", "RFC 9112 §6.3, RFC 9110 §8.6",
       "two Content-Length lines that differ: 400, then close", "400 and the close",
       [](Probe& p) {
         refused_and_closed(p, p.request(p.s.post).add("Content-Length: " +
                                                       std::to_string(p.s.post.body.size() + 1)));
       }},
      {"content_length_overflow", "RFC 9110 §8.6",
       "a Content-Length past any integer is not wrapped: refused, then close",
       "400 or 413, and the close",
       [](Probe& p) {
         Request r = p.request(p.s.post).drop("Content-Length");
         // 2^64 + the body's length: wrapped, it would be the body's length.
         r.add("Content-Length: " + two_to_the_64_plus(p.s.post.body.size()));
         refused_and_closed(p, r, {400, 413});
       }},
      {"body_incomplete", "RFC 9112 §6.3, §8",
       "a body cut short by the close is incomplete: not served, and the connection closed",
       "no 2xx, and the close",
       [](Probe& p) {
         Request r = p.request(p.s.post).drop("Content-Length");
         r.add("Content-Length: " + std::to_string(p.s.post.body.size() + 100));
         p.c = std::make_unique<WireConnection>(p.at, p.s.tls);
         p.c->send(r.bytes());
         p.c->shutdown_write();
         const WireResponse reply = p.c->read("POST");
         EXPECT_FALSE(reply.ok() && reply.status / 100 == 2) << show(reply);
         if (reply.ok()) {
           EXPECT_TRUE(closes(*p.c));
         }
       }},
      {"post_without_length", "RFC 9112 §6.3",
       "a request with neither Content-Length nor Transfer-Encoding has no body: answered at once",
       "a reply within 3 s",
       [](Probe& p) {
         Call empty = p.s.post;
         empty.body.clear();
         const WireResponse r = p.send(p.request(empty).drop("Content-Length"), 3s);
         EXPECT_TRUE(r.ok()) << show(r);
       }},
      {"chunked_body", "RFC 9112 §7.1, §6.3", "a recipient MUST be able to parse chunked",
       "served, or 411 and the close",
       [](Probe& p) { chunked_answer(p, p.request(p.s.post).chunked()); }},
      {"chunked_name_case", "RFC 9112 §7", "transfer coding names are case-insensitive (`Chunked`)",
       "served, or 411 and the close",
       [](Probe& p) { chunked_answer(p, p.request(p.s.post).chunked("Chunked")); }},
      {"chunk_extension", "RFC 9112 §7.1.1", "unrecognised chunk extensions are ignored",
       "served, or 411 and the close",
       [](Probe& p) {
         Request r = p.request(p.s.post).chunked();
         r.body = Request::chunks(p.s.post.body, ";wsb=1");
         chunked_answer(p, r);
       }},
      {"chunked_trailer", "RFC 9112 §7.1.2", "a trailer section is parsed (and may be dropped)",
       "served, or 411 and the close",
       [](Probe& p) {
         Request r = p.request(p.s.post).chunked();
         r.body = Request::chunks(p.s.post.body, "", "X-Trailer: 1\r\n");
         chunked_answer(p, r);
       }},
      {"chunk_size_invalid", "RFC 9112 §7.1", "a chunk-size that is not hex: 400",
       "400, or 411 and the close",
       [](Probe& p) {
         Request r = p.request(p.s.post).chunked();
         r.body = "zz\r\n" + p.s.post.body + "\r\n0\r\n\r\n";
         chunked_answer(p, r, {400});
       }},
      {"chunk_size_overflow", "RFC 9112 §7.1",
       "a chunk-size past any integer is not wrapped (MUST anticipate overflow)",
       "400 or 413, or 411 and the close",
       [](Probe& p) {
         Request r = p.request(p.s.post).chunked();
         // 2^64 + the body's length: wrapped, a valid chunk.
         r.body = "1" + std::string(16 - Request::hex(p.s.post.body.size()).size(), '0') +
                  Request::hex(p.s.post.body.size()) + "\r\n" + p.s.post.body + "\r\n0\r\n\r\n";
         chunked_answer(p, r, {400, 413});
       }},
      {"error_reply_reads_body", "RFC 9112 §9.3",
       "a server MUST read the whole body or close after its reply (here an error reply)",
       "the next pipelined request served, or the close",
       [](Probe& p) {
         const WireResponse first = p.send(p.request(p.s.error));
         EXPECT_TRUE(first.ok() && first.status / 100 != 2) << show(first);
         p.c->send(p.request(p.s.served).bytes());
         served_or_closed(p);
       }},
      {"pipelined_in_order", "RFC 9112 §9.3.2", "pipelined requests are answered in their order",
       "three replies, in order",
       [](Probe& p) {
         const Call* calls[] = {&p.s.served, &p.s.other, &p.s.served};
         p.c = std::make_unique<WireConnection>(p.at, p.s.tls);
         std::string bytes;
         for (const Call* call : calls) bytes += p.request(*call).bytes();
         p.c->send(bytes);
         for (const Call* call : calls) EXPECT_TRUE(served(p.c->read(call->method), *call));
       }},
      {"connection_close", "RFC 9112 §9.6",
       "Connection: close: the reply, then the server closes (FIN, not a reset)",
       "served, then a clean close",
       [](Probe& p) {
         EXPECT_TRUE(served(p.send(p.request(p.s.served).add("Connection: close")), p.s.served));
         const Ending e = p.c->ending();
         EXPECT_TRUE(e == Ending::clean || e == Ending::no_notify) << to_string(e);
       }},
      {"close_ends_requests", "RFC 9112 §9.6",
       "no request after one with Connection: close is processed", "one reply, then the close",
       [](Probe& p) {
         Request r = p.request(p.s.served).add("Connection: close");
         p.c = std::make_unique<WireConnection>(p.at, p.s.tls);
         p.c->send(r.bytes() + p.request(p.s.other).bytes());
         EXPECT_TRUE(served(p.c->read(r.method), p.s.served));
         EXPECT_TRUE(closes(*p.c));
       }},
      {"http10_closes", "RFC 9112 §9.3",
       "HTTP/1.0 without keep-alive is not persistent: the reply, then the close",
       "served, then the close",
       [](Probe& p) {
         EXPECT_TRUE(served(p.send(p.request(p.s.served).version("HTTP/1.0")), p.s.served));
         EXPECT_TRUE(closes(*p.c));
       }},
      {"tls_close_notify", "RFC 9112 §9.8",
       "TLS: closure alerts are exchanged before the connection closes",
       "close_notify after the reply to Connection: close",
       [](Probe& p) {
         EXPECT_TRUE(served(p.send(p.request(p.s.served).add("Connection: close")), p.s.served));
         const Ending e = p.c->ending();
         EXPECT_EQ(e, Ending::clean) << to_string(e);
       },
       [](const ServerUnderTest& s) { return s.tls ? "" : "plaintext: no TLS closure alerts"; }},
      {"http10_no_transfer_encoding", "RFC 9112 §6.1",
       "no Transfer-Encoding in a reply to an HTTP/1.0 request", "served, no Transfer-Encoding",
       [](Probe& p) {
         const WireResponse r = p.send(p.request(p.s.post).version("HTTP/1.0"));
         EXPECT_TRUE(served(r, p.s.post));
         EXPECT_FALSE(r.header("Transfer-Encoding")) << show(r);
       }},
      // ---- RFC 9110: semantics ----
      {"head_like_get", "RFC 9110 §9.1, §9.3.2, RFC 9112 §6.3",
       "HEAD: the GET's status and fields, no body; a request pipelined after it answered",
       "as the GET, no body, then the GET served",
       [](Probe& p) { head_like_get(p, p.serves_get() ? p.s.served.target : "/RPC2"); }},
      {"head_of_error", "RFC 9110 §9.3.2, RFC 9112 §6.3",
       "HEAD of an absent resource: the GET's status, no body", "as the GET, no body",
       [](Probe& p) { head_like_get(p, "/nowhere"); }},
      {"get_body_framed", "RFC 9112 §6.3, RFC 9110 §9.3.1",
       "content in a GET is framed by its Content-Length like any other",
       "the next pipelined request served, or the close",
       [](Probe& p) {
         const Request get =
             p.request("GET " + (p.serves_get() ? p.s.served.target : std::string("/RPC2")));
         Request with_body = get;
         with_body.add("Content-Length: 26");
         with_body.body = "GET /nowhere HTTP/1.1\r\n\r\n";
         with_body.body.resize(26, ' ');
         p.c = std::make_unique<WireConnection>(p.at, p.s.tls);
         p.c->send(with_body.bytes() + p.request(p.s.served).bytes());
         const WireResponse first = p.c->read("GET");
         ASSERT_TRUE(first.ok()) << show(first);
         served_or_closed(p);
       }},
      {"request_after_whole_header", "RFC 9110 §5.3",
       "a request is not applied before its whole header section has come",
       "no reply before the empty line; served after it",
       [](Probe& p) {
         const Request r = p.request(p.s.served);
         p.c = std::make_unique<WireConnection>(p.at, p.s.tls);
         p.c->send(r.line + "\r\n" + r.fields);
         EXPECT_EQ(p.c->ending(500ms), Ending::open);
         p.c->send("\r\n" + r.body);
         EXPECT_TRUE(served(p.c->read(r.method), p.s.served));
       }},
      {"header_too_large", "RFC 9110 §5.4",
       "a field larger than the server processes: an appropriate 4xx", "431 or 400",
       [](Probe& p) {
         const WireResponse r =
             p.send(p.request(p.s.served).add("X-Big: " + std::string(65536, 'b')));
         EXPECT_TRUE(status_in(r, {400, 431}));
       }},
      {"date_on_2xx", "RFC 9110 §6.6.1, §5.6.7", "Date on a 2xx, as an IMF-fixdate",
       "one Date, IMF-fixdate, within 60 s",
       [](Probe& p) { has_date(p.send(p.request(p.s.served))); }},
      {"date_on_404", "RFC 9110 §6.6.1, §5.6.7", "Date on a 4xx (404), as an IMF-fixdate",
       "one Date, IMF-fixdate, within 60 s",
       [](Probe& p) {
         Call absent = p.s.served;
         absent.target = "/nowhere";
         has_date(p.send(p.request(absent)));
       }},
      {"date_on_400", "RFC 9110 §6.6.1, §5.6.7", "Date on a 400 (no Host), as an IMF-fixdate",
       "one Date, IMF-fixdate, within 60 s",
       [](Probe& p) { has_date(p.send(p.request(p.s.served).drop("Host"))); }},
      {"upgrade_http10_ignored", "RFC 9110 §7.8", "Upgrade in an HTTP/1.0 request is ignored",
       "served, not 101",
       [](Probe& p) {
         Request r = p.request(p.s.served).version("HTTP/1.0");
         r.add("Upgrade: websocket").add("Connection: Upgrade");
         EXPECT_TRUE(served(p.send(r), p.s.served));
       }},
      {"upgrade_not_offered", "RFC 9110 §7.8",
       "no switch to a protocol the client did not name (nor one the server lacks)",
       "served, not 101",
       [](Probe& p) {
         Request r = p.request(p.s.served).add("Upgrade: x-wsbench/9").add("Connection: Upgrade");
         EXPECT_TRUE(served(p.send(r), p.s.served));
       }},
      {"no_content_bare", "RFC 9110 §15.3.5, §8.6", "a 204 has no Content-Length and no content",
       "204, no Content-Length, the next request served",
       [](Probe& p) {
         const WireResponse created = p.send(p.request("POST /queues"));
         const auto location = created.header("Location");
         ASSERT_TRUE(location) << show(created);
         p.c->send(p.request("DELETE " + *location).bytes() + p.request(p.s.served).bytes());
         const WireResponse deleted = p.c->read("DELETE");
         EXPECT_TRUE(status_in(deleted, {204}));
         EXPECT_FALSE(deleted.header("Content-Length")) << show(deleted);
         EXPECT_TRUE(served(p.c->read(p.s.served.method), p.s.served));
       },
       [](const ServerUnderTest& s) {
         return s.stack.starts_with("beast")
                    ? ""
                    : "answers nothing with 204: every reply is an envelope";
       }},
      {"expect_continue", "RFC 9110 §10.1.1",
       "Expect: 100-continue: 100 or a final status without waiting for the body",
       "100 within 2 s (then served) or a final status",
       [](Probe& p) {
         const Request r = p.request(p.s.post).add("Expect: 100-continue");
         const WireResponse first = header_section_only(p, r);
         ASSERT_TRUE(first.ok()) << show(first);
         if (first.status != 100) return;
         p.c->send(r.body);
         EXPECT_TRUE(served(p.c->read("POST"), p.s.post));
       }},
      {"informational_no_length", "RFC 9110 §8.6, §15.2",
       "a 1xx has no Content-Length (nor content)", "the 100 to Expect without Content-Length",
       [](Probe& p) {
         const Request r = p.request(p.s.post).add("Expect: 100-continue");
         const WireResponse first = header_section_only(p, r);
         if (first.ok() && first.status / 100 == 1) {
           EXPECT_FALSE(first.header("Content-Length")) << show(first);
         }
       }},
      {"expect_http10_ignored", "RFC 9110 §10.1.1", "Expect: 100-continue in HTTP/1.0 is ignored",
       "the final reply, no 100",
       [](Probe& p) {
         Request r = p.request(p.s.post).version("HTTP/1.0").add("Expect: 100-continue");
         EXPECT_TRUE(served(p.send(r), p.s.post));
       }},
      {"method_not_allowed_allow", "RFC 9110 §15.5.6", "a 405 carries Allow",
       "4xx or 5xx; a 405 with Allow",
       [](Probe& p) {
         const WireResponse r = p.send(p.request(p.s.not_allowed));
         ASSERT_TRUE(r.ok() && r.status >= 400) << show(r);
         if (r.status == 405) {
           EXPECT_TRUE(r.header("Allow")) << show(r);
         }
       }},
      {"options_empty_length", "RFC 9110 §9.3.7",
       "a 2xx to OPTIONS without content has Content-Length: 0", "non-2xx, or Content-Length: 0",
       [](Probe& p) {
         const WireResponse r = p.send(p.request("OPTIONS " + p.s.served.target));
         ASSERT_TRUE(r.ok()) << show(r);
         if (r.status / 100 == 2 && r.body.empty()) {
           EXPECT_EQ(r.header("Content-Length").value_or("none"), "0");
         }
       }},
      {"connect_success_unframed", "RFC 9110 §9.3.6",
       "a 2xx to CONNECT has neither Content-Length nor Transfer-Encoding",
       "non-2xx, or 2xx without either",
       [](Probe& p) {
         Request r{"CONNECT", "CONNECT " + p.host() + " HTTP/1.1", "Host: " + p.host() + "\r\n",
                   ""};
         const WireResponse reply = p.send(r);
         ASSERT_TRUE(reply.ok()) << show(reply);
         if (reply.status / 100 == 2) {
           EXPECT_FALSE(reply.header("Content-Length") || reply.header("Transfer-Encoding"));
         }
       }},
      {"range_partial", "RFC 9110 §15.3.7, §14.2",
       "Range: a 206 carries Content-Range; else the Range is ignored",
       "200 served, or 206 with Content-Range",
       [](Probe& p) {
         const WireResponse r = p.send(p.request(p.s.served).add("Range: bytes=0-0"));
         if (r.ok() && r.status == 206) {
           EXPECT_TRUE(r.header("Content-Range")) << show(r);
         } else {
           EXPECT_TRUE(served(r, p.s.served));
         }
       },
       no_get},
      {"not_modified_bare", "RFC 9110 §15.4.5, §13.1.2",
       "If-None-Match: * on a resource that exists: 304 with Date and no content, or ignored",
       "200 served, or 304 with Date and no body",
       [](Probe& p) {
         const Request r = p.request(p.s.served).add("If-None-Match: *");
         const WireResponse reply = p.send(r);
         p.c->send(p.request(p.s.other).bytes());
         if (reply.ok() && reply.status == 304)
           has_date(reply);
         else {
           EXPECT_TRUE(served(reply, p.s.served));
         }
         EXPECT_TRUE(served(p.c->read(p.s.other.method), p.s.other)) << "the request after it";
       },
       no_get},
  };
  return all;
}

// ---- the test ----

struct Row {
  const Requirement* req;
  const ServerUnderTest* server;
};

std::vector<Row> rows() {
  std::vector<Row> out;
  for (const auto& req : requirements())
    for (const auto& s : servers()) out.push_back({&req, &s});
  return out;
}

std::string underscored(std::string name) {
  std::ranges::replace(name, '-', '_');
  return name;
}

void PrintTo(const Row& row, std::ostream* os) { *os << row.req->id << " " << row.server->stack; }

class HttpConformance : public ::testing::TestWithParam<Row> {
 protected:
  static void TearDownTestSuite() { running().clear(); }
  // One server per stack for the whole suite.
  static Endpoint server(const std::string& stack) {
    auto& slot = running()[stack];
    if (!slot.server) slot.server = find_stack(stack).start_server(slot.service, ServerOptions{});
    return slot.server->endpoint();
  }

 private:
  struct Running {
    Service service;
    std::unique_ptr<Server> server;
  };
  static std::map<std::string, Running>& running() {
    static std::map<std::string, Running> all;
    return all;
  }
};

TEST_P(HttpConformance, AnswersAsTheRfcSays) {
  const Row& row = GetParam();
  if (row.req->not_applicable)
    if (const std::string why = row.req->not_applicable(*row.server); !why.empty())
      GTEST_SKIP() << why;
  Probe probe{*row.server, server(row.server->stack), nullptr};
  row.req->check(probe);
}

INSTANTIATE_TEST_SUITE_P(Table, HttpConformance, ::testing::ValuesIn(rows()), [](const auto& p) {
  return std::string(p.param.req->id) + "_" + underscored(p.param.server->stack);
});

// ---- docs/servers/http-conformance.md ----

std::string docs_table() {
  std::ostringstream out;
  out << "| row | RFC | requirement | the answer the row accepts |";
  for (const auto& s : servers()) out << " " << s.stack << " |";
  out << "\n|---|---|---|---|";
  for (std::size_t i = 0; i < servers().size(); ++i) out << "---|";
  out << "\n";
  for (const auto& req : requirements()) {
    out << "| `" << req.id << "` | " << req.where << " | " << req.must << " | " << req.answer
        << " |";
    for (const auto& s : servers()) {
      const std::string why = req.not_applicable ? req.not_applicable(s) : "";
      out << " " << (why.empty() ? "tried" : "n/a: " + why) << " |";
    }
    out << "\n";
  }
  return out.str();
}

TEST(HttpConformanceDocs, TableIsTheTestTable) {
  EXPECT_TRUE(testing::page_holds_table(WSB_SOURCE_DIR "/docs/servers/http-conformance.md",
                                        "## The requirements\n", docs_table()));
}

}  // namespace
}  // namespace wsb
