// The anchor registry (anchors.h): one entry per library.
#include "anchors/anchors.h"

#include "anchors/beast/beast_anchor.h"
#include "anchors/gsoap/gsoap_anchor.h"
#include "anchors/xmlrpc-c/xmlrpc_anchor.h"

namespace wsb::anchors {

const std::vector<AnchorEntry>& all_anchors() {
  static const std::vector<AnchorEntry> anchors = {
      {"gsoap", "gsoap", "soap",
       "gSOAP's generated stand-alone server and proxy for src/soap/wsbench_service.h: "
       "keep-alive, default flags",
       gsoap::start_server, gsoap::connect},
      {"xmlrpc-c", "xmlrpc-c", "xmlrpc",
       "xmlrpc-c's own sample shape: xmlrpc_c::serverAbyss and a curl client at /RPC2",
       xmlrpc::start_server, xmlrpc::connect},
      {"beast", "beast", "json",
       "Beast's http_server_async and http_client_sync examples, serving GET /ping and "
       "POST /echo with wsbench's json codec",
       beast::start_server, beast::connect},
  };
  return anchors;
}

}  // namespace wsb::anchors
