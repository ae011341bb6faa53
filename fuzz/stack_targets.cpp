// The gsoap and xmlrpc-c stacks' request paths without a socket:
// gsoap-request runs the server's own connection code (HTTP header
// parsing, limits, the generated serve function, faults) on the input as
// one connection's bytes (soap::serve_bytes); xmlrpc-call runs what the
// xmlrpc-c server does with a request body (the guard, then the method
// registry); xmlrpc-guard checks the guard's promise that what it passes
// cannot crash or hang xmlrpc-c's parser.
#include <xmlrpc-c/base.h>

#include <memory>
#include <sstream>
#include <xmlrpc-c/base.hpp>
#include <xmlrpc-c/girerr.hpp>
#include <xmlrpc-c/xml.hpp>

#include "common/codec.h"
#include "soap/soap_stack.h"
#include "target_parts.h"
#include "xmlrpc/xmlrpc_api.h"
#include "xmlrpc/xmlrpc_guard.h"
#include "xmlrpc/xmlrpc_methods.h"

namespace wsb::fuzz {
namespace {

// Every request of the gsoap stack's codecs, and its WSDL.
std::vector<std::string> gsoap_seeds() {
  std::vector<std::string> out = {"GET /?wsdl HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"};
  for (const char* codec : {"soap", "soap-mtom"})
    for (auto& request : rpc_requests(find_codec(codec), "")) out.push_back(std::move(request));
  // Two calls on one connection, the second chunked.
  auto rpc = find_codec("soap").make_rpc();
  std::string body;
  rpc->encode_call({Operation::ping}, body);
  std::ostringstream chunked;
  chunked << "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " << rpc->call_content_type()
          << "\r\nSOAPAction: \"\"\r\nTransfer-Encoding: chunked\r\n\r\n"
          << std::hex << body.size() << "\r\n"
          << body << "\r\n0\r\n\r\n";
  out.push_back(out.back() + chunked.str());
  return out;
}

void serve_gsoap(std::string_view input) {
  Service service(service_limits());
  const std::string reply = soap::serve_bytes(service, server_limits(), input);
  // Empty: the peer sent nothing to answer.
  if (!reply.empty()) check_http_reply("gsoap-request", reply);
}

std::vector<std::string> bodies_of(const std::vector<std::string>& requests) {
  std::vector<std::string> out;
  for (const auto& request : requests) out.push_back(request.substr(request.find("\r\n\r\n") + 4));
  return out;
}

struct EnvClean {
  void operator()(xmlrpc_env* env) const { xmlrpc_env_clean(env); }
};
struct MemBlockFree {
  void operator()(xmlrpc_mem_block* block) const { xmlrpc_mem_block_free(block); }
};

// The reply of the xmlrpc-c server to a body: a methodResponse it can
// parse itself, and no fault of ours.
void answer_xmlrpc_call(std::string_view body) {
  Service service(service_limits());
  const auto registry = xmlrpc::make_registry(service);
  xmlrpc::InputGuard guard;
  xmlrpc_env env;
  xmlrpc_env_init(&env);
  const std::unique_ptr<xmlrpc_env, EnvClean> clean(&env);
  const std::unique_ptr<xmlrpc_mem_block, MemBlockFree> reply(
      xmlrpc::answer_call(&env, registry.get(), guard, body, nullptr));
  if (env.fault_occurred || reply == nullptr)
    throw PropertyViolation(std::string("xmlrpc-call: the server failed: ") +
                            (env.fault_string != nullptr ? env.fault_string : "no reply"));
  const std::string wire(static_cast<const char*>(xmlrpc_mem_block_contents(reply.get())),
                         xmlrpc_mem_block_size(reply.get()));
  xmlrpc_c::rpcOutcome outcome;
  try {
    xmlrpc::parse_response(wire, guard, outcome);
  } catch (const DecodeError& e) {
    throw PropertyViolation(std::string("xmlrpc-call: the reply does not parse: ") + e.what() +
                            ": " + wire.substr(0, 400));
  }
  if (outcome.succeeded()) return;
  if (outcome.getFault().getCode() == xmlrpc::kFaultInternal)
    throw PropertyViolation("xmlrpc-call: a client's bytes got an internal error fault: " +
                            outcome.getFault().getDescription());
}

// What the guard passes, xmlrpc-c parses without crashing, as a call and
// as a response (the server reads calls, the client responses).
void guard_then_parse(std::string_view doc) {
  xmlrpc::InputGuard guard;
  try {
    guard.check(doc);
  } catch (const DecodeError&) {
    return;
  }
  const std::string text(doc);
  try {
    std::string method;
    xmlrpc_c::paramList params;
    xmlrpc_c::xml::parseCall(text, &method, &params);
  } catch (const girerr::error&) {
  }
  try {
    xmlrpc_c::rpcOutcome outcome;
    xmlrpc_c::xml::parseResponse(text, &outcome);
  } catch (const girerr::error&) {
  }
}

}  // namespace

std::vector<FuzzTarget> gsoap_targets() {
  return {{"gsoap-request",
           "the gsoap server's connection code from memory: gSOAP's HTTP header parsing, our "
           "limits, the generated serve function; a 5xx only as a Client fault",
           "http.dict soap.dict", serve_gsoap, gsoap_seeds}};
}

std::vector<FuzzTarget> xmlrpc_targets() {
  auto calls = [] { return bodies_of(rpc_requests(find_codec("xmlrpc"), "")); };
  return {
      {"xmlrpc-call",
       "the xmlrpc-c server's handling of a request body: the guard, the method registry; the "
       "reply parses and is no internal fault",
       "xmlrpc.dict", answer_xmlrpc_call, calls},
      {"xmlrpc-guard",
       "the guard in front of xmlrpc-c's parser: what it passes parses as a call and as a "
       "response without a crash",
       "xmlrpc.dict", guard_then_parse, calls},
  };
}

}  // namespace wsb::fuzz
