// The XML-RPC RPC binding (common/rpc_binding.h): methodCall and
// methodResponse documents of the wsbench.* methods (xmlrpc_api.h),
// serialised and parsed by xmlrpc-c as its curl client and Abyss server do,
// behind the same guard (xmlrpc_guard.h). Faults carry the stack's codes.
#include "xmlrpc/xmlrpc_rpc.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <xmlrpc-c/girerr.hpp>
#include <xmlrpc-c/xml.hpp>

#include "common/codec.h"
#include "common/transport.h"
#include "xmlrpc/xmlrpc_api.h"
#include "xmlrpc/xmlrpc_codec.h"
#include "xmlrpc/xmlrpc_guard.h"
#include "xmlrpc/xmlrpc_limits.h"
#include "xmlrpc/xmlrpc_mapping.h"

namespace wsb::xmlrpc {

const char* method_of(Operation op) {
  switch (op) {
    case Operation::ping:
      return kPing;
    case Operation::get:
      return kGet;
    case Operation::echo:
      return kEcho;
    case Operation::register_client:
      return kRegisterClient;
    case Operation::send_message:
      return kSendMessage;
    case Operation::receive_messages:
      return kReceiveMessages;
    case Operation::unregister_client:
      return kUnregisterClient;
    case Operation::primes:
      return kPrimes;
    case Operation::define:
      return kDefine;
    case Operation::put:
      return kPut;
  }
  throw std::logic_error("xmlrpc: unknown operation");
}

xmlrpc_c::paramList params_of(const CallArgs& call) {
  xmlrpc_c::paramList params;
  switch (call.op) {
    case Operation::ping:
    case Operation::register_client:
      break;
    case Operation::get:
      params.addc(call.spec.label());
      break;
    case Operation::echo:
      params.add(payload_value(*call.payload));
      break;
    case Operation::send_message:
      params.addc(std::string(call.queue));
      params.add(message_value(*call.message));
      break;
    case Operation::receive_messages:
    case Operation::unregister_client:
      params.addc(std::string(call.queue));
      break;
    case Operation::primes:
      // <i4> is the XML-RPC integer; only what does not fit goes as <i8>.
      if (call.n <= static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max()))
        params.add(xmlrpc_c::value_int(static_cast<int>(call.n)));
      else
        params.add(xmlrpc_c::value_i8(call.n));
      break;
    case Operation::define:
      params.addc(std::string(call.word));
      break;
    case Operation::put:
      params.addc(std::string(call.word));
      params.addc(std::string(call.definition));
      break;
  }
  return params;
}

namespace {

[[noreturn]] void bad_params(const std::string& what) { throw DecodeError("xmlrpc: " + what); }

std::size_t param_count(Operation op) {
  switch (op) {
    case Operation::ping:
    case Operation::register_client:
      return 0;
    case Operation::send_message:
    case Operation::put:
      return 2;
    default:
      return 1;
  }
}

}  // namespace

void arguments_of(Operation op, const std::vector<xmlrpc_c::value>& params, DecodedCall& out) {
  const std::size_t n = param_count(op);
  if (params.size() != n)
    bad_params(std::string(method_of(op)) + " takes " + std::to_string(n) + " parameter" +
               (n == 1 ? "" : "s") + ", not " + std::to_string(params.size()));
  out.op = op;
  switch (op) {
    case Operation::ping:
    case Operation::register_client:
      break;
    case Operation::get:
      try {
        out.spec = parse_spec(string_of(params[0], "label"));
      } catch (const std::invalid_argument& e) {
        bad_params(e.what());
      }
      break;
    case Operation::echo:
      out.payload = payload_of(params[0]);
      break;
    case Operation::send_message:
      out.queue = string_of(params[0], "queue");
      out.payload = message_of(params[1]);
      break;
    case Operation::receive_messages:
    case Operation::unregister_client:
      out.queue = string_of(params[0], "queue");
      break;
    case Operation::primes: {
      const std::int64_t count = integer_of(params[0], "n");
      if (count < 0 || count > std::numeric_limits<std::uint32_t>::max())
        bad_params("n must be in 0.." + std::to_string(std::numeric_limits<std::uint32_t>::max()));
      out.n = static_cast<std::uint32_t>(count);
      break;
    }
    case Operation::define:
      out.word = string_of(params[0], "word");
      break;
    case Operation::put:
      out.word = string_of(params[0], "word");
      out.definition = string_of(params[1], "definition");
      break;
  }
}

