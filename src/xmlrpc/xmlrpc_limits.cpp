#include "xmlrpc/xmlrpc_limits.h"

#include <xmlrpc-c/base.h>

#include <mutex>

namespace wsb::xmlrpc {

void raise_xml_size_limit() {
  // xmlrpc-c keeps its limits in globals, not per parser.
  static std::once_flag raised;
  std::call_once(raised, [] { xmlrpc_limit_set(XMLRPC_XML_SIZE_LIMIT_ID, kXmlSizeLimit); });
}

}  // namespace wsb::xmlrpc
