// The gsoap stack's timeouts are its sockets' (SO_RCVTIMEO, SO_SNDTIMEO;
// src/soap/soap_socket_io.h), not gSOAP's select() before every recv and
// send: the selects a round trip makes are counted (this binary interposes
// select(), which gSOAP calls through its shared library), the served
// connection's socket is read back, and each timeout still ends what it
// bounds: an idle connection, a stalled body, a trickled one.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <string>
#include <thread>

#include "common/service.h"
#include "common/transport.h"
#include "raw_http.h"
#include "soap/soap_binding.h"
#include "soap/soap_socket_io.h"

namespace {
std::atomic<int> selects{0};
}  // namespace

// Every select() of this process, gSOAP's included, counted on its way to
// the C library's.
extern "C" int select(int nfds, fd_set* read, fd_set* write, fd_set* error, timeval* timeout) {
  using Select = int (*)(int, fd_set*, fd_set*, fd_set*, timeval*);
  static const auto real = reinterpret_cast<Select>(dlsym(RTLD_NEXT, "select"));
  ++selects;
  return real(nfds, read, write, error, timeout);
}

namespace wsb {
namespace {

using std::chrono::milliseconds;
using testing::RawConnection;

// This process's TCP socket from port `local` to port `peer`; -1 if none.
int socket_between(std::uint16_t local, std::uint16_t peer) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    sockaddr_in here{};
    sockaddr_in there{};
    socklen_t here_size = sizeof here;
    socklen_t there_size = sizeof there;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&here), &here_size) != 0 ||
        ::getpeername(fd, reinterpret_cast<sockaddr*>(&there), &there_size) != 0 ||
        here.sin_family != AF_INET)
      continue;
    if (ntohs(here.sin_port) == local && ntohs(there.sin_port) == peer) return fd;
  }
  return -1;
}

// A socket's SO_RCVTIMEO or SO_SNDTIMEO, in whole seconds.
long timeout_s(int fd, int option) {
  timeval t{};
  socklen_t size = sizeof t;
  EXPECT_EQ(::getsockopt(fd, SOL_SOCKET, option, &t, &size), 0);
  return t.tv_sec;
}

bool blocking(int fd) { return (::fcntl(fd, F_GETFL) & O_NONBLOCK) == 0; }

// The counter sees gSOAP's selects: its own recv with a recv_timeout, as
// the stack used to read, selects first.
TEST(GsoapSocketIo, TheCounterSeesGsoapsOwnSelects) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  soap::Context* ctx = soap_new();
  ctx->socket = fds[0];
  ctx->recv_timeout = 1;
  char byte = 0;
  const int before = selects;
  EXPECT_EQ(ctx->frecv(ctx, &byte, 1), 1u);
  EXPECT_GE(selects - before, 1);
  ctx->socket = SOAP_INVALID_SOCKET;
  soap_free(ctx);
  ::close(fds[0]);
  ::close(fds[1]);
}

class GsoapTimeouts : public ::testing::Test {
 protected:
  static constexpr int kIdleSeconds = 7;
  void start(int idle_s, int request_s) {
    ServerOptions options;
    options.limits.keepalive_timeout_s = idle_s;
    options.concurrency.request_timeout_s = request_s;
    server_ = find_stack("gsoap").start_server(service_, options);
  }
  Endpoint at() const { return server_->endpoint(); }
  Service service_;
  std::unique_ptr<Server> server_;
};

// One select per call at most: gSOAP's check, before it reuses a
// keep-alive connection, that the server has not closed it (its anchor
// makes the same one). With gSOAP's recv and send timeouts it was five.
TEST_F(GsoapTimeouts, ACallMakesNoSelectPerRecvOrSend) {
  start(kIdleSeconds, 60);
  const auto client = find_stack("gsoap").connect(at(), "soap");
  ASSERT_EQ(client->ping(), kPingReply);
  constexpr int kCalls = 50;
  const int before = selects;
  for (int i = 0; i < kCalls; ++i) ASSERT_EQ(client->ping(), kPingReply);
  EXPECT_LE(selects - before, kCalls) << "selects in " << kCalls << " pings";
}

// The served connection's socket blocks with the idle timeout as its
// SO_RCVTIMEO and SO_SNDTIMEO; so does the client's, with its own.
TEST_F(GsoapTimeouts, ConnectionsCarryTheIdleTimeoutOnTheirSockets) {
  start(kIdleSeconds, 60);
  const auto client = find_stack("gsoap").connect(at(), "soap");
  ASSERT_EQ(client->ping(), kPingReply);
  const int served = socket_between(at().port, client->local_port());
  ASSERT_GE(served, 0) << "no served socket for the client's port " << client->local_port();
  EXPECT_EQ(timeout_s(served, SO_RCVTIMEO), kIdleSeconds);
  EXPECT_EQ(timeout_s(served, SO_SNDTIMEO), kIdleSeconds);
  EXPECT_TRUE(blocking(served));
  const int own = socket_between(client->local_port(), at().port);
  ASSERT_GE(own, 0);
  EXPECT_EQ(timeout_s(own, SO_RCVTIMEO), 120);
  EXPECT_EQ(timeout_s(own, SO_SNDTIMEO), 120);
  EXPECT_TRUE(blocking(own));
}

