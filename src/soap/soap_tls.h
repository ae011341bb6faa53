// The gsoap-tls stack's TLS: gSOAP's OpenSSL engine (libgsoapssl++) with
// the shared configuration (common/tls.h) on its contexts, and the
// server's handshake. Internal to src/soap: includes the generated soapH.h.
//
// Reads and writes on a TLS connection go through soap::ssl
// (soap_socket_io.h: SSL_read and SSL_write on the same blocking socket,
// the kernel's SO_RCVTIMEO and SO_SNDTIMEO still ending a wait), whose BIO
// sends with MSG_NOSIGNAL as the plain stack does (OpenSSL's socket BIO
// writes with write(), and a peer gone first would SIGPIPE the process).
#pragma once

#include <string>

#include "soap/soap_binding.h"

namespace wsb::soap {

// soap_ssl_server_context with tls::identity_files(), then
// tls::configure(Side::server) on the context it made. Throws
// std::runtime_error.
void use_tls_server_context(Context* master);

// The clients' context: soap_ssl_client_context verifying the server
// (SOAP_SSL_DEFAULT) against tls::identity_files()'s certificate alone
// (SOAP_SSL_NO_DEFAULT_CA_PATH), then tls::configure(Side::client). It is
// made once and every client takes a reference, as one gSOAP client keeps
// its context from connection to connection: a new connection costs its
// connect and handshake, not a new SSL_CTX (OpenSSL 3's SSL_CTX_new and the
// certificate file's reading). Throws std::runtime_error.
void use_tls_client_context(Context* ctx);

// The server's side of the handshake on ctx's accepted socket, in place of
// soap_ssl_accept, whose retries (a select of 0.1 s each) are not bounded
// by the server's timeouts: it ends after `timeout_s` seconds in all, however
// slowly the client's bytes trickle in. On success soap::ssl is the
// connection's (gSOAP shuts it down and frees it on close) and "" is
// returned; otherwise why it failed, and soap::ssl is unset. The socket is
// left blocking.
std::string accept_tls(Context* ctx, int timeout_s);

// Puts the MSG_NOSIGNAL socket BIO under `ssl` (a handshake's records are
// all out: nothing is buffered in the old one). Throws std::runtime_error.
void use_nosignal_bio(SSL* ssl, int socket);

// The connection's negotiated protocol, suite and group (tls::negotiated);
// "" on a plain connection.
std::string negotiated(const Context* ctx);

}  // namespace wsb::soap
