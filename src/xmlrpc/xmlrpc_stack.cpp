#include "xmlrpc/xmlrpc_stack.h"

#include "xmlrpc/xmlrpc_parts.h"

namespace wsb::xmlrpc {

StackEntry xmlrpc_c_stack() {
  return StackEntry{
      "xmlrpc-c",
      "xmlrpc-c 1.33: its Abyss HTTP server (a thread per connection) and method registry, and "
      "its libcurl client transport; XML-RPC at /RPC2",
      {"xmlrpc"},
      start_xmlrpc_server,
      connect_xmlrpc_client,
  };
}

}  // namespace wsb::xmlrpc