std::string ping_head(const Endpoint& at, std::size_t body_bytes) {
  return "POST / HTTP/1.1\r\nHost: " + at.to_string() +
         "\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: \"\"\r\nContent-Length: " +
         std::to_string(body_bytes) + "\r\n\r\n";
}

constexpr std::string_view kPingEnvelope =
    "<?xml version=\"1.0\"?><SOAP-ENV:Envelope "
    "xmlns:SOAP-ENV=\"http://schemas.xmlsoap.org/soap/envelope/\" "
    "xmlns:ns=\"urn:wsbench\"><SOAP-ENV:Body><ns:ping/></SOAP-ENV:Body></SOAP-ENV:Envelope>";

// A connection idle after its reply is closed after the idle timeout.
TEST_F(GsoapTimeouts, IdleConnectionsAreClosedAfterTheTimeout) {
  start(1, 60);
  RawConnection c(at());
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_EQ(
      testing::roundtrip(c, ping_head(at(), kPingEnvelope.size()) + std::string(kPingEnvelope))
          .status,
      200);
  c.set_receive_timeout(milliseconds(5000));
  EXPECT_TRUE(c.closed_by_server());
  const auto waited = std::chrono::steady_clock::now() - begin;
  EXPECT_GE(waited, milliseconds(900));
  EXPECT_LT(waited, milliseconds(4000));
}

// A body that stops half-way is answered with 408 after the idle timeout.
TEST_F(GsoapTimeouts, AStalledBodyIs408AfterTheIdleTimeout) {
  start(1, 60);
  RawConnection c(at());
  const std::string body(kPingEnvelope);
  ASSERT_TRUE(c.send(ping_head(at(), body.size()) + body.substr(0, body.size() / 2)));
  c.set_receive_timeout(milliseconds(5000));
  const testing::RawResponse r = c.read_response();
  EXPECT_EQ(r.status, 408);
  EXPECT_NE(r.body.find("no byte of the request body came for 1 s"), std::string::npos) << r.body;
}

// A body trickled a byte at a time, each within the idle timeout, is cut off
// at the request timeout (gSOAP's transfer_timeout) with 408.
TEST_F(GsoapTimeouts, ATrickledBodyIs408AfterTheRequestTimeout) {
  start(3, 1);
  RawConnection c(at());
  const std::string body(kPingEnvelope);
  ASSERT_TRUE(c.send(ping_head(at(), body.size())));
  // Bounded: the whole body in 200 ms steps would take over 30 s; the
  // server answers after 1-2 s.
  for (std::size_t i = 0; i < 25 && c.send(body.substr(i, 1)); ++i)
    std::this_thread::sleep_for(milliseconds(200));
  c.set_receive_timeout(milliseconds(5000));
  const testing::RawResponse r = c.read_response();
  EXPECT_EQ(r.status, 408);
  EXPECT_NE(r.body.find("took longer than 1 s"), std::string::npos) << r.body;
}

// The socket I/O alone: a wait the kernel ends, and an overdue transfer,
// each end a read or write and say which.
TEST(GsoapSocketIo, KernelTimeoutsAndOverdueTransfersEndReadsAndWrites) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  soap::set_socket_timeouts(fds[0], 1);
  soap::Context* ctx = soap_new();
  ctx->socket = fds[0];
  char buf[64];
  soap::IoStop stop = soap::IoStop::none;
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_EQ(soap::socket_recv(ctx, buf, sizeof buf, stop), 0u);
  EXPECT_EQ(stop, soap::IoStop::idle);
  EXPECT_GE(std::chrono::steady_clock::now() - begin, milliseconds(900));

  // Nobody reads the other end: the write stops once the buffers are full.
  const std::string block(1 << 20, 'x');
  stop = soap::IoStop::none;
  int rc = SOAP_OK;
  for (int i = 0; i < 64 && rc == SOAP_OK; ++i)
    rc = soap::socket_send(ctx, block.data(), block.size(), stop);
  EXPECT_EQ(rc, SOAP_EOF);
  EXPECT_EQ(stop, soap::IoStop::idle);

  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  ctx->transfer_timeout = 1;
  ctx->start = std::time(nullptr) - 5;
  stop = soap::IoStop::none;
  EXPECT_EQ(soap::socket_recv(ctx, buf, sizeof buf, stop), 0u);
  EXPECT_EQ(stop, soap::IoStop::transfer_timeout);
  ctx->start = std::time(nullptr);
  stop = soap::IoStop::none;
  EXPECT_EQ(soap::socket_recv(ctx, buf, sizeof buf, stop), 1u);
  EXPECT_EQ(stop, soap::IoStop::none);

  ctx->socket = SOAP_INVALID_SOCKET;
  soap_free(ctx);
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace wsb