namespace {

constexpr Operation kOperations[] = {Operation::ping,
                                     Operation::get,
                                     Operation::echo,
                                     Operation::register_client,
                                     Operation::send_message,
                                     Operation::receive_messages,
                                     Operation::unregister_client,
                                     Operation::primes,
                                     Operation::define,
                                     Operation::put};

class XmlrpcRpcBinding final : public RpcBinding {
 public:
  XmlrpcRpcBinding() { raise_xml_size_limit(); }

  std::string_view path() const override { return kRpcPath; }

  void encode_call(const CallArgs& call, std::string& out) override {
    xmlrpc_c::xml::generateCall(method_of(call.op), params_of(call), xmlrpc_dialect_i8, &out);
  }

  std::string call_content_type() const override { return "text/xml"; }

  void decode_reply(Operation op, std::string_view wire, Payload& out) override {
    // parseResponse takes a std::string: one copy, into a reused buffer.
    wire_.assign(wire);
    xmlrpc_c::rpcOutcome outcome;
    parse_response(wire_, guard_, outcome);
    if (!outcome.succeeded()) {
      const xmlrpc_c::fault f = outcome.getFault();
      throw FaultError(static_cast<int>(f.getCode()), f.getDescription());
    }
    const xmlrpc_c::value result = outcome.getResult();
    switch (op) {
      case Operation::ping:
      case Operation::register_client:
      case Operation::primes:
      case Operation::define:
        out = Text{string_of(result, "reply")};
        break;
      case Operation::get:
      case Operation::echo:
      case Operation::receive_messages:
        out = payload_of(result);
        if (op == Operation::receive_messages && !std::holds_alternative<MessageList>(out))
          throw DecodeError("xmlrpc: receiveMessages did not return a message list");
        break;
      case Operation::send_message:
      case Operation::unregister_client:
      case Operation::put:
        if (!bool_of(result, "reply"))
          throw CallError(std::string("xmlrpc: ") + method_of(op) + " returned false");
        break;
    }
  }

  void set_call_query(std::string_view query) override { int64_form_ = int64_form_of_query(query); }

  // Read as the stack's methods (xmlrpc_methods.cpp) read it.
  void decode_call(std::string_view wire, DecodedCall& out) override {
    check_document(wire, "</methodCall>", guard_);
    wire_.assign(wire);
    std::string method;
    xmlrpc_c::paramList params;
    try {
      xmlrpc_c::xml::parseCall(wire_, &method, &params);
    } catch (const girerr::error& e) {
      bad_params(e.what());
    }
    for (const Operation op : kOperations) {
      if (method != method_of(op)) continue;
      params_.clear();
      for (unsigned i = 0; i < params.size(); ++i) params_.push_back(params[i]);
      return arguments_of(op, params_, out);
    }
    bad_params("no method " + method);
  }

  void encode_reply(Operation op, const Payload& result, std::string& out) override {
    std::optional<xmlrpc_c::value> value;
    switch (op) {
      case Operation::ping:
      case Operation::register_client:
      case Operation::primes:
      case Operation::define:
        value.emplace(xmlrpc_c::value_string(std::get<Text>(result).value));
        break;
      case Operation::get:
      case Operation::echo:
      case Operation::receive_messages:
        value.emplace(payload_value(result, int64_form_));
        break;
      case Operation::send_message:
      case Operation::unregister_client:
      case Operation::put:
        value.emplace(xmlrpc_c::value_boolean(true));
        break;
    }
    xmlrpc_c::xml::generateResponse(xmlrpc_c::rpcOutcome(*value), xmlrpc_dialect_i8, &out);
  }

  // The stack's fault codes: the REST status for a refusal, XML-RPC's
  // internal-error code for a failure of ours.
  void encode_fault(const Fault& fault, std::string& out) override {
    const int code = fault.status < 500 ? static_cast<int>(fault.status) : kFaultInternal;
    xmlrpc_c::xml::generateResponse(
        xmlrpc_c::rpcOutcome(xmlrpc_c::fault(std::string(fault.message),
                                             static_cast<xmlrpc_c::fault::code_t>(code))),
        xmlrpc_dialect_i8, &out);
  }

  std::string reply_content_type() const override { return "text/xml"; }
  unsigned fault_status() const override { return 200; }

 private:
  std::string wire_;
  std::vector<xmlrpc_c::value> params_;
  InputGuard guard_;
  Int64Form int64_form_ = Int64Form::i8;  // of the call being served
};

}  // namespace

std::unique_ptr<RpcBinding> make_xmlrpc_rpc() { return std::make_unique<XmlrpcRpcBinding>(); }

}  // namespace wsb::xmlrpc
