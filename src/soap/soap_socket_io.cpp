#include "soap/soap_socket_io.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <climits>
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

// One SSL_read or SSL_write on a TLS connection, as recv or send: bytes
// moved, or -1 with errno EAGAIN (the kernel's timeout ended the wait),
// EINTR, or another; 0 from a read is the end of input (close_notify, or
// the peer closing without one).
template <typename Call>
ssize_t tls_call(SSL* ssl, Call call) {
  ERR_clear_error();
  const int n = call();
  if (n > 0) return n;
  switch (SSL_get_error(ssl, n)) {
    case SSL_ERROR_ZERO_RETURN:
      return 0;
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      if (errno != EINTR) errno = EAGAIN;
      return -1;
    case SSL_ERROR_SYSCALL:
      if (ERR_peek_error() == 0 && errno == 0) return 0;
      break;
    case SSL_ERROR_SSL:
      // OpenSSL 3 reports a peer that closed without close_notify so.
      if (ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
        ERR_clear_error();
        return 0;
      }
      break;
    default:
      break;
  }
  ERR_clear_error();
  if (errno == 0 || timed_out(errno) || errno == EINTR) errno = EPROTO;
  return -1;
}

ssize_t receive(Context* ctx, char* buf, std::size_t size) {
  if (ctx->ssl == nullptr) return ::recv(ctx->socket, buf, size, ctx->socket_flags);
  return tls_call(ctx->ssl, [&] {
    return SSL_read(ctx->ssl, buf, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
  });
}

ssize_t transmit(Context* ctx, const char* data, std::size_t size) {
  if (ctx->ssl == nullptr) return ::send(ctx->socket, data, size, ctx->socket_flags);
  return tls_call(ctx->ssl, [&] {
    return SSL_write(ctx->ssl, data, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
  });
}

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
    const ssize_t n = receive(ctx, buf, size);
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
    const ssize_t n = transmit(ctx, data, size);
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
