#include "xmlrpc/xmlrpc_codec.h"
namespace wsb::xmlrpc {
std::unique_ptr<Codec> make_xmlrpc_codec() { throw std::logic_error("TODO"); }
}  // namespace wsb::xmlrpc
