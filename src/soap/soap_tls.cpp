#include "soap/soap_tls.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>

#include "common/tls.h"

namespace wsb::soap {
namespace {

// OpenSSL's error queue as one line, cleared.
std::string openssl_errors() {
  std::string what;
  while (const unsigned long code = ERR_get_error()) {
    char reason[256];
    ERR_error_string_n(code, reason, sizeof reason);
    if (!what.empty()) what += "; ";
    what += reason;
  }
  return what.empty() ? "no OpenSSL error" : what;
}

void init_engine() {
  static std::once_flag once;
  std::call_once(once, [] { soap_ssl_init(); });
}

int nosignal_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::send(static_cast<int>(BIO_get_fd(bio, nullptr)), data,
                           static_cast<std::size_t>(size), MSG_NOSIGNAL);
  if (n <= 0 && BIO_sock_should_retry(static_cast<int>(n))) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

// OpenSSL's socket BIO but for its write.
const BIO_METHOD* nosignal_method() {
  static BIO_METHOD* const method = [] {
    const BIO_METHOD* base = BIO_s_socket();
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                                 "socket, MSG_NOSIGNAL");
    if (m == nullptr || !BIO_meth_set_write(m, nosignal_write) ||
        !BIO_meth_set_read(m, BIO_meth_get_read(base)) ||
        !BIO_meth_set_puts(m, BIO_meth_get_puts(base)) ||
        !BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(base)) ||
        !BIO_meth_set_create(m, BIO_meth_get_create(base)) ||
        !BIO_meth_set_destroy(m, BIO_meth_get_destroy(base)))
      throw std::runtime_error("gsoap-tls: cannot make a BIO method: " + openssl_errors());
    return m;
  }();
  return method;
}

bool set_blocking(int socket, bool blocking) {
  const int flags = ::fcntl(socket, F_GETFL);
  return flags >= 0 &&
         ::fcntl(socket, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK) == 0;
}

}  // namespace

void use_tls_server_context(Context* master) {
  init_engine();
  if (soap_ssl_server_context(master, SOAP_SSL_DEFAULT | SOAP_TLSv1_3,
                              tls::identity_files().certificate_and_key.c_str(), nullptr, nullptr,
                              nullptr, nullptr, nullptr, nullptr) != SOAP_OK ||
      master->ctx == nullptr)
    throw std::runtime_error("gsoap-tls: soap_ssl_server_context failed: " + openssl_errors());
  tls::configure(master->ctx, tls::Side::server);
}

namespace {

// The clients' one SSL_CTX and the flags gSOAP gave it.
struct ClientContext {
  SSL_CTX* ctx;
  unsigned short flags;
};

const ClientContext& client_context() {
  static const ClientContext shared = [] {
    init_engine();
    Context* maker = soap_new();
    if (maker == nullptr) throw std::bad_alloc();
    // SOAP_SSL_NO_DEFAULT_CA_PATH: the system's CAs are not trusted.
    // gSOAP makes the context on the first connect (soap::fsslauth): made
    // here, to configure it.
    if (soap_ssl_client_context(
            maker, SOAP_SSL_DEFAULT | SOAP_SSL_NO_DEFAULT_CA_PATH | SOAP_TLSv1_3, nullptr, nullptr,
            tls::identity_files().certificate.c_str(), nullptr, nullptr) != SOAP_OK ||
        (maker->ctx == nullptr && maker->fsslauth(maker) != SOAP_OK) || maker->ctx == nullptr) {
      soap_free(maker);
      throw std::runtime_error("gsoap-tls: soap_ssl_client_context failed: " + openssl_errors());
    }
    const ClientContext made{maker->ctx, maker->ssl_flags};
    try {
      tls::configure(made.ctx, tls::Side::client);
    } catch (...) {
      soap_free(maker);
      throw;
    }
    SSL_CTX_up_ref(made.ctx);  // outlives the maker, which frees its own reference
    soap_free(maker);
    return made;
  }();
  return shared;
}

}  // namespace

void use_tls_client_context(Context* ctx) {
  const ClientContext& shared = client_context();
  SSL_CTX_up_ref(shared.ctx);  // the client's context frees it (soap_done)
  ctx->ctx = shared.ctx;
  ctx->ssl_flags = shared.flags;
}

void use_nosignal_bio(SSL* ssl, int socket) {
  BIO* bio = BIO_new(nosignal_method());
  if (bio == nullptr) throw std::runtime_error("gsoap-tls: BIO_new: " + openssl_errors());
  BIO_set_fd(bio, socket, BIO_NOCLOSE);
  SSL_set_bio(ssl, bio, bio);
}

std::string accept_tls(Context* ctx, int timeout_s) {
  ERR_clear_error();
  SSL* ssl = SSL_new(ctx->ctx);
  if (ssl == nullptr) return "SSL_new: " + openssl_errors();
  std::string why;
  try {
    use_nosignal_bio(ssl, ctx->socket);
  } catch (const std::exception& e) {
    SSL_free(ssl);
    return e.what();
  }
  if (!set_blocking(ctx->socket, false)) why = "cannot make the socket non-blocking";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (why.empty()) {
    const int r = SSL_accept(ssl);
    if (r == 1) break;
    const int error = SSL_get_error(ssl, r);
    pollfd p{ctx->socket, 0, 0};
    if (error == SSL_ERROR_WANT_READ)
      p.events = POLLIN;
    else if (error == SSL_ERROR_WANT_WRITE)
      p.events = POLLOUT;
    else if (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
      why = errno != 0 ? std::string("the connection failed: ") + std::strerror(errno)
                       : "the client closed the connection";
    else
      why = openssl_errors();
    if (!why.empty()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready == 0)
      why = "no TLS handshake within " + std::to_string(timeout_s) + " s";
    else if (ready < 0 && errno != EINTR)
      why = std::string("poll: ") + std::strerror(errno);
  }
  if (!set_blocking(ctx->socket, true) && why.empty()) why = "cannot make the socket blocking";
  if (!why.empty()) {
    SSL_free(ssl);
    ERR_clear_error();
    return why;
  }
  ctx->ssl = ssl;
  ctx->imode |= SOAP_ENC_SSL;
  ctx->omode |= SOAP_ENC_SSL;
  return {};
}

std::string negotiated(const Context* ctx) {
  return ctx->ssl != nullptr ? tls::negotiated(ctx->ssl) : std::string();
}

}  // namespace wsb::soap
