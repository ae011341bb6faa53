// The beast-tls stack against what is not a well-behaved TLS client: a
// plaintext HTTP client, a broken handshake, a client that stalls in the
// handshake or after it (all closed, none hanging, the server still
// serving), and the beast server's limits (413, 431) answered over TLS.
// The stack's operations are tests/servers/stack_conformance_test's.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "common/clock.h"
#include "common/service.h"
#include "common/tls.h"
#include "common/transport.h"

namespace wsb {
namespace {

// A TCP connection to the server that gives up reading after `limit`.
int connect_to(const Endpoint& server, std::chrono::seconds limit) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server.port);
  inet_pton(AF_INET, server.host.c_str(), &addr.sin_addr);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const timeval tv{static_cast<time_t>(limit.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

// Reads until the server closes or `limit` passes; returns the seconds
// it took for the server to close, or -1 if it did not.
double seconds_until_closed(int fd) {
  const std::int64_t start = now_ns();
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
    if (got == 0 || (got < 0 && errno == ECONNRESET)) return (now_ns() - start) * 1e-9;
    if (got < 0) return -1;  // the receive timeout: still open
  }
}

// A TLS client speaking raw bytes over tls::make_context(client).
class TlsPeer {
 public:
  explicit TlsPeer(const Endpoint& server) : context_(tls::make_context(tls::Side::client)) {
    fd_ = connect_to(server, std::chrono::seconds(10));
    ssl_ = SSL_new(context_.get());
    SSL_set_fd(ssl_, fd_);
    connected_ = SSL_connect(ssl_) == 1;
  }
  ~TlsPeer() {
    SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }
  bool write(const std::string& bytes) {
    return SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) ==
           static_cast<int>(bytes.size());
  }
  // Everything the server sends until it closes (or the read times out).
  std::string read_all() {
    std::string got;
    char buffer[4096];
    int n = 0;
    while ((n = SSL_read(ssl_, buffer, sizeof buffer)) > 0) got.append(buffer, n);
    return got;
  }
  int status_of(const std::string& reply) const {
    return reply.size() > 12 && reply.starts_with("HTTP/1.1 ") ? std::stoi(reply.substr(9, 3)) : 0;
  }

 private:
  tls::Context context_;
  int fd_ = -1;
  SSL* ssl_ = nullptr;
  bool connected_ = false;
};

class BeastTls : public ::testing::Test {
 protected:
  static constexpr std::size_t kMaxBody = 4096;
  void SetUp() override {
    ServerOptions options;
    options.limits.max_body_bytes = kMaxBody;
    // A 1 s deadline on the handshake and each read: a stalled client is
    // closed within it.
    options.limits.keepalive_timeout_s = 1;
    server_ = find_stack("beast-tls").start_server(service_, options);
  }
  void expect_still_serving() {
    const auto client = find_stack("beast-tls").connect(server_->endpoint(), "json");
    EXPECT_EQ(client->ping(), kPingReply);
  }
  Service service_;
  std::unique_ptr<Server> server_;
};

// Replies and requests over one TLS record and under it, on one
// connection (a two-buffer write over 16 KiB once stalled).
TEST_F(BeastTls, ShortAndLongMessagesShareAConnection) {
  const auto client = find_stack("beast-tls").connect(server_->endpoint(), "json");
  Payload out;
  for (const auto& spec : {PayloadSpec{Kind::text}, PayloadSpec{Kind::message_a, 100},
                           PayloadSpec{Kind::message_b, 128 * 1024}, PayloadSpec{Kind::ints, 0}}) {
    client->get(spec, out);
    EXPECT_EQ(describe_difference(generate(spec), out), "") << spec.label();
  }
  const Payload big = generate(PayloadSpec{Kind::binary, 2000});  // under the 4 KiB body limit
  client->echo(big, out);
  EXPECT_EQ(describe_difference(big, out), "");
}

TEST_F(BeastTls, PlaintextHttpClientIsClosedWithoutAReply) {
  const int fd = connect_to(server_->endpoint(), std::chrono::seconds(5));
  ASSERT_GE(fd, 0);
  const std::string get = "GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ASSERT_EQ(::send(fd, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
  const double closed = seconds_until_closed(fd);
  ::close(fd);
  EXPECT_GE(closed, 0) << "the server kept a plaintext client's connection open";
  EXPECT_LT(closed, 2.0);
  expect_still_serving();
}

TEST_F(BeastTls, BrokenHandshakeIsClosed) {
  const int fd = connect_to(server_->endpoint(), std::chrono::seconds(5));
  ASSERT_GE(fd, 0);
  // A handshake record header announcing a ClientHello, then garbage.
  std::string junk = "\x16\x03\x01\x00\x40\x01\x00\x00\x3c";
  junk.append(60, '\xff');
  ASSERT_GT(::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL), 0);
  const double closed = seconds_until_closed(fd);
  ::close(fd);
  EXPECT_GE(closed, 0) << "the server kept a broken handshake's connection open";
  EXPECT_LT(closed, 2.0);
  expect_still_serving();
}

