// The anchor registry (anchors.h): one entry per library.
#include "anchors/anchors.h"

#include "anchors/beast/beast_anchor.h"
#include "anchors/grpc/grpc_anchor.h"
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
      // Two anchors of one stack: gRPC's examples serve with either API,
      // and the stack's server is a callback service.
      {"grpc-sync", "grpc", "protobuf",
       "gRPC's helloworld greeter_server.cc (synchronous service) and greeter_client.cc "
       "(generated stub) for Ping and Echo, echo's bytes through wsbench's protobuf codec",
       grpc_anchor::start_sync_server, grpc_anchor::connect, /*library_thread_pool=*/true},
      {"grpc-callback", "grpc", "protobuf",
       "gRPC's helloworld greeter_callback_server.cc (callback service) and greeter_client.cc "
       "(generated stub) for Ping and Echo, echo's bytes through wsbench's protobuf codec",
       grpc_anchor::start_callback_server, grpc_anchor::connect, /*library_thread_pool=*/true},
  };
  return anchors;
}

}  // namespace wsb::anchors
