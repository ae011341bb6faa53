// The gSOAP anchor's client: the generated wsbenchProxy as gSOAP's calc++
// client uses it (a call, then the release of what the reply allocated:
// release_message, soap_end's release without its clearing of the
// engine's tables, which the next call's soap_begin clears anyway),
// keep-alive, on the server's URL. The request's SOAPAction is
// the WSDL's soapAction="", as the gsoap stack's client sends it. A request
// declares only the namespaces it uses and its reply is read with all of
// the schema's (soap_binding.h): the call is the proxy's send_<op> and
// recv_<op>, with the namespace table set before each.
//
// Glue, the part of a call that is wsbench's and not gSOAP's: echo binds
// the wsbench Payload to the generated structs before the call and unbinds
// the reply after it (soap_binding.h, the same binding the stack uses;
// message-b points at the Payload's bytes, so binding is a few pointer
// stores, and unbinding copies the attachment once). By callgrind, per
// echo of message-b/128KiB: bind 846 instructions, unbind 131,687, of a
// round trip's 31.35 million.
#include <string>

#include "anchors/gsoap/gsoap_anchor.h"
#include "anchors/ping_echo_client.h"
#include "soap/soap_binding.h"
#include "soapwsbenchProxy.h"

namespace wsb::anchors::gsoap {
namespace {

constexpr char kAction[] = "";

class AnchorClient final : public PingEchoClient {
 public:
  explicit AnchorClient(const Endpoint& server)
      : url_("http://" + server.to_string() + "/"), proxy_(url_.c_str(), SOAP_IO_KEEPALIVE) {}

  std::string ping() override {
    wsb__pingResponse response;
    soap::declare_used(proxy_.soap);
    if (proxy_.send_ping(nullptr, kAction) != SOAP_OK) fail();
    soap::read_all_namespaces(proxy_.soap);
    if (proxy_.recv_ping(response) != SOAP_OK) fail();
    std::string reply = std::move(response.reply);
    soap::release_message(proxy_.soap);
    return reply;
  }

  void echo(const Payload& in, Payload& out) override {
    wsb__Payload request;
    const soap::Binder binder(proxy_.soap, soap::Attachments::inline_base64);
    binder.payload(in, request.__union_payload, request.payload);
    soap::declare_used(proxy_.soap, binder.used());
    if (proxy_.send_echo(nullptr, kAction, &request) != SOAP_OK) fail();
    soap::read_all_namespaces(proxy_.soap);
    wsb__echoResponse response;
    if (proxy_.recv_echo(response) != SOAP_OK) fail();
    try {
      out = unbinder_.payload(response.__union_payload, response.payload, "echoResponse");
    } catch (const DecodeError& e) {
      soap::release_message(proxy_.soap);
      throw CallError(e.what());
    }
    soap::release_message(proxy_.soap);
  }

  std::uint16_t local_port() const override { return soap::socket_port(proxy_.soap->socket); }

 private:
  // gSOAP's account of the failed call, as soap_sprint_fault writes it.
  [[noreturn]] void fail() {
    char text[1024];
    proxy_.soap_sprint_fault(text, sizeof text);
    soap::release_message(proxy_.soap);
    throw CallError("gsoap anchor: " + std::string(text));
  }

  const std::string url_;
  wsbenchProxy proxy_;
  const soap::Unbinder unbinder_{"gsoap anchor"};
};

}  // namespace

std::unique_ptr<Client> connect(const Endpoint& server) {
  return std::make_unique<AnchorClient>(server);
}

}  // namespace wsb::anchors::gsoap
