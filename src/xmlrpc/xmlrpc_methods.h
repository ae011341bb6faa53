// The xmlrpc-c stack's request handling: the wsbench.* methods, registered in
// xmlrpc-c's C method registry alongside its system.* methods. What reads a
// call from a connection hands it to the registry (xmlrpc_registry_process_call2)
// and knows nothing of the methods; the methods know nothing of connections.
//
// Internal to src/xmlrpc: it includes xmlrpc-c headers.
#pragma once

#include <xmlrpc-c/server.h>

#include <memory>

namespace wsb {
class Service;
}

namespace wsb::xmlrpc {

struct RegistryFree {
  void operator()(xmlrpc_registry* registry) const { xmlrpc_registry_free(registry); }
};
using Registry = std::unique_ptr<xmlrpc_registry, RegistryFree>;

// The registry of wsbench's methods on `service`, which must outlive it.
// Calls may run on any number of threads at once. Throws std::runtime_error
// if xmlrpc-c cannot build it.
Registry make_registry(Service& service);

}  // namespace wsb::xmlrpc
