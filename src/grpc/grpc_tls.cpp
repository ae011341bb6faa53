// The grpc-tls stack: the grpc stack's server and client over gRPC's SSL
// credentials, with tls::identity()'s certificate and key; the client
// trusts only that certificate and checks the server's name (kServerName,
// through GRPC_SSL_TARGET_NAME_OVERRIDE_ARG: the channel's target is an
// IP address).
//
// gRPC 1.51's TSI makes its own SSL_CTX and offers no hook to configure it:
// of the shared configuration (tls.h) it sets the protocol range (TLS 1.2
// to 1.3; TLS 1.3 is what two 1.51 peers negotiate) and, by
// SSL_CTX_set_cipher_list (GRPC_SSL_CIPHER_SUITES), TLS 1.2's suites only;
// it never calls SSL_CTX_set_ciphersuites, so OpenSSL's default TLS 1.3
// list would apply and two peers would agree on TLS_AES_256_GCM_SHA384.
// OpenSSL applies its configuration's system_default section to every
// SSL_CTX made after it is loaded, so before the first credentials are
// made this process loads one that sets tls.h's cipher suite and no
// session tickets (the TSI client keeps no session cache, so nothing
// resumes). The key exchange group cannot be set: the TSI sets P-256 on
// every context (SSL_CTX_set_tmp_ecdh), replacing any group list, so
// grpc-tls negotiates secp256r1, not x25519 (docs/servers/stacks/grpc.md).
// The section is process-wide; every other TLS context wsbench makes sets
// the same suite itself (tls::configure).
#include <openssl/bio.h>
#include <openssl/conf.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "common/tls.h"
#include "grpc/grpc_credentials.h"
#include "grpc/grpc_stack.h"

namespace wsb::grpc_stack {
namespace {

// An OpenSSL configuration (config(5)) whose ssl_conf module's
// system_default section SSL_CTX_new applies to each new context.
std::string openssl_defaults() {
  return std::string("wsbench_tls = wsbench_tls_modules\n") +
         "[wsbench_tls_modules]\nssl_conf = wsbench_ssl\n" +
         "[wsbench_ssl]\nsystem_default = wsbench_system_default\n" +
         "[wsbench_system_default]\nCiphersuites = " + tls::kCipherSuite +
         "\nOptions = -SessionTicket\nNumTickets = 0\n";
}

void load_openssl_defaults() {
  static const bool loaded = [] {
    // The system's configuration first: OpenSSL loads it once, on first
    // use, and loaded later it would replace this one.
    if (OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, nullptr) != 1)
      throw std::runtime_error("grpc-tls: OpenSSL initialisation failed");
    const std::string text = openssl_defaults();
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), BIO_free);
    std::unique_ptr<CONF, decltype(&NCONF_free)> conf(NCONF_new(nullptr), NCONF_free);
    long bad_line = 0;
    if (!bio || !conf || NCONF_load_bio(conf.get(), bio.get(), &bad_line) != 1 ||
        CONF_modules_load(conf.get(), "wsbench_tls", 0) <= 0) {
      char reason[256] = "no OpenSSL error";
      if (const unsigned long code = ERR_get_error(); code != 0)
        ERR_error_string_n(code, reason, sizeof reason);
      ERR_clear_error();
      throw std::runtime_error(std::string("grpc-tls: loading OpenSSL's system_default: ") +
                               reason);
    }
    return true;
  }();
  (void)loaded;
}

}  // namespace

std::shared_ptr<::grpc::ServerCredentials> tls_server_credentials() {
  load_openssl_defaults();
  ::grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(
      {tls::identity().private_key_pem, tls::identity().certificate_pem});
  return ::grpc::SslServerCredentials(options);
}

// One credentials object for every client, as an application keeps one
// for its channels: a new connection does not parse the certificate again.
ChannelSecurity tls_channel_security() {
  static const ChannelSecurity shared = [] {
    load_openssl_defaults();
    ::grpc::SslCredentialsOptions options;
    options.pem_root_certs = tls::identity().certificate_pem;
    return ChannelSecurity{::grpc::SslCredentials(options), tls::kServerName};
  }();
  return shared;
}

std::unique_ptr<Server> start_grpc_tls_server(Service& service, const ServerOptions& options) {
  return start_server(service, options, tls_server_credentials());
}

std::unique_ptr<Client> connect_grpc_tls_client(const Endpoint& server, const std::string& codec) {
  return connect_client(server, codec, tls_channel_security());
}

}  // namespace wsb::grpc_stack
