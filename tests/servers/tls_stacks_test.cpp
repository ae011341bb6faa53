// The TLS stacks (gsoap-tls, grpc-tls) at their TLS edge: a client that does
// not speak TLS, and one that stalls in the handshake, are refused without
// holding up the server, and a connection negotiates the configured
// protocol and suite, read from the ServerHello (plaintext in TLS 1.3) as
// the bytes cross a relay. The operations themselves are the per-stack
// suites' (stack_conformance_test and the others iterate every stack).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>

#include "common/service.h"
#include "common/tls.h"
#include "common/transport.h"
#include "harness/byte_relay.h"
#include "raw_http.h"

namespace wsb {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// What a ServerHello says: its protocol (supported_versions), suite and key
// exchange group (key_share).
struct ServerHello {
  std::uint16_t version = 0;
  std::uint16_t cipher_suite = 0;
  std::uint16_t group = 0;
};

std::uint16_t be16(std::string_view s, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(s[at]) << 8) |
                                    static_cast<unsigned char>(s[at + 1]));
}

// The ServerHello at the start of what a server sent: a handshake record
// (type 22) whose first message is a ServerHello (type 2). nullopt if the
// bytes are anything else.
std::optional<ServerHello> read_server_hello(std::string_view bytes) {
  if (bytes.size() < 5 || bytes[0] != 22) return std::nullopt;
  const std::size_t record = be16(bytes, 3);
  if (bytes.size() < 5 + record) return std::nullopt;
  std::string_view m = bytes.substr(5, record);
  // type(1) length(3) legacy_version(2) random(32) session_id(1 + n)
  if (m.size() < 39 || m[0] != 2) return std::nullopt;
  std::size_t at = 38;
  at += 1 + static_cast<unsigned char>(m[at]);
  if (m.size() < at + 5) return std::nullopt;
  ServerHello hello;
  hello.cipher_suite = be16(m, at);
  at += 3;  // suite, compression method
  const std::size_t end = at + 2 + be16(m, at);
  if (m.size() < end) return std::nullopt;
  for (at += 2; at + 4 <= end;) {
    const std::uint16_t type = be16(m, at);
    const std::size_t length = be16(m, at + 2);
    at += 4;
    if (at + length > end) return std::nullopt;
    if (type == 0x002b && length == 2) hello.version = be16(m, at);
    if (type == 0x0033 && length >= 2) hello.group = be16(m, at);
    at += length;
  }
  return hello;
}

// The check a TLS row makes of what was negotiated: "" if the ServerHello
// shows TLS 1.3 with tls::kCipherSuite (0x1301) and `group`, else what
// differs.
std::string check_negotiated(std::string_view server_bytes, std::uint16_t group) {
  const auto hello = read_server_hello(server_bytes);
  if (!hello) return "no ServerHello in the server's first bytes";
  std::string wrong;
  const auto hex = [](std::uint16_t v) {
    char text[8];
    std::snprintf(text, sizeof text, "0x%04x", v);
    return std::string(text);
  };
  if (hello->version != 0x0304) wrong += " version " + hex(hello->version);
  if (hello->cipher_suite != 0x1301) wrong += " cipher suite " + hex(hello->cipher_suite);
  if (hello->group != group) wrong += " group " + hex(hello->group);
  return wrong;
}

// x25519 (tls::kGroup) and P-256, which gRPC 1.51 sets on its contexts.
constexpr std::uint16_t kX25519 = 0x001d;
constexpr std::uint16_t kP256 = 0x0017;

struct TlsStack {
  const char* name;
  const char* codec;
  std::uint16_t group;  // the key exchange it negotiates
};

void PrintTo(const TlsStack& stack, std::ostream* out) { *out << stack.name; }

constexpr TlsStack kTlsStacks[] = {{"gsoap-tls", "soap", kX25519}, {"grpc-tls", "protobuf", kP256}};

class TlsStackEdge : public ::testing::TestWithParam<TlsStack> {
 protected:
  void SetUp() override {
    // A second's grace for a handshake (the shorter of the two limits).
    options_.limits.keepalive_timeout_s = 1;
    options_.concurrency.request_timeout_s = 1;
    server_ = find_stack(GetParam().name).start_server(service_, options_);
  }
  void TearDown() override { server_->stop(); }

