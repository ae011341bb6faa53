// The Beast anchor: Beast's own minimal server and client for ping and
// echo, in the shape of its http_server_async and http_client_sync
// examples (Boost 1.74), with REST JSON bodies through wsbench's json codec
// so that the codec work equals rtt/beast/json's. No probes, no routing
// beyond the two targets, no limits, no request recording (docs/anchors.md).
// No Beast header here: a Beast translation unit takes ~10 s to compile.
#pragma once

#include <memory>

#include "common/transport.h"

namespace wsb::anchors::beast {

// Beast's example server: one io_context run by one thread, an acceptor and
// a session per connection on their own strands, a 30 s deadline on every
// read (tcp_stream::expires_after), a response made per request and kept
// alive by a shared_ptr while it is written. Listens on options.listen;
// options.cpu pins its thread like the beast stack's server; limits and
// concurrency are ignored (one I/O thread, Beast's default parser limits).
// TCP_NODELAY is set on accepted sockets, and 64 KiB of read buffer
// reserved per connection, as the beast stack does.
// Throws std::runtime_error if it cannot listen.
std::unique_ptr<Server> start_server(const ServerOptions& options);

// Beast's example client: one keep-alive connection (a tcp_stream with
// TCP_NODELAY, as the beast stack's client sets it), a request and a
// response made per call, one flat_buffer of 64 KiB kept for reading. ping() and
// echo() only; any other operation throws CallError. Throws CallError if it
// cannot connect.
std::unique_ptr<Client> connect(const Endpoint& server);

}  // namespace wsb::anchors::beast
