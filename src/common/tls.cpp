#include "common/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace wsb::tls {
namespace {

[[noreturn]] void fail(const std::string& what) {
  char reason[256] = "no OpenSSL error";
  if (const unsigned long code = ERR_get_error(); code != 0)
    ERR_error_string_n(code, reason, sizeof reason);
  ERR_clear_error();
  throw std::runtime_error("tls: " + what + ": " + reason);
}

void check(int ok, const char* what) {
  if (ok != 1) fail(what);
}

template <typename T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const { Free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Freer<EVP_PKEY, EVP_PKEY_free>>;
using Certificate = std::unique_ptr<X509, Freer<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Freer<BIO, BIO_free_all>>;

std::string drain(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return {data, static_cast<std::size_t>(n)};
}

void add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) fail("certificate extension");
  const int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  check(ok, "adding a certificate extension");
}

Identity make_identity() {
  Key key{EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")};
  if (!key) fail("EC P-256 key");
  Certificate cert{X509_new()};
  if (!cert) fail("X509_new");
  check(X509_set_version(cert.get(), 2), "certificate version");
  check(ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), static_cast<long>(getpid())),
        "certificate serial");
  // An hour back: a client whose clock reads slightly behind still accepts it.
  if (X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600) == nullptr)
    fail("certificate validity");
  X509_NAME* name = X509_get_subject_name(cert.get());
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char*>(kServerName), -1, -1, 0),
        "certificate name");
  check(X509_set_issuer_name(cert.get(), name), "certificate issuer");
  add_extension(cert.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
  check(X509_set_pubkey(cert.get(), key.get()), "certificate key");
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) fail("signing the certificate");

  Bio cert_pem{BIO_new(BIO_s_mem())};
  Bio key_pem{BIO_new(BIO_s_mem())};
  if (!cert_pem || !key_pem) fail("BIO_new");
  check(PEM_write_bio_X509(cert_pem.get(), cert.get()), "certificate PEM");
  check(PEM_write_bio_PrivateKey(key_pem.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr),
        "key PEM");
  return {drain(cert_pem.get()), drain(key_pem.get())};
}

Bio read_only(const std::string& pem) {
  Bio bio{BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))};
  if (!bio) fail("BIO_new_mem_buf");
  return bio;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("tls: cannot write " + path.string());
}

}  // namespace

const Identity& identity() {
  static const Identity made = make_identity();
  return made;
}

const IdentityFiles& identity_files() {
  static const IdentityFiles files = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/wsbench-tls-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr)
      throw std::runtime_error("tls: cannot make a directory under " + dir);
    static const std::filesystem::path made_dir = dir;
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(made_dir, ignored);
    });
    const mode_t old_mask = umask(077);
    const IdentityFiles paths{dir + "/certificate.pem", dir + "/key.pem", dir + "/both.pem"};
    write_file(paths.certificate, identity().certificate_pem);
    write_file(paths.private_key, identity().private_key_pem);
    write_file(paths.certificate_and_key, identity().certificate_pem + identity().private_key_pem);
    umask(old_mask);
    return paths;
  }();
  return files;
}

void configure(SSL_CTX* ctx, Side side) {
  check(SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION), "TLS 1.3 minimum");
  check(SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION), "TLS 1.3 maximum");
  check(SSL_CTX_set_ciphersuites(ctx, kCipherSuite), kCipherSuite);
  check(SSL_CTX_set1_groups_list(ctx, kGroup), kGroup);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  if (side == Side::server) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    check(SSL_CTX_set_num_tickets(ctx, 0), "no session tickets");
    const Bio cert_bio = read_only(identity().certificate_pem);
    const Bio key_bio = read_only(identity().private_key_pem);
    const Certificate cert{PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)};
    const Key key{PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr)};
    if (!cert || !key) fail("reading the identity");
    check(SSL_CTX_use_certificate(ctx, cert.get()), "server certificate");
    check(SSL_CTX_use_PrivateKey(ctx, key.get()), "server key");
    check(SSL_CTX_check_private_key(ctx), "server key matches certificate");
  } else {
    const Bio cert_bio = read_only(identity().certificate_pem);
    const Certificate cert{PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)};
    if (!cert) fail("reading the identity");
    check(X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), cert.get()), "trusting the identity");
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    check(X509_VERIFY_PARAM_set1_host(SSL_CTX_get0_param(ctx), kServerName, 0), "server name");
  }
}

Context make_context(Side side) {
  Context ctx{SSL_CTX_new(side == Side::server ? TLS_server_method() : TLS_client_method())};
  if (!ctx) fail("SSL_CTX_new");
  configure(ctx.get(), side);
  return ctx;
}

std::string negotiated(SSL* ssl) {
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl);
  const char* group = SSL_group_to_name(ssl, SSL_get_negotiated_group(ssl));
  return std::string(SSL_get_version(ssl)) + " " +
         (cipher != nullptr ? SSL_CIPHER_get_name(cipher) : "none") + " " +
         (group != nullptr ? group : "none");
}

std::string description() {
  return std::string(kProtocol) + " " + kCipherSuite + " " + kGroup +
         ", ECDSA P-256 self-signed certificate made at run time, no session resumption, " +
         OpenSSL_version(OPENSSL_VERSION);
}

}  // namespace wsb::tls
