#include "soap/soap_socket_io.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <ctime>
#include <system_error>

namespace wsb::soap {
namespace {

// gSOAP's check of a positive soap::transfer_timeout (its frecv and fsend
// make it before each call): the message began at soap::start, set when
// gSOAP began to read or send it.
bool transfer_overdue(const Context* ctx) {
  return ctx->transfer_timeout > 0 &&
         std::difftime(std::time(nullptr), ctx->start) > static_cast<double>(ctx->transfer_timeout);
}

bool timed_out(int error) { return error == EAGAIN || error == EWOULDBLOCK; }

}  // namespace

void set_socket_timeouts(int socket, int seconds) {
  const timeval wait{seconds, 0};
  const int flags = ::fcntl(socket, F_GETFL);
  if (flags < 0 || (flags & O_NONBLOCK && ::fcntl(socket, F_SETFL, flags & ~O_NONBLOCK) != 0) ||
      ::setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait) != 0 ||
      ::setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait) != 0)
    throw std::system_error(errno, std::generic_category(), "setting a connection's timeouts");
}

std::size_t socket_recv(Context* ctx, char* buf, std::size_t size, IoStop& stop) {
  ctx->errnum = 0;
  for (;;) {
    if (transfer_overdue(ctx)) {
      stop = IoStop::transfer_timeout;
      return 0;
    }
    const ssize_t n = ::recv(ctx->socket, buf, size, ctx->socket_flags);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    if (timed_out(errno)) {
      stop = IoStop::idle;
    } else {
      ctx->errnum = errno;
    }
    return 0;
  }
}

int socket_send(Context* ctx, const char* data, std::size_t size, IoStop& stop) {
  ctx->errnum = 0;
  while (size > 0) {
    if (transfer_overdue(ctx)) {
      stop = IoStop::transfer_timeout;
      return SOAP_EOF;
    }
    const ssize_t n = ::send(ctx->socket, data, size, ctx->socket_flags);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (timed_out(errno))
        stop = IoStop::idle;
      else
        ctx->errnum = errno;
      return SOAP_EOF;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return SOAP_OK;
}

}  // namespace wsb::soap
