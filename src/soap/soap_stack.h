// The "gsoap" stack: gSOAP 2.8's own HTTP engine end to end. The server is
// the generated wsbenchService (an accept thread, one thread per
// connection); the client is the generated wsbenchProxy on one keep-alive
// connection. Carries the soap and soap-mtom codecs: one server serves both,
// answering in MTOM when the request came in as MTOM.
#pragma once

#include "common/transport.h"

namespace wsb::soap {

StackEntry gsoap_stack();

}  // namespace wsb::soap
