// The xmlrpc-c stack's client: xmlrpc-c's curl transport
// (xmlrpc_c::clientXmlTransport_curl, libxmlrpc_client++ 1.33.14 over
// libcurl 7.88).
//
// The transport is driven directly, with the call XML from
// xmlrpc_c::xml::generateCall and the response parsed by the codec's guarded
// parse_response, rather than through xmlrpc_c::client_xml, which does the
// same three steps but parses the response unguarded (an <i8> that is not a
// 64-bit integer in a reply would crash the client; see xmlrpc_guard.cpp)
// and hides the moment the response has arrived.
//
// Connection: the transport keeps one libcurl session for synchronous calls,
// and with it one HTTP/1.1 keep-alive connection; the stack test checks that
// the server sees one connection over many calls. libcurl sets TCP_NODELAY
// (its default since 7.50.2; the test checks the socket). xmlrpc-c adds an
// empty "Expect:" header to every request, which stops libcurl from sending
// "Expect: 100-continue" for bodies over 1 MiB and waiting a round trip for
// the server's 100 (checked by the test with a raw socket server).
// A connection dropped during a call surfaces as CallError. One the server
// closed while idle is replaced by libcurl on the next call without telling
// xmlrpc-c, and xmlrpc-c exposes no libcurl option or callback that could
// refuse or report it: that reconnect is this stack's behaviour, not
// wsbench's choice.
//
// Errors: an XML-RPC fault is a FaultError (a CallError carrying faultCode
// and faultString); an HTTP status other than 200 is a CallError with the
// status, which is all xmlrpc-c reports (it discards the error body); a
// transport failure is a CallError with libcurl's explanation; a reply that
// is malformed or of the wrong shape is a CallError.
//
// Phase points (last_timeline()): kInvoke when a call starts; kResponseReceived
// when the transport returns the whole response body; kDecoded when the
// call returns. xmlrpc-c exposes neither libcurl's debug callback nor its
// socket, so kRequestWritten stays 0 and client_marshal merges with
// request_transfer.
#include <xmlrpc-c/base.h>

#include <optional>
#include <string>
#include <xmlrpc-c/base.hpp>
#include <xmlrpc-c/client_transport.hpp>
#include <xmlrpc-c/girerr.hpp>
#include <xmlrpc-c/xml.hpp>

#include "common/clock.h"
#include "common/codec.h"
#include "xmlrpc/xmlrpc_guard.h"
#include "xmlrpc/xmlrpc_limits.h"
#include "xmlrpc/xmlrpc_mapping.h"
#include "xmlrpc/xmlrpc_rpc.h"
#include "xmlrpc/xmlrpc_stack.h"

namespace wsb::xmlrpc {
namespace {

using xmlrpc_c::value;

// A mapping error's detail, without its "xmlrpc: " prefix.
std::string detail(const DecodeError& e) {
  const std::string_view what = e.what();
  return std::string(what.starts_with("xmlrpc: ") ? what.substr(8) : what);
}

std::string url_of(const Endpoint& server) {
  // An IPv6 literal needs brackets in a URL.
  const bool v6 = server.host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + server.host + "]" : server.host) + ":" +
         std::to_string(server.port) + kRpcPath;
}

class CurlClient final : public Client {
 public:
  explicit CurlClient(const Endpoint& server) : carriage_(url_of(server)) {
    // Responses are parsed under the same process-wide limit as requests.
    raise_xml_size_limit();
  }

  std::string ping() override {
    begin();
    const value& reply = call({.op = Operation::ping});
    return finish(string_reply(reply, "ping reply"));
  }

  void get(const PayloadSpec& spec, Payload& out) override {
    begin();
    const value& reply = call({.op = Operation::get, .spec = spec});
    payload_reply(reply, out);
    finish();
  }

  void echo(const Payload& in, Payload& out) override {
    begin();
    const value& reply = call({.op = Operation::echo, .payload = &in});
    payload_reply(reply, out);
    finish();
  }

  std::string register_client() override {
    begin();
    const value& reply = call({.op = Operation::register_client});
    return finish(string_reply(reply, "queue id"));
  }

  void send_message(const std::string& queue, const Message& message) override {
    begin();
    const value& reply = call({.op = Operation::send_message, .queue = queue, .message = &message});
    true_reply(reply, kSendMessage);
    finish();
  }

