// The anchor registry (anchors.h): one entry per anchor this build has.
#include "anchors/anchors.h"

#ifdef WSB_ANCHOR_BEAST
#include "anchors/beast/beast_anchor.h"
#endif
#ifdef WSB_ANCHOR_GSOAP
#include "anchors/gsoap/gsoap_anchor.h"
#endif
#ifdef WSB_ANCHOR_XMLRPC
#include "anchors/xmlrpc-c/xmlrpc_anchor.h"
#endif

namespace wsb::anchors {

const std::vector<AnchorEntry>& all_anchors() {
  static const std::vector<AnchorEntry> anchors = {
#ifdef WSB_ANCHOR_GSOAP
      {"gsoap", "gsoap", "soap",
       "gSOAP's generated stand-alone server and proxy for src/soap/wsbench_service.h: "
       "keep-alive, default flags",
       gsoap::start_server, gsoap::connect},
#endif
#ifdef WSB_ANCHOR_XMLRPC
      {"xmlrpc-c", "xmlrpc-c", "xmlrpc",
       "xmlrpc-c's own sample shape: xmlrpc_c::serverAbyss and a curl client at /RPC2",
       xmlrpc::start_server, xmlrpc::connect},
#endif
#ifdef WSB_ANCHOR_BEAST
      {"beast", "beast", "json",
       "Beast's http_server_async and http_client_sync examples, serving GET /ping and "
       "POST /echo with wsbench's json codec",
       beast::start_server, beast::connect},
#endif
  };
  return anchors;
}

}  // namespace wsb::anchors
