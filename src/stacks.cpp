// The stack registry. Adding a protocol stack: a folder with a server and a
// client behind src/common/transport.h, their two factories, and one entry
// here.
#include "beast/beast_stack.h"
#include "common/codec.h"
#include "common/transport.h"
#include "grpc/grpc_stack.h"
#include "soap/soap_stack.h"
#include "xmlrpc/xmlrpc_stack.h"

namespace wsb {
namespace {

// The common transport carries whatever the codec registry holds, but a
// second decode path that is no library alternative (xml-dom), whose
// requests its primary's rows already cover.
std::vector<std::string> every_codec() {
  std::vector<std::string> names;
  for (const auto& codec : all_codecs())
    if (codec.decode_path_of.empty() || !codec.alternative_of.empty()) names.push_back(codec.name);
  return names;
}

}  // namespace

const std::vector<StackEntry>& all_stacks() {
  static const std::vector<StackEntry> stacks = {
      {"gsoap",
       "gSOAP 2.8 engine: generated service (accept thread, thread per connection) and proxy "
       "(one keep-alive connection); SOAP 1.1 document/literal, MTOM and SwA answered in kind",
       {"soap", "soap-mtom", "soap-swa"},
       soap::start_gsoap_server,
       soap::connect_gsoap_client},
      {"gsoap-tls",
       "gsoap over TLS: the same server and proxy on gSOAP's OpenSSL engine (libgsoapssl++; "
       "soap_ssl_server_context and soap_ssl_client_context, the client verifying the server), "
       "TLS 1.3 TLS_AES_128_GCM_SHA256 x25519 (common/tls.h); a handshake per connection on its "
       "thread; SOAP 1.1 document/literal",
       {"soap"},
       soap::start_gsoap_tls_server,
       soap::connect_gsoap_tls_client},
      {"xmlrpc-c",
       "xmlrpc-c 1.33: its Abyss HTTP server (a thread per connection) and method registry, and "
       "its libcurl client transport; XML-RPC at /RPC2",
       {"xmlrpc"},
       xmlrpc::start_xmlrpc_server,
       xmlrpc::connect_xmlrpc_client},
      {"beast",
       "Boost.Beast HTTP/1.1: an asynchronous server (io_context, as Beast's http_server_async) "
       "and a synchronous client; REST bodies by Content-Type and Accept, and the common "
       "transport for every codec (X-Wsbench-Codec)",
       every_codec(), beast_stack::start_beast_server, beast_stack::connect_beast_client},
      {"beast-tls",
       "Boost.Beast HTTP/1.1 over TLS 1.3 (beast::ssl_stream, as Beast's "
       "http_server_async_ssl and http_client_sync_ssl): the beast stack's request handling and "
       "client behind one TLS configuration (TLS_AES_128_GCM_SHA256, x25519)",
       {"json", "xml", "protobuf", "soap", "xmlrpc"},
       beast_stack::start_beast_tls_server,
       beast_stack::connect_beast_tls_client},
      {"grpc",
       "gRPC 1.51 over HTTP/2 (h2c): a callback service (grpc::CallbackService, gRPC's own "
       "threads) and the synchronous stub on one channel (one connection); one unary RPC per "
       "operation carrying the protobuf codec's messages",
       {"protobuf"},
       grpc_stack::start_grpc_server,
       grpc_stack::connect_grpc_client,
       /*library_thread_pool=*/true},
      {"grpc-tls",
       "grpc over TLS: the same service and stub with gRPC's SSL credentials (the client "
       "checking the server's name), TLS 1.3 TLS_AES_128_GCM_SHA256 set through OpenSSL's "
       "system_default (gRPC 1.51 sets no TLS 1.3 suite) and key exchange P-256 (gRPC sets it; "
       "not the shared x25519)",
       {"protobuf"},
       grpc_stack::start_grpc_tls_server,
       grpc_stack::connect_grpc_tls_client,
       /*library_thread_pool=*/true},
  };
  return stacks;
}

const StackEntry& find_stack(const std::string& name) {
  for (const auto& stack : all_stacks())
    if (stack.name == name) return stack;
  throw std::invalid_argument("unknown stack '" + name + "'");
}

std::pair<std::string, Endpoint> parse_stack_endpoint(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos)
    throw std::invalid_argument("want STACK=HOST:PORT, not '" + text + "'");
  return {find_stack(text.substr(0, eq)).name, parse_endpoint(text.substr(eq + 1))};
}

}  // namespace wsb