TEST_F(BeastTls, ClientStalledMidHandshakeIsClosedWithinTheTimeout) {
  const int fd = connect_to(server_->endpoint(), std::chrono::seconds(5));
  ASSERT_GE(fd, 0);
  // The first bytes of a ClientHello record, and nothing more.
  const std::string start = "\x16\x03\x01\x02\x00\x01";
  ASSERT_GT(::send(fd, start.data(), start.size(), MSG_NOSIGNAL), 0);
  const double closed = seconds_until_closed(fd);
  ::close(fd);
  EXPECT_GE(closed, 0) << "a stalled handshake was not closed within 5 s";
  EXPECT_GT(closed, 0.5) << "closed before its 1 s deadline";
  expect_still_serving();
}

TEST_F(BeastTls, ClientIdleAfterHandshakeIsClosedWithinTheTimeout) {
  TlsPeer peer(server_->endpoint());
  ASSERT_TRUE(peer.connected());
  const std::int64_t start = now_ns();
  EXPECT_EQ(peer.read_all(), "");
  EXPECT_LT((now_ns() - start) * 1e-9, 4.0);
}

TEST_F(BeastTls, OversizedBodyIs413) {
  TlsPeer peer(server_->endpoint());
  ASSERT_TRUE(peer.connected());
  const std::string body(kMaxBody + 1, 'x');
  ASSERT_TRUE(
      peer.write("POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                 "application/json\r\nContent-Length: " +
                 std::to_string(body.size()) + "\r\n\r\n" + body));
  EXPECT_EQ(peer.status_of(peer.read_all()), 413);
}

TEST_F(BeastTls, OversizedHeaderIs431) {
  TlsPeer peer(server_->endpoint());
  ASSERT_TRUE(peer.connected());
  ASSERT_TRUE(peer.write("GET /ping HTTP/1.1\r\nHost: localhost\r\nX-Big: " +
                         std::string(ServerLimits{}.max_header_bytes, 'a') + "\r\n\r\n"));
  EXPECT_EQ(peer.status_of(peer.read_all()), 431);
}

TEST_F(BeastTls, TooManyHeaderFieldsIs431) {
  TlsPeer peer(server_->endpoint());
  ASSERT_TRUE(peer.connected());
  std::string fields;
  for (std::size_t i = 0; i <= ServerLimits{}.max_header_fields; ++i)
    fields += "X-F" + std::to_string(i) + ": 1\r\n";
  ASSERT_TRUE(peer.write("GET /ping HTTP/1.1\r\nHost: localhost\r\n" + fields + "\r\n"));
  EXPECT_EQ(peer.status_of(peer.read_all()), 431);
}

TEST_F(BeastTls, MalformedRequestIs400) {
  TlsPeer peer(server_->endpoint());
  ASSERT_TRUE(peer.connected());
  ASSERT_TRUE(peer.write("NOT HTTP AT ALL\r\n\r\n"));
  EXPECT_EQ(peer.status_of(peer.read_all()), 400);
}

}  // namespace
}  // namespace wsb
