// src/common/tls.h: two configured contexts negotiate exactly the named
// protocol, suite and group; a client that does not trust the identity, or
// checks another name, or offers only another suite, is refused.
#include "common/tls.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace wsb::tls {
namespace {

struct SslDeleter {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};
using Ssl = std::unique_ptr<SSL, SslDeleter>;

// One handshake over a socket pair; returns the client's view of what was
// negotiated, or "refused" if either side failed.
std::string handshake(SSL_CTX* server_ctx, SSL_CTX* client_ctx) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return "socketpair failed";
  Ssl server{SSL_new(server_ctx)};
  Ssl client{SSL_new(client_ctx)};
  SSL_set_fd(server.get(), fds[0]);
  SSL_set_fd(client.get(), fds[1]);
  int server_ok = 0;
  std::thread peer([&] {
    server_ok = SSL_accept(server.get());
    // Unblocks a client still waiting after the server gave up.
    shutdown(fds[0], SHUT_RDWR);
  });
  const int client_ok = SSL_connect(client.get());
  if (client_ok != 1) shutdown(fds[1], SHUT_RDWR);
  peer.join();
  std::string result = client_ok == 1 && server_ok == 1 ? negotiated(client.get()) : "refused";
  ERR_clear_error();
  close(fds[0]);
  close(fds[1]);
  return result;
}

TEST(Tls, ConfiguredPeersNegotiateTheNamedSuite) {
  const Context server = make_context(Side::server);
  const Context client = make_context(Side::client);
  EXPECT_EQ(handshake(server.get(), client.get()),
            std::string(kProtocol) + " " + kCipherSuite + " " + kGroup);
}

TEST(Tls, AClientThatDoesNotTrustTheIdentityIsRefused) {
  const Context server = make_context(Side::server);
  Context client{SSL_CTX_new(TLS_client_method())};
  SSL_CTX_set_verify(client.get(), SSL_VERIFY_PEER, nullptr);
  EXPECT_EQ(handshake(server.get(), client.get()), "refused");
}

TEST(Tls, AClientCheckingAnotherNameIsRefused) {
  const Context server = make_context(Side::server);
  const Context client = make_context(Side::client);
  ASSERT_EQ(X509_VERIFY_PARAM_set1_host(SSL_CTX_get0_param(client.get()), "example.org", 0), 1);
  EXPECT_EQ(handshake(server.get(), client.get()), "refused");
}

TEST(Tls, AClientOfferingOnlyAnotherSuiteIsRefused) {
  const Context server = make_context(Side::server);
  const Context client = make_context(Side::client);
  ASSERT_EQ(SSL_CTX_set_ciphersuites(client.get(), "TLS_CHACHA20_POLY1305_SHA256"), 1);
  EXPECT_EQ(handshake(server.get(), client.get()), "refused");
}

TEST(Tls, NoSessionIsResumable) {
  // A session the server would let a client resume makes a "handshake"
  // row measure a resumption: the server issues no tickets.
  const Context server = make_context(Side::server);
  const Context client = make_context(Side::client);
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Ssl s{SSL_new(server.get())};
  Ssl c{SSL_new(client.get())};
  SSL_set_fd(s.get(), fds[0]);
  SSL_set_fd(c.get(), fds[1]);
  std::thread peer([&] {
    if (SSL_accept(s.get()) == 1) SSL_write(s.get(), "x", 1);
  });
  ASSERT_EQ(SSL_connect(c.get()), 1);
  char byte = 0;
  ASSERT_EQ(SSL_read(c.get(), &byte, 1), 1);  // tickets, if any, arrive before it
  peer.join();
  const SSL_SESSION* session = SSL_get_session(c.get());
  ASSERT_NE(session, nullptr);
  EXPECT_FALSE(SSL_SESSION_is_resumable(session));
  close(fds[0]);
  close(fds[1]);
}

TEST(Tls, IdentityFilesHoldTheIdentityPrivately) {
  const IdentityFiles& files = identity_files();
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  EXPECT_EQ(read(files.certificate), identity().certificate_pem);
  EXPECT_EQ(read(files.private_key), identity().private_key_pem);
  EXPECT_EQ(read(files.certificate_and_key),
            identity().certificate_pem + identity().private_key_pem);
  const auto perms = std::filesystem::status(files.private_key).permissions();
  EXPECT_EQ(perms & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
            std::filesystem::perms::none);
}

}  // namespace
}  // namespace wsb::tls
