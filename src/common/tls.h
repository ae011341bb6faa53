// The one TLS configuration every TLS row uses (the *-tls stacks and the
// TLS floor), so that the rows differ by their protocol and library and
// not by what they negotiate: TLS 1.3 only, one cipher suite, one key
// exchange group, an ECDSA P-256 certificate made at run time.
//
// The certificate and key are made in memory on first use, once per
// process, and never written to the source tree; libraries that only read
// files (gSOAP) get a private temporary copy (identity_files).
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

namespace wsb::tls {

inline constexpr char kProtocol[] = "TLSv1.3";
// AES-128-GCM: the suite OpenSSL and BoringSSL put first, with AES-NI on
// every x86-64 machine this suite runs on.
inline constexpr char kCipherSuite[] = "TLS_AES_128_GCM_SHA256";
inline constexpr char kGroup[] = "x25519";
// The name the certificate is for, and the one clients check.
inline constexpr char kServerName[] = "localhost";

struct Identity {
  std::string certificate_pem;
  std::string private_key_pem;
};

// This process's self-signed certificate (CN and SAN localhost, SAN IP
// 127.0.0.1, valid for a day) and its key. Throws std::runtime_error.
const Identity& identity();

struct IdentityFiles {
  std::string certificate;  // PEM
  std::string private_key;  // PEM, unencrypted, mode 0600
  // The certificate followed by the key: gSOAP's keyfile.
  std::string certificate_and_key;
};
// identity() in a private directory (mode 0700) under TMPDIR, removed when
// the process exits normally.
const IdentityFiles& identity_files();

struct ContextDeleter {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using Context = std::unique_ptr<SSL_CTX, ContextDeleter>;

enum class Side { server, client };

// Sets kProtocol, kCipherSuite and kGroup on a context a library made
// (Beast's ssl::context, gSOAP's soap->ctx). On the server side it also
// loads identity(); on the client side it trusts only identity()'s
// certificate and verifies the peer. Neither side resumes sessions (no
// session cache, no tickets): a new connection is a full handshake, so a
// handshake row measures one. Throws std::runtime_error.
void configure(SSL_CTX* ctx, Side side);

// A new context, configured.
Context make_context(Side side);

// What a connection negotiated: "TLSv1.3 TLS_AES_128_GCM_SHA256 X25519".
std::string negotiated(SSL* ssl);

// What every TLS row uses, for the run's context: the protocol, suite,
// group, certificate and OpenSSL's version.
std::string description();

}  // namespace wsb::tls
