#include "rest/beast_stack.h"

#include "rest/beast_parts.h"

namespace wsb::rest {

StackEntry beast_stack() {
  return StackEntry{
      "beast",
      "Boost.Beast HTTP/1.1, synchronous, thread per connection: REST bodies by Content-Type and "
      "Accept, and the common transport for every codec (X-Wsbench-Codec)",
      {"soap", "soap-mtom", "xmlrpc", "json", "xml", "protobuf"},
      start_beast_server,
      connect_beast_client,
  };
}

}  // namespace wsb::rest
