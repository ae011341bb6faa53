// The gSOAP anchor: gSOAP's own minimal stand-alone server and proxy for
// the wsbench schema (src/soap/wsbench_service.h), in the shape of gSOAP's
// calc++ sample (a service class bound with bind(), a thread per accepted
// connection running serve(); the generated proxy on one keep-alive
// connection). No wsbench harness: no probes, no limits, no request checks,
// no Server-Timing. Its messages declare only the namespaces they use, as
// the stack's do (soap_binding.h), so both put the same bytes on the wire.
// The anchor rows' reference for the gsoap stack's soap rows
// (rtt/gsoap/soap). Socket options are gSOAP's defaults on both ends
// (TCP_NODELAY, 64 KiB socket buffers), as the stack's are.
#pragma once

#include <memory>

#include "common/transport.h"

namespace wsb::anchors::gsoap {

// gSOAP's generated wsbenchService for ping and echo, multi-threaded as
// gSOAP's guide shows (copy() per accepted connection, serve(), then
// destroy()). Listens on options.listen; options.cpu pins its threads like
// the stacks' servers. options.limits and options.concurrency are ignored:
// the sample has neither. Throws std::runtime_error if it cannot listen.
std::unique_ptr<Server> start_server(const ServerOptions& options);

// gSOAP's generated wsbenchProxy on one keep-alive connection
// (SOAP_IO_KEEPALIVE), opened by the first call as the proxy does. Only
// ping() and echo(); any other operation throws CallError.
std::unique_ptr<Client> connect(const Endpoint& server);

}  // namespace wsb::anchors::gsoap
