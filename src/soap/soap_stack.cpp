#include "soap/soap_stack.h"

#include "soap/soap_stack_parts.h"

namespace wsb::soap {

StackEntry gsoap_stack() {
  return StackEntry{
      "gsoap",
      "gSOAP 2.8 engine: generated service (accept thread, thread per connection) and proxy "
      "(one keep-alive connection); SOAP 1.1 document/literal, MTOM answered in kind",
      {"soap", "soap-mtom"},
      start_gsoap_server,
      connect_gsoap_client,
  };
}

}  // namespace wsb::soap