  void receive_messages(const std::string& queue, std::vector<Message>& out) override {
    begin();
    const value& reply = call({.op = Operation::receive_messages, .queue = queue});
    payload_reply(reply, payload_);
    auto* list = std::get_if<MessageList>(&payload_);
    if (list == nullptr) throw CallError("xmlrpc-c: receiveMessages did not return a message list");
    out = std::move(list->messages);
    finish();
  }

  void unregister_client(const std::string& queue) override {
    begin();
    const value& reply = call({.op = Operation::unregister_client, .queue = queue});
    true_reply(reply, kUnregisterClient);
    finish();
  }

  std::string primes(std::uint32_t n) override {
    begin();
    const value& reply = call({.op = Operation::primes, .n = n});
    return finish(string_reply(reply, "primes reply"));
  }

  std::string define(const std::string& word) override {
    begin();
    const value& reply = call({.op = Operation::define, .word = word});
    return finish(string_reply(reply, "definition"));
  }

  void put(const std::string& word, const std::string& definition) override {
    begin();
    const value& reply = call({.op = Operation::put, .word = word, .definition = definition});
    true_reply(reply, kPut);
    finish();
  }

  const Timeline& last_timeline() const override { return timeline_; }

 private:
  void begin() {
    timeline_ = {};
    mark(timeline_, kInvoke);
  }

  template <typename T>
  T finish(T result) {
    finish();
    return result;
  }
  // Callers let the request's value tree go first: freeing it is part of
  // the call (the phase check found it outside).
  void finish() { mark(timeline_, kDecoded); }

  // One round trip; the result stays valid until the next call. The call
  // document is the RPC binding's (xmlrpc_rpc.h), so the common transport
  // sends the same bytes. std::invalid_argument: not sent.
  const value& call(const CallArgs& args) {
    const char* method = method_of(args.op);
    xmlrpc_c::xml::generateCall(method, params_of(args), xmlrpc_dialect_i8, &call_xml_);
    try {
      transport_.call(&carriage_, call_xml_, &response_xml_);
    } catch (const girerr::error& e) {
      throw CallError(std::string("xmlrpc-c: ") + method + ": " + e.what());
    }
    mark(timeline_, kResponseReceived);
    xmlrpc_c::rpcOutcome outcome;
    try {
      parse_response(response_xml_, guard_, outcome);
    } catch (const DecodeError& e) {
      throw CallError(std::string("xmlrpc-c: malformed response to ") + method + ": " + detail(e));
    }
    if (!outcome.succeeded()) {
      const xmlrpc_c::fault f = outcome.getFault();
      throw FaultError(static_cast<int>(f.getCode()), f.getDescription());
    }
    result_.reset();
    result_.emplace(outcome.getResult());
    return *result_;
  }

  static std::string string_reply(const value& reply, const char* what) {
    try {
      return string_of(reply, what);
    } catch (const DecodeError& e) {
      throw CallError("xmlrpc-c: unexpected reply: " + detail(e));
    }
  }

  static void true_reply(const value& reply, const char* method) {
    bool ok = false;
    try {
      ok = bool_of(reply, "reply");
    } catch (const DecodeError& e) {
      throw CallError("xmlrpc-c: unexpected reply: " + detail(e));
    }
    if (!ok) throw CallError(std::string("xmlrpc-c: ") + method + " returned false");
  }

  static void payload_reply(const value& reply, Payload& out) {
    try {
      out = payload_of(reply);
    } catch (const DecodeError& e) {
      throw CallError("xmlrpc-c: unexpected reply: " + detail(e));
    }
  }

  // Built once: the transport (its libcurl session and connection), the
  // carriage parameter (the URL), the buffers and the guard.
  xmlrpc_c::clientXmlTransport_curl transport_;
  xmlrpc_c::carriageParm_curl0 carriage_;
  std::string call_xml_;
  std::string response_xml_;
  InputGuard guard_;
  std::optional<value> result_;
  Payload payload_;
  Timeline timeline_{};
};

}  // namespace

std::unique_ptr<Client> connect_xmlrpc_client(const Endpoint& server, const std::string& codec) {
  if (codec != "xmlrpc")
    throw std::invalid_argument("the xmlrpc-c stack carries only the xmlrpc codec, not '" + codec +
                                "'");
  return std::make_unique<CurlClient>(server);
}

}  // namespace wsb::xmlrpc
