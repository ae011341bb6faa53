// The floors of TLS and new-connection rows (harness/tls_floor.h) and the
// relay's reading of a ServerHello (harness/byte_relay.h), on known data:
// exchanges move exactly their byte counts, a new-connection exchange
// makes exactly one connection and one handshake, the suite negotiated is
// the configured one; and each check seen failing on the fault it guards.
#include "harness/tls_floor.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <ostream>
#include <string>

#include "common/tls.h"
#include "harness/byte_relay.h"
#include "harness/stack_sockets.h"

namespace wsb {
namespace {

constexpr std::size_t kRequest = 100, kResponse = 1000;
// A TLS 1.3 record of n plaintext bytes: a 5-byte header, the content
// type byte and the 16-byte AES-GCM tag.
constexpr std::size_t record(std::size_t n) { return n + 5 + 1 + 16; }

// A floor whose client connects through `relay`.
ConnectionFloor through(ByteRelay*& relay, std::unique_ptr<ByteRelay>& owner,
                        ConnectionFloor::Shape shape) {
  return ConnectionFloor(kRequest, kResponse, ConnectionOptions{}, std::nullopt, shape,
                         [&](std::uint16_t port) {
                           owner = std::make_unique<ByteRelay>(Endpoint{"127.0.0.1", port});
                           owner->set_capture(true);
                           relay = owner.get();
                           return owner->endpoint().port;
                         });
}

TEST(ConnectionFloor, KeptAliveTlsMovesExactlyItsBytesOverOneHandshake) {
  ByteRelay* relay = nullptr;
  std::unique_ptr<ByteRelay> owner;
  ConnectionFloor floor = through(relay, owner, {.tls = true, .new_connection = false});
  EXPECT_EQ(hello_mismatch(server_hello(relay->captured_to_client())), "");
  const int warm = floor.warm_up();
  EXPECT_EQ(floor.negotiated(), "TLSv1.3 TLS_AES_128_GCM_SHA256 x25519");
  relay->reset();
  constexpr int kExchanges = 7;
  for (int i = 0; i < kExchanges; ++i) EXPECT_GT(floor.round_trip(), 0);
  EXPECT_EQ(floor.plain_received(), (warm + kExchanges) * kRequest);
  EXPECT_EQ(floor.plain_sent(), (warm + kExchanges) * kResponse);
  // One record each way per exchange, nothing else on the connection.
  EXPECT_EQ(relay->counts().to_server, kExchanges * record(kRequest));
  EXPECT_EQ(relay->counts().to_client, kExchanges * record(kResponse));
  EXPECT_EQ(floor.connections(), 1u);
  // The fault the new-connection check guards, a floor that keeps its
  // connection: one handshake for every exchange fails here.
  EXPECT_NE(floor.handshakes(), static_cast<std::uint64_t>(warm + kExchanges));
  EXPECT_EQ(floor.handshakes(), 1u);
}

TEST(ConnectionFloor, NewConnectionTlsShakesHandsOncePerExchange) {
  ByteRelay* relay = nullptr;
  std::unique_ptr<ByteRelay> owner;
  ConnectionFloor floor = through(relay, owner, {.tls = true, .new_connection = true});
  constexpr int kExchanges = 5;
  for (int i = 0; i < kExchanges; ++i) {
    relay->reset();
    EXPECT_GT(floor.round_trip(), 0);
    ASSERT_TRUE(relay->wait_until_closed(2000));
    EXPECT_EQ(hello_mismatch(server_hello(relay->captured_to_client())), "") << i;
    // The handshake is on the wire: far more than the exchange's records.
    EXPECT_GT(relay->counts().to_client, record(kResponse) + 300);
  }
  EXPECT_EQ(floor.connections(), static_cast<std::uint64_t>(kExchanges));
  EXPECT_EQ(floor.handshakes(), static_cast<std::uint64_t>(kExchanges));
  EXPECT_EQ(floor.plain_received(), kExchanges * kRequest);
  EXPECT_EQ(floor.plain_sent(), kExchanges * kResponse);
  EXPECT_EQ(floor.negotiated(), "TLSv1.3 TLS_AES_128_GCM_SHA256 x25519");
}

TEST(ConnectionFloor, NewConnectionPlainMovesExactlyItsBytesPerConnection) {
  ByteRelay* relay = nullptr;
  std::unique_ptr<ByteRelay> owner;
  ConnectionFloor floor = through(relay, owner, {.tls = false, .new_connection = true});
  constexpr int kExchanges = 5;
  for (int i = 0; i < kExchanges; ++i) EXPECT_GT(floor.round_trip(), 0);
  ASSERT_TRUE(relay->wait_until_closed(2000));
  EXPECT_EQ(relay->counts().to_server, kExchanges * kRequest);
  EXPECT_EQ(relay->counts().to_client, kExchanges * kResponse);
  EXPECT_EQ(floor.connections(), static_cast<std::uint64_t>(kExchanges));
  EXPECT_EQ(floor.handshakes(), 0u);
  EXPECT_EQ(floor.negotiated(), "");
  // Plain bytes are no TLS: the ServerHello check fails on them.
  EXPECT_NE(hello_mismatch(server_hello(relay->captured_to_client())), "");
}

// A server configured to another suite (or group), a client that accepts
// it: the handshake succeeds, and the check a TLS row makes before timing
// fails.
struct OtherServer {
  const char* suites;
  const char* groups;
  const char* client_groups;
  const char* expected;  // in the mismatch
};

// The test's name: what differs (ctest lists it, not the struct's bytes).
void PrintTo(const OtherServer& s, std::ostream* out) { *out << s.expected; }

class ServerConfiguredOtherwise : public ::testing::TestWithParam<OtherServer> {};

TEST_P(ServerConfiguredOtherwise, FailsTheNegotiationCheck) {
  tls::Context server = tls::make_context(tls::Side::server);
  ASSERT_EQ(SSL_CTX_set_ciphersuites(server.get(), GetParam().suites), 1);
  ASSERT_EQ(SSL_CTX_set1_groups_list(server.get(), GetParam().groups), 1);
  tls::Context client = tls::make_context(tls::Side::client);
  ASSERT_EQ(SSL_CTX_set_ciphersuites(client.get(), "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384"),
            1);
  // Its key share for the server's group first: no HelloRetryRequest.
  ASSERT_EQ(SSL_CTX_set1_groups_list(client.get(), GetParam().client_groups), 1);
  ByteRelay* relay = nullptr;
  std::unique_ptr<ByteRelay> owner;
  ConnectionFloor floor = through(relay, owner, {true, false, server.get(), client.get()});
  floor.warm_up();
  const std::string mismatch = hello_mismatch(server_hello(relay->captured_to_client()));
  EXPECT_NE(mismatch.find(GetParam().expected), std::string::npos) << mismatch;
}

INSTANTIATE_TEST_SUITE_P(Faults, ServerConfiguredOtherwise,
                         ::testing::Values(OtherServer{"TLS_AES_256_GCM_SHA384", "x25519",
                                                       "x25519:P-256", "cipher suite 0x1302"},
                                           OtherServer{"TLS_AES_128_GCM_SHA256", "P-256",
                                                       "P-256:x25519", "key_share group 0x0017"}));

// A ServerHello written out by hand: version, random, empty session id,
// suite 0x1301, no compression, then supported_versions (0x0304) and
// key_share (x25519 with a 32-byte key).
std::string hello_bytes(unsigned char random0) {
  std::string body = {'\x03', '\x03'};
  body += std::string(1, static_cast<char>(random0)) + std::string(31, '\x01');
  body += std::string("\x00\x13\x01\x00", 4);
  const std::string extensions = std::string("\x00\x2b\x00\x02\x03\x04", 6) +
                                 std::string("\x00\x33\x00\x24\x00\x1d\x00\x20", 8) +
                                 std::string(32, '\x02');
  body += std::string(1, '\x00') + static_cast<char>(extensions.size()) + extensions;
  std::string message = std::string("\x02\x00", 2) + static_cast<char>(body.size() >> 8) +
                        static_cast<char>(body.size() & 0xff) + body;
  return std::string("\x16\x03\x03", 3) + static_cast<char>(message.size() >> 8) +
         static_cast<char>(message.size() & 0xff) + message;
}

TEST(ServerHello, EachTlsStackIsHeldToWhatItCanNegotiate) {
  // grpc-tls: gRPC 1.51's TSI sets P-256 on its contexts.
  const ServerHello p256{0x1301, 0x0017, 0x0304};
  EXPECT_EQ(hello_mismatch(p256, expected_hello("grpc-tls")), "");
  EXPECT_NE(hello_mismatch(p256, expected_hello("beast-tls")), "");
  EXPECT_NE(hello_mismatch(kExpectedHello, expected_hello("grpc-tls")), "");
  EXPECT_EQ(describe(kExpectedHello), "TLSv1.3 TLS_AES_128_GCM_SHA256 x25519");
  EXPECT_EQ(describe(p256), "TLSv1.3 TLS_AES_128_GCM_SHA256 secp256r1");
  EXPECT_EQ(describe(ServerHello{0x1399, 0x0099, 0x0304}), "TLSv1.3 0x1399 0x0099");
}

TEST(ServerHello, ReadsAHandWrittenOne) {
  const auto hello = server_hello(hello_bytes(0x00));
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->cipher_suite, 0x1301);
  EXPECT_EQ(hello->group, 0x001d);
  EXPECT_EQ(hello->version, 0x0304);
  EXPECT_EQ(hello_mismatch(hello), "");
  // Cut short, or a HelloRetryRequest (its fixed random starts 0xCF 0x21):
  // none.
  EXPECT_FALSE(server_hello(hello_bytes(0x00).substr(0, 40)));
  std::string retry = hello_bytes(0x00);
  const unsigned char kRetry[32] = {0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11,
                                    0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
                                    0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E,
                                    0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C};
  retry.replace(5 + 4 + 2, 32, reinterpret_cast<const char*>(kRetry), 32);
  EXPECT_FALSE(server_hello(retry));
  EXPECT_NE(hello_mismatch(std::nullopt), "");
}

TEST(StackSockets, ATlsVariantSetsItsPlainStacksOptions) {
  EXPECT_EQ(stack_socket_options("gsoap-tls").client.send_buffer,
            stack_socket_options("gsoap").client.send_buffer);
  EXPECT_TRUE(stack_socket_options("beast-tls").client.nodelay);
  EXPECT_THROW(stack_socket_options("nothing-tls"), std::invalid_argument);
}

}  // namespace
}  // namespace wsb
