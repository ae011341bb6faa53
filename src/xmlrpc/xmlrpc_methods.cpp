// What each wsbench.* method answers: parameters -> model -> Service ->
// value. Each method marks kParsed once its parameters are in the model and
// kServiced after the Service call; bad parameters and ServiceErrors become
// XML-RPC faults (codes in xmlrpc_api.h). Exceptions must not cross
// xmlrpc-c's C code, so call<>() turns every one into a fault.
#include "xmlrpc/xmlrpc_methods.h"

#include <xmlrpc-c/base.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <xmlrpc-c/base.hpp>

#include "common/codec.h"
#include "common/phases.h"
#include "common/service.h"
#include "xmlrpc/xmlrpc_api.h"
#include "xmlrpc/xmlrpc_guard.h"
#include "xmlrpc/xmlrpc_mapping.h"
#include "xmlrpc/xmlrpc_rpc.h"
#include "xmlrpc/xmlrpc_stack.h"

namespace wsb::xmlrpc {

xmlrpc_mem_block* fault_document(xmlrpc_env* env, int code, const char* what) {
  xmlrpc_env fault;
  xmlrpc_env_init(&fault);
  xmlrpc_env_set_fault(&fault, code, what);
  xmlrpc_mem_block* out = xmlrpc_mem_block_new(env, 0);
  if (!env->fault_occurred) {
    xmlrpc_serialize_fault(env, out, &fault);
    if (env->fault_occurred) {
      xmlrpc_mem_block_free(out);
      out = nullptr;
    }
  }
  xmlrpc_env_clean(&fault);
  return out;
}

namespace {

using xmlrpc_c::carray;
using xmlrpc_c::value;

// Stack for the code of ours a method runs (payload conversion, all
// iterative); Abyss sizes its connection threads from what the registry
// declares.
constexpr std::size_t kMethodStack = std::size_t{1} << 20;

// The call's arguments in the model, read as the RPC binding reads them
// (xmlrpc_rpc.h).
DecodedCall arguments(Operation op, const carray& params) {
  DecodedCall call;
  arguments_of(op, params, call);
  return call;
}

// ---- the methods: parameters -> model -> Service -> value ----

value ping(Service& service, const carray& params, Int64Form) {
  arguments(Operation::ping, params);
  mark_server(kParsed);
  std::string reply = service.ping();
  mark_server(kServiced);
  return xmlrpc_c::value_string(reply);
}

value get(Service& service, const carray& params, Int64Form form) {
  const DecodedCall call = arguments(Operation::get, params);
  mark_server(kParsed);
  const auto payload = service.get(call.spec);
  mark_server(kServiced);
  return payload_value(*payload, form);
}

value echo(Service& service, const carray& params, Int64Form form) {
  const DecodedCall call = arguments(Operation::echo, params);
  mark_server(kParsed);
  // The service's echo is the identity: what was decoded goes back.
  const Payload& echoed = service.echo(call.payload);
  mark_server(kServiced);
  return payload_value(echoed, form);
}

value register_client(Service& service, const carray& params, Int64Form) {
  arguments(Operation::register_client, params);
  mark_server(kParsed);
  std::string queue = service.register_client();
  mark_server(kServiced);
  return xmlrpc_c::value_string(queue);
}

value send_message(Service& service, const carray& params, Int64Form) {
  DecodedCall call = arguments(Operation::send_message, params);
  mark_server(kParsed);
  service.send_message(call.queue, std::move(std::get<Message>(call.payload)));
  mark_server(kServiced);
  return xmlrpc_c::value_boolean(true);
}

value receive_messages(Service& service, const carray& params, Int64Form form) {
  const DecodedCall call = arguments(Operation::receive_messages, params);
  mark_server(kParsed);
  const Payload messages = MessageList{service.receive_messages(call.queue)};
  mark_server(kServiced);
  return payload_value(messages, form);
}

value unregister_client(Service& service, const carray& params, Int64Form) {
  const DecodedCall call = arguments(Operation::unregister_client, params);
  mark_server(kParsed);
  service.unregister_client(call.queue);
  mark_server(kServiced);
  return xmlrpc_c::value_boolean(true);
}

value primes(Service& service, const carray& params, Int64Form) {
  const DecodedCall call = arguments(Operation::primes, params);
  mark_server(kParsed);
  std::string reply = service.primes(call.n);
  mark_server(kServiced);
  return xmlrpc_c::value_string(reply);
}

value define(Service& service, const carray& params, Int64Form) {
  const DecodedCall call = arguments(Operation::define, params);
  mark_server(kParsed);
  std::string definition = service.define(call.word);
  mark_server(kServiced);
  return xmlrpc_c::value_string(definition);
}

value put(Service& service, const carray& params, Int64Form) {
  const DecodedCall call = arguments(Operation::put, params);
  mark_server(kParsed);
  service.put(call.word, call.definition);
  mark_server(kServiced);
  return xmlrpc_c::value_boolean(true);
}

// ---- the registry's view: one C entry point per method ----

using Method = value (*)(Service&, const carray&, Int64Form);

// The registry calls this with the method's server info, our Service, and
// the call's info, its CallOptions (or null).
template <Method method>
xmlrpc_value* call(xmlrpc_env* env, xmlrpc_value* params, void* service, void* call_info) {
  try {
    const carray args = xmlrpc_c::value_array(value(params)).cvalue();
    const auto* options = static_cast<const CallOptions*>(call_info);
    const Int64Form form = options != nullptr ? options->int64_form : Int64Form::i8;
    // cValue() is a new reference, which the registry takes over.
    return method(*static_cast<Service*>(service), args, form).cValue();
  } catch (const ServiceError& e) {
    xmlrpc_env_set_fault(env, e.http_status(), e.what());
  } catch (const DecodeError& e) {
    xmlrpc_env_set_fault(env, kFaultBadRequest, e.what());
  } catch (const std::invalid_argument& e) {
    xmlrpc_env_set_fault(env, kFaultBadRequest, e.what());
  } catch (const std::exception& e) {
    xmlrpc_env_set_fault(env, kFaultInternal, e.what());
  } catch (...) {
    xmlrpc_env_set_fault(env, kFaultInternal, "unknown exception");
  }
  return nullptr;
}

struct MethodEntry {
  const char* name;
  xmlrpc_method2 function;
};

constexpr std::array<MethodEntry, 10> kMethods{{
    {kPing, &call<ping>},
    {kGet, &call<get>},
    {kEcho, &call<echo>},
    {kRegisterClient, &call<register_client>},
    {kSendMessage, &call<send_message>},
    {kReceiveMessages, &call<receive_messages>},
    {kUnregisterClient, &call<unregister_client>},
    {kPrimes, &call<primes>},
    {kDefine, &call<define>},
    {kPut, &call<put>},
}};

}  // namespace

Registry make_registry(Service& service) {
  xmlrpc_env env;
  xmlrpc_env_init(&env);
  Registry registry(xmlrpc_registry_new(&env));
  // The dialect xmlrpc-c writes by default, made explicit: 64-bit integers
  // as <i8>, as the codec expects.
  if (!env.fault_occurred) xmlrpc_registry_set_dialect(&env, registry.get(), xmlrpc_dialect_i8);
  for (const auto& m : kMethods) {
    if (env.fault_occurred) break;
    const xmlrpc_method_info3 info{m.name, m.function, &service, kMethodStack, nullptr, nullptr};
    xmlrpc_registry_add_method3(&env, registry.get(), &info);
  }
  if (env.fault_occurred) {
    const std::string why = env.fault_string;
    xmlrpc_env_clean(&env);
    throw std::runtime_error("xmlrpc-c server: cannot build the method registry: " + why);
  }
  return registry;
}

xmlrpc_mem_block* answer_call(xmlrpc_env* env, xmlrpc_registry* registry, InputGuard& guard,
                              std::string_view xml, void* call_info) {
  try {
    check_document(xml, "</methodCall>", guard);
  } catch (const DecodeError& e) {
    return fault_document(env, kFaultUnparseable, e.what());
  } catch (const std::exception& e) {
    xmlrpc_env_set_fault(env, XMLRPC_INTERNAL_ERROR, e.what());
    return nullptr;
  }
  xmlrpc_mem_block* response = nullptr;
  xmlrpc_registry_process_call2(env, registry, xml.data(), xml.size(), call_info, &response);
  return response;
}

}  // namespace wsb::xmlrpc
