// The xmlrpc-c stack's request handling: the wsbench.* methods, registered in
// xmlrpc-c's C method registry alongside its system.* methods. What reads a
// call from a connection hands it to the registry (xmlrpc_registry_process_call2)
// and knows nothing of the methods; the methods know nothing of connections.
//
// Internal to src/xmlrpc: it includes xmlrpc-c headers.
#pragma once

#include <xmlrpc-c/server.h>

#include <memory>

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

}  // namespace wsb::xmlrpc