  void expect_serves() {
    const auto client = find_stack(GetParam().name).connect(server_->endpoint(), GetParam().codec);
    EXPECT_EQ(client->ping(), kPingReply);
  }

  Service service_;
  ServerOptions options_;
  std::unique_ptr<Server> server_;
};

// Plaintext HTTP to a TLS server: the connection closes, with no HTTP reply,
// and the server goes on serving.
TEST_P(TlsStackEdge, NonTlsClientIsRefused) {
  testing::RawConnection raw(server_->endpoint());
  raw.set_receive_timeout(milliseconds(5000));
  const auto start = Clock::now();
  raw.send("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_TRUE(raw.closed_by_server());
  EXPECT_LT(Clock::now() - start, milliseconds(4000));
  expect_serves();
}

// A client that connects and never finishes its handshake (here: half a
// record header) is dropped after the server's timeout; meanwhile, and
// after, the server serves others.
TEST_P(TlsStackEdge, StalledHandshakeTimesOut) {
  testing::RawConnection raw(server_->endpoint());
  raw.set_receive_timeout(milliseconds(8000));
  ASSERT_TRUE(raw.send(std::string_view("\x16\x03\x01", 3)));
  expect_serves();
  const auto start = Clock::now();
  EXPECT_TRUE(raw.closed_by_server());
  EXPECT_LT(Clock::now() - start, milliseconds(7000));
  expect_serves();
}

// The kernel's timeouts still end a TLS connection's waits: one idle past
// the server's idle timeout is closed, and the client's next call says the
// connection was lost (it does not reconnect). grpc-tls's idle connection is
// gRPC's to close and reopen (GOAWAY): the plain grpc stack's behaviour.
TEST_P(TlsStackEdge, IdleConnectionIsClosedAfterTheTimeout) {
  if (std::string_view(GetParam().name) != "gsoap-tls")
    GTEST_SKIP() << "gRPC reopens a channel's connection after GOAWAY";
  const auto client = find_stack(GetParam().name).connect(server_->endpoint(), GetParam().codec);
  EXPECT_EQ(client->ping(), kPingReply);
  std::this_thread::sleep_for(milliseconds(2500));
  try {
    client->ping();
    ADD_FAILURE() << "an idle connection outlived the server's idle timeout";
  } catch (const CallError& e) {
    EXPECT_NE(std::string(e.what()).find("not reconnecting"), std::string::npos) << e.what();
  }
  expect_serves();
}

// Stopping a server does not wait out a handshake in progress (here with
// the default timeouts, a minute).
TEST(TlsStackStop, AStalledHandshakeDoesNotDelayStop) {
  for (const auto& stack : kTlsStacks) {
    Service service;
    auto server = find_stack(stack.name).start_server(service, ServerOptions{});
    testing::RawConnection raw(server->endpoint());
    ASSERT_TRUE(raw.send(std::string_view("\x16\x03\x01", 3)));
    std::this_thread::sleep_for(milliseconds(200));  // the server is in the handshake
    const auto start = Clock::now();
    server->stop();
    EXPECT_LT(Clock::now() - start, milliseconds(3000)) << stack.name;
  }
}

// What a connection negotiates, from the ServerHello on the wire.
TEST_P(TlsStackEdge, NegotiatesTheConfiguredSuite) {
  ByteRelay relay(server_->endpoint());
  relay.set_capture(true);
  const auto client = find_stack(GetParam().name).connect(relay.endpoint(), GetParam().codec);
  EXPECT_EQ(client->ping(), kPingReply);
  EXPECT_EQ(check_negotiated(relay.captured_to_client(), GetParam().group), "");
}

// A TLS server whose certificate is not tls::identity()'s (another key,
// also for localhost): the stack's client must refuse it. Accepts until
// destroyed, each connection a handshake and a close.
class ImpostorServer {
 public:
  ImpostorServer() : ctx_(tls::make_context(tls::Side::server)) {
    EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
    X509* cert = X509_new();
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(tls::kServerName), -1, -1, 0);
    X509_set_issuer_name(cert, X509_get_subject_name(cert));
    X509_set_pubkey(cert, key);
    X509_sign(cert, key, EVP_sha256());
    EXPECT_EQ(SSL_CTX_use_certificate(ctx_.get(), cert), 1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey(ctx_.get(), key), 1);
    // Both stacks' groups (grpc-tls offers P-256 only), so that what fails
    // is the certificate, not the key exchange.
    EXPECT_EQ(SSL_CTX_set1_groups_list(ctx_.get(), "X25519:P-256"), 1);
    X509_free(cert);
    EVP_PKEY_free(key);
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(::listen(listener_, 8), 0);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    endpoint_ = {"127.0.0.1", ntohs(addr.sin_port)};
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{listener_, POLLIN, 0};
        if (::poll(&p, 1, 50) != 1) continue;
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) continue;
        timeval wait{2, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
        SSL* ssl = SSL_new(ctx_.get());
        SSL_set_fd(ssl, fd);
        SSL_accept(ssl);
        SSL_free(ssl);
        ::close(fd);
        ERR_clear_error();
      }
    });
  }
  ~ImpostorServer() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  Endpoint endpoint() const { return endpoint_; }

 private:
  tls::Context ctx_;
  int listener_ = -1;
  Endpoint endpoint_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The client verifies the server: a certificate it was not given is refused
