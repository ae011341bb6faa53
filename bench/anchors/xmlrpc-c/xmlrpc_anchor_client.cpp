// The anchor's client: xmlrpc-c's sample client shape (an
// xmlrpc_c::client_xml over an xmlrpc_c::clientXmlTransport_curl, a
// carriageParm_curl0 naming the URL), making each call with
// client_xml::call into an rpcOutcome. IPv4 or a host name (the URL
// takes no IPv6 literal). The transport keeps one libcurl
// session, and with it one keep-alive connection, for all calls.
#include <string>
#include <xmlrpc-c/base.hpp>
#include <xmlrpc-c/client.hpp>
#include <xmlrpc-c/client_transport.hpp>
#include <xmlrpc-c/girerr.hpp>

#include "anchors/ping_echo_client.h"
#include "anchors/xmlrpc-c/xmlrpc_anchor.h"
#include "common/codec.h"
#include "xmlrpc/xmlrpc_api.h"
#include "xmlrpc/xmlrpc_mapping.h"

namespace wsb::anchors::xmlrpc {
namespace {

using wsb::xmlrpc::kEcho;
using wsb::xmlrpc::kPing;

class AnchorClient final : public PingEchoClient {
 public:
  explicit AnchorClient(const Endpoint& server)
      : carriage_("http://" + server.to_string() + wsb::xmlrpc::kRpcPath) {}

  std::string ping() override {
    const xmlrpc_c::rpcOutcome outcome = call(kPing, xmlrpc_c::paramList());
    try {
      return xmlrpc_c::value_string(outcome.getResult());
    } catch (const girerr::error& e) {
      throw CallError(std::string("xmlrpc-c anchor: ping reply: ") + e.what());
    }
  }

  // The Payload becomes a value, and the reply's value a Payload, through
  // the stack's mapping (the stack's client converts the same way).
  void echo(const Payload& in, Payload& out) override {
    xmlrpc_c::paramList params;
    params.add(wsb::xmlrpc::payload_value(in));
    const xmlrpc_c::rpcOutcome outcome = call(kEcho, params);
    try {
      out = wsb::xmlrpc::payload_of(outcome.getResult());
    } catch (const DecodeError& e) {
      throw CallError(std::string("xmlrpc-c anchor: echo reply: ") + e.what());
    }
  }

 private:
  // A transport failure or a fault is a CallError. An rpcOutcome takes
  // one result only: a new one per call.
  xmlrpc_c::rpcOutcome call(const char* method, const xmlrpc_c::paramList& params) {
    xmlrpc_c::rpcOutcome outcome;
    try {
      client_.call(&carriage_, method, params, &outcome);
    } catch (const girerr::error& e) {
      throw CallError(std::string("xmlrpc-c anchor: ") + method + ": " + e.what());
    }
    if (!outcome.succeeded())
      throw CallError(std::string("xmlrpc-c anchor: ") + method + ": fault " +
                      std::to_string(outcome.getFault().getCode()) + ": " +
                      outcome.getFault().getDescription());
    return outcome;
  }

  xmlrpc_c::clientXmlTransport_curl transport_;
  xmlrpc_c::client_xml client_{&transport_};
  xmlrpc_c::carriageParm_curl0 carriage_;
};

}  // namespace

std::unique_ptr<Client> connect(const Endpoint& server) {
  return std::make_unique<AnchorClient>(server);
}

}  // namespace wsb::anchors::xmlrpc
