// The HTTP/1.1 servers http_conformance_test judges, with the requests each
// serves: the columns of its table. A stack's requests are what its own
// clients send (SOAP and XML-RPC calls through the codec's RPC binding).
// Then the Probe a row runs with, and the checks several rows share.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/codec.h"
#include "common/rpc_binding.h"
#include "common/service.h"
#include "http_request.h"
#include "http_wire.h"

namespace wsb::testing {

// ---- the servers ----

struct ServerUnderTest {
  std::string stack;
  bool tls = false;
  Call served;              // the plainest served request
  Call other;               // another, with another reply (pipelining)
  Call post;                // a served request with a body
  Call error;               // a request with a body the server refuses (no 2xx)
  std::string not_allowed;  // "METHOD /target" of a method the resource lacks
};

// A call through the protocol's binding, as the stack's client sends it.
inline Call rpc_call(const std::string& codec, const CallArgs& args, std::string marker) {
  auto rpc = find_codec(codec).make_rpc();
  Call c{"POST", std::string(rpc->path()), "", "", std::move(marker)};
  rpc->encode_call(args, c.body);
  c.fields = "Content-Type: " + rpc->call_content_type() + "\r\n";
  if (const auto [name, value] = rpc->call_header(); !name.empty())
    c.fields += std::string(name) + ": " + std::string(value) + "\r\n";
  return c;
}

inline const std::vector<ServerUnderTest>& servers() {
  static const std::vector<ServerUnderTest> all = [] {
    const std::string text = "Accept: text/plain\r\n";
    ServerUnderTest beast{"beast",
                          false,
                          {"GET", "/ping", text, "", kPingReply},
                          {"GET", "/primes/5", text, "", "FIRST 5"},
                          {"POST", "/echo", text + "Content-Type: text/plain\r\n",
                           "conformance-echo", "conformance-echo"},
                          {"POST", "/nowhere", text + "Content-Type: text/plain\r\n",
                           "GET /ping HTTP/1.1\r\nHost: smuggled\r\n\r\n", ""},
                          "DELETE /ping"};
    const Call soap_ping = rpc_call("soap", {.op = Operation::ping}, kPingReply);
    ServerUnderTest gsoap{"gsoap",
                          false,
                          {"GET", "/?wsdl", "", "", "definitions"},
                          {"GET", "/xop.xsd", "", "", "schema"},
                          soap_ping,
                          {"POST", "/", soap_ping.fields, "<broken", ""},
                          "DELETE /"};
    const Call xml_ping = rpc_call("xmlrpc", {.op = Operation::ping}, kPingReply);
    ServerUnderTest xmlrpc{
        "xmlrpc-c", false,
        xml_ping,   rpc_call("xmlrpc", {.op = Operation::primes, .n = 5}, "FIRST 5"),
        xml_ping,   {"POST", "/nowhere", xml_ping.fields, xml_ping.body, ""},
        "GET /RPC2"};
    ServerUnderTest beast_tls = beast, gsoap_tls = gsoap;
    beast_tls.stack = "beast-tls";
    gsoap_tls.stack = "gsoap-tls";
    beast_tls.tls = gsoap_tls.tls = true;
    return std::vector<ServerUnderTest>{beast, beast_tls, gsoap, gsoap_tls, xmlrpc};
  }();
  return all;
}

// A test's run against one server: its requests, and the connection the
// last one went on.
struct Probe {
  const ServerUnderTest& s;
  Endpoint at;
  std::unique_ptr<WireConnection> c;

  std::string host() const { return at.to_string(); }
  Request request(const Call& call) const {
    Request r{call.method, call.method + " " + call.target + " HTTP/1.1",
              "Host: " + host() + "\r\n" + call.fields, call.body};
    if (!call.body.empty() || call.method == "POST")
      r.add("Content-Length: " + std::to_string(call.body.size()));
    return r;
  }
  Request request(const std::string& method_target) const {
    Call call;
    call.method = method_target.substr(0, method_target.find(' '));
    call.target = method_target.substr(call.method.size() + 1);
    return request(call);
  }
  // A new connection, the bytes sent on it, and its first reply.
  WireResponse send(const Request& r, std::chrono::milliseconds wait = std::chrono::seconds(5)) {
    c = std::make_unique<WireConnection>(at, s.tls);
    c->send(r.bytes());
    return c->read(r.method, wait);
  }
  bool serves_get() const { return s.served.method == "GET"; }
};

// A 400 and the close, for a request whose framing cannot be trusted.
inline void refused_and_closed(Probe& p, const Request& r, std::set<int> ok = {400}) {
  EXPECT_TRUE(status_in(p.send(r), ok));
  EXPECT_TRUE(closes(*p.c));
}

// After a reply to a request whose body must be read or the connection
// closed: the pipelined p.s.served is answered, or the server closes (the
// body is never taken for a request).
inline void served_or_closed(Probe& p) {
  const WireResponse next = p.c->read(p.s.served.method);
  if (next.ok()) {
    EXPECT_TRUE(served(next, p.s.served));
  } else {
    EXPECT_TRUE(closes(*p.c)) << show(next);
  }
}

// The header section of `r` alone on a new connection, and the first reply
// within 2 s (an Expect: 100-continue waits for one before the body).
inline WireResponse header_section_only(Probe& p, const Request& r) {
  p.c = std::make_unique<WireConnection>(p.at, p.s.tls);
  p.c->send(r.line + "\r\n" + r.fields + "\r\n");
  return p.c->read(r.method, std::chrono::seconds(2));
}

// A chunked request: `refused` when its chunks are bad, else served. Either
// way a server MAY instead refuse any body without Content-Length with 411
// (RFC 9112 §6.3), then closing, as it has not read the body.
inline void chunked_answer(Probe& p, const Request& r, std::set<int> refused = {}) {
  const WireResponse reply = p.send(r);
  if (reply.ok() && reply.status == 411) {
    EXPECT_TRUE(closes(*p.c));
  } else if (refused.empty()) {
    EXPECT_TRUE(served(reply, p.s.post));
  } else {
    EXPECT_TRUE(status_in(reply, refused));
  }
}

}  // namespace wsb::testing