// when connecting.
TEST_P(TlsStackEdge, ClientRefusesAnUnknownCertificate) {
  ImpostorServer impostor;
  EXPECT_THROW(find_stack(GetParam().name).connect(impostor.endpoint(), GetParam().codec),
               CallError);
}

INSTANTIATE_TEST_SUITE_P(TlsStacks, TlsStackEdge, ::testing::ValuesIn(kTlsStacks),
                         [](const auto& p) {
                           std::string name = p.param.name;
                           for (auto& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// A handshake between two contexts in memory; returns what the server sent
// first (its ServerHello flight).
std::string server_flight(SSL_CTX* server_ctx, SSL_CTX* client_ctx) {
  SSL* server = SSL_new(server_ctx);
  SSL* client = SSL_new(client_ctx);
  BIO* to_server = BIO_new(BIO_s_mem());
  BIO* to_client = BIO_new(BIO_s_mem());
  BIO_up_ref(to_server);
  BIO_up_ref(to_client);
  SSL_set_bio(server, to_server, to_client);
  SSL_set_bio(client, to_client, to_server);
  SSL_connect(client);  // writes the ClientHello, wants the reply
  SSL_accept(server);   // reads it, writes the ServerHello flight
  char* data = nullptr;
  const long n = BIO_ctrl(to_client, BIO_CTRL_INFO, 0, static_cast<void*>(&data));
  std::string flight(data, static_cast<std::size_t>(n));
  SSL_free(client);
  SSL_free(server);
  ERR_clear_error();
  return flight;
}

// The check sees a suite other than the configured one: a server and
// client both set to TLS_AES_256_GCM_SHA384 fail it; the shared
// configuration passes it.
TEST(TlsNegotiationCheck, FailsOnAnotherSuite) {
  const auto server = tls::make_context(tls::Side::server);
  const auto client = tls::make_context(tls::Side::client);
  EXPECT_EQ(check_negotiated(server_flight(server.get(), client.get()), kX25519), "");

  ASSERT_EQ(SSL_CTX_set_ciphersuites(server.get(), "TLS_AES_256_GCM_SHA384"), 1);
  ASSERT_EQ(SSL_CTX_set_ciphersuites(client.get(), "TLS_AES_256_GCM_SHA384"), 1);
  EXPECT_EQ(check_negotiated(server_flight(server.get(), client.get()), kX25519),
            " cipher suite 0x1302");
  EXPECT_EQ(check_negotiated("HTTP/1.1 200 OK\r\n\r\n", kX25519),
            "no ServerHello in the server's first bytes");
}

}  // namespace
}  // namespace wsb
