// The HTTP/1.1 servers http_conformance_test judges, with the requests each
// serves: the columns of its table. A stack's requests are what its own
// clients send (SOAP and XML-RPC calls through the codec's RPC binding).
#pragma once

#include <chrono>
#include <memory>
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

}  // namespace wsb::testing
