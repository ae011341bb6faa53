// The gsoap stack's socket reads and writes, in place of gSOAP's own
// soap::frecv and soap::fsend, for its server's and client's connections.
//
// gSOAP 2.8.124 enforces soap::recv_timeout and send_timeout with a select()
// before every recv() and send() of its own frecv and fsend: five selects
// per ping round trip between the stack's client and server. Here the
// kernel enforces them instead: each connection's socket is blocking with
// SO_RCVTIMEO and SO_SNDTIMEO set once (set_socket_timeouts), gSOAP's
// timeouts stay 0, and a recv or send the kernel ends with EAGAIN ends the
// message as gSOAP's own timeout does (0 bytes read, SOAP_EOF on a write),
// saying which timeout it was.
//
// gSOAP's frecv and fsend cannot be kept with its timeouts at 0 and the
// kernel's set: on EAGAIN they select and retry (frecv up to 100 times, 5 s
// each; fsend without end), so a kernel timeout would not end the wait.
//
// On a TLS connection (soap::ssl set: the gsoap-tls stack) the same calls
// are SSL_read and SSL_write on the same socket, and the kernel's timeouts
// end them alike.
//
// Internal to src/soap: includes the generated soapH.h.
#pragma once

#include <cstddef>

#include "soap/soap_binding.h"

namespace wsb::soap {

// Why a read or write ended short.
enum class IoStop {
  none,              // it did not (or the peer closed, or the call failed)
  idle,              // no byte moved for the socket's timeout (SO_RCVTIMEO, SO_SNDTIMEO)
  transfer_timeout,  // the message took longer than soap::transfer_timeout
};

// Makes `socket` blocking, each of its recv and send calls waiting at most
// `seconds` for a byte to move (0: without limit). Throws std::system_error
// if the kernel refuses.
void set_socket_timeouts(int socket, int seconds);

// One recv into `buf` on ctx's socket, as gSOAP's default frecv with its
// recv_timeout 0 reads a TCP socket (soap::socket_flags, EINTR retried,
// soap::transfer_timeout checked first against soap::start), but a wait the
// kernel ends reads as 0 bytes with `stop` = IoStop::idle. A failed call sets
// soap::errnum.
std::size_t socket_recv(Context* ctx, char* buf, std::size_t size, IoStop& stop);

// All `size` bytes of `data` to ctx's socket, as gSOAP's default fsend
// writes them; SOAP_EOF with `stop` set when a timeout ends the write, or
// with soap::errnum set when a call fails.
int socket_send(Context* ctx, const char* data, std::size_t size, IoStop& stop);

}  // namespace wsb::soap
