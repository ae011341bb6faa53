// The stack registry. Adding a protocol stack: a server and a client behind
// src/common/transport.h, and one line here.
#include "common/transport.h"
#include "rest/beast_stack.h"
#include "soap/soap_stack.h"
#include "xmlrpc/xmlrpc_stack.h"

namespace wsb {

const std::vector<StackEntry>& all_stacks() {
  static const std::vector<StackEntry> stacks = {
      soap::gsoap_stack(),
      xmlrpc::xmlrpc_c_stack(),
      rest::beast_stack(),
  };
  return stacks;
}

const StackEntry& find_stack(const std::string& name) {
  for (const auto& stack : all_stacks())
    if (stack.name == name) return stack;
  throw std::invalid_argument("unknown stack '" + name + "'");
}

}  // namespace wsb
