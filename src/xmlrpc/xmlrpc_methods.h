// The xmlrpc-c stack's request handling: the wsbench.* methods, registered in
// xmlrpc-c's C method registry alongside its system.* methods. What reads a
// call from a connection hands it to the registry (xmlrpc_registry_process_call2)
// and knows nothing of the methods; the methods know nothing of connections.
//
// Internal to src/xmlrpc: it includes xmlrpc-c headers.
#pragma once

#include <xmlrpc-c/server.h>

#include <memory>
#include <string_view>

#include "xmlrpc/xmlrpc_mapping.h"

namespace wsb {
class Service;
}

namespace wsb::xmlrpc {

struct RegistryFree {
  void operator()(xmlrpc_registry* registry) const { xmlrpc_registry_free(registry); }
};
using Registry = std::unique_ptr<xmlrpc_registry, RegistryFree>;

// What a call asks of its reply beyond its parameters, passed as the
// callInfo of xmlrpc_registry_process_call2 (null: the defaults).
struct CallOptions {
  Int64Form int64_form = Int64Form::i8;
};

// The registry of wsbench's methods on `service`, which must outlive it.
// Calls may run on any number of threads at once. Throws std::runtime_error
// if xmlrpc-c cannot build it.
Registry make_registry(Service& service);

class InputGuard;  // xmlrpc_guard.h

// A fault document, as xmlrpc-c writes one, in a memory block Abyss frees;
// null (with `env` set) if it cannot be made.
xmlrpc_mem_block* fault_document(xmlrpc_env* env, int code, const char* what);

// The reply to one methodCall body: the input guard first (a fault document
// for what it refuses), then the registry, which answers a call it cannot
// run with a fault document too. `call_info` reaches the methods (their
// CallOptions; null for the defaults). Null, with the fault in `env`, only
// for a failure of ours (Abyss answers 500).
xmlrpc_mem_block* answer_call(xmlrpc_env* env, xmlrpc_registry* registry, InputGuard& guard,
                              std::string_view xml, void* call_info);

}  // namespace wsb::xmlrpc
