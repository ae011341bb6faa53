// The "beast" stack: a Boost.Beast HTTP/1.1 server and client. It is the REST
// stack (JSON, XML and protobuf bodies chosen by Content-Type and Accept) and
// the common transport that carries every codec over the same HTTP code
// (selected by the X-Wsbench-Codec header), so stack cost and encoding cost
// can be told apart.
//
// No Beast or Asio header here: one Beast translation unit costs about 10 s
// and 500 MB to compile, so Beast stays inside beast_server.cpp and
// beast_client.cpp.
#pragma once

#include "common/transport.h"

namespace wsb::rest {

StackEntry beast_stack();

}  // namespace wsb::rest
