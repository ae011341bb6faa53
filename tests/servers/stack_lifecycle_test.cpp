// Server lifecycle for every registered stack: start, serve, refuse what
// it cannot serve, stop, restart. A new stack is tested here by registering
// it; what only one stack does is in its own test file.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "common/service.h"
#include "common/transport.h"
#include "raw_http.h"
#include "stack_fixture.h"

namespace wsb {
namespace {

using testing::RawConnection;
using testing::RawResponse;

std::vector<std::string> stack_names() {
  std::vector<std::string> names;
  for (const auto& stack : all_stacks()) names.push_back(stack.name);
  return names;
}

class StackLifecycle : public ::testing::TestWithParam<std::string> {
 protected:
  const StackEntry& stack() const { return find_stack(GetParam()); }
  // The stack's first codec: lifecycle does not depend on the encoding.
  const std::string& codec() const { return stack().codecs.front(); }
  std::unique_ptr<Server> start(const ServerOptions& options = {}) {
    return stack().start_server(service_, options);
  }
  std::unique_ptr<Client> connect(const Endpoint& at) const { return stack().connect(at, codec()); }
  // A client that cannot reach its server fails with a CallError, either
  // when it connects or, for a stack that connects lazily, on its first call.
  void expect_unreachable(const Endpoint& at) const {
    EXPECT_THROW(connect(at)->ping(), CallError);
  }
  Service service_;
};

TEST_P(StackLifecycle, StopClosesConnectionsAndIsIdempotent) {
  auto server = start();
  EXPECT_NE(server->endpoint().port, 0) << "an ephemeral port is resolved";
  EXPECT_EQ(server->endpoint().host, "127.0.0.1") << "loopback unless told otherwise";
  const auto client = connect(server->endpoint());
  EXPECT_EQ(client->ping(), kPingReply);
  RawConnection idle(server->endpoint());  // open, never used
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto begin = std::chrono::steady_clock::now();
  server->stop();
  // xmlrpc-c's Abyss polls for its connection threads every 2 s; no stack
  // may wait for an idle connection's keep-alive timeout (60 s).
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5));
  // An HTTP/2 server (grpc) sends its SETTINGS before the client speaks.
  EXPECT_TRUE(testing::speaks_http1(GetParam()) ? idle.closed_by_server()
                                                : idle.closed_by_server_after_its_bytes());
  server->stop();
  EXPECT_THROW(client->ping(), CallError) << "stopped means closed";
  expect_unreachable(server->endpoint());
}

TEST_P(StackLifecycle, RestartsOnTheSamePort) {
  auto first = start();
  const Endpoint at = first->endpoint();
  {
    const auto client = connect(at);
    EXPECT_EQ(client->ping(), kPingReply);
  }
  first->stop();
  ServerOptions same;
  same.listen = at;
  const auto second = start(same);
  EXPECT_EQ(second->endpoint().port, at.port);
  EXPECT_EQ(connect(at)->ping(), kPingReply);
}

TEST_P(StackLifecycle, PortInUseIsAClearError) {
  const auto first = start();
  ServerOptions same;
  same.listen = first->endpoint();
  try {
    start(same);
    ADD_FAILURE() << "two servers on one port";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(first->endpoint().to_string()), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(connect(first->endpoint())->ping(), kPingReply) << "the first server is unharmed";
}

TEST_P(StackLifecycle, PinnedServerServes) {
  ServerOptions options;
  options.cpu = 0;
  const auto server = start(options);
  EXPECT_EQ(connect(server->endpoint())->ping(), kPingReply);
}

TEST_P(StackLifecycle, UnknownCodecsAndDeadEndpointsAreRefusedByTheClient) {
  auto server = start();
  EXPECT_THROW(stack().connect(server->endpoint(), "corba"), std::invalid_argument);
  const Endpoint nowhere = server->endpoint();
  server->stop();
  expect_unreachable(nowhere);
}

TEST_P(StackLifecycle, ManyConnectionsComeAndGo) {
  const auto server = start();
  // Several open at once (a benchmark client beside a relay's) and many in
  // sequence (one per benchmark case): ended connections are cleaned up.
  std::vector<std::unique_ptr<Client>> open;
  for (int i = 0; i < 4; ++i) open.push_back(connect(server->endpoint()));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(connect(server->endpoint())->ping(), kPingReply);
  for (auto& c : open) EXPECT_EQ(c->ping(), kPingReply);
}

TEST_P(StackLifecycle, GarbageGetsAnHttpErrorAndServingGoesOn) {
  if (!testing::speaks_http1(GetParam())) GTEST_SKIP() << testing::kNotHttp1;
  const auto server = start();
  RawConnection c(server->endpoint());
  ASSERT_TRUE(c.send("THIS IS NOT HTTP\r\n\r\n"));
  const RawResponse r = c.read_response();
  EXPECT_EQ(r.status, 400) << r.head;
  EXPECT_EQ(connect(server->endpoint())->ping(), kPingReply);
}

// Each malformed Content-Length on a fresh connection: a 400 and the close
// (where the body ends is unknown), then a new connection is served.
TEST_P(StackLifecycle, BadContentLengthIs400AndServingGoesOn) {
  if (!testing::speaks_http1(GetParam())) GTEST_SKIP() << testing::kNotHttp1;
  const auto server = start();
  for (const char* lengths :
       {"Content-Length: -1\r\n", "Content-Length: abc\r\n",
        "Content-Length: 99999999999999999999\r\n", "Content-Length: 4\r\nContent-Length: 5\r\n"}) {
    SCOPED_TRACE(lengths);
    RawConnection c(server->endpoint());
    ASSERT_TRUE(c.send(std::string("POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n") +
                       lengths + "\r\nabcd"));
    const RawResponse r = c.read_response();
    // Every server, xmlrpc-c's front included, refuses a length it cannot
    // frame by (RFC 9112 6.3).
    EXPECT_EQ(r.status, 400) << r.head;
    EXPECT_TRUE(c.closed_by_server());
    EXPECT_EQ(connect(server->endpoint())->ping(), kPingReply);
  }
}

// Distinct payload sizes must not grow the server's memory past its cache
// budget, and each is still served whole.
TEST_P(StackLifecycle, DistinctPayloadsStayWithinTheCacheBudget) {
  ServiceLimits limits;
  limits.max_cached_payload_bytes = 256 * 1024;
  Service service(limits);
  const auto server = stack().start_server(service, {});
  const auto client = connect(server->endpoint());
  Payload out;
  for (std::size_t n = 0; n < 16; ++n) {
    const PayloadSpec spec{Kind::binary, 60'000 + n};
    client->get(spec, out);
    ASSERT_EQ(raw_size(out), spec.n);
    EXPECT_LE(service.cached_bytes(), limits.max_cached_payload_bytes);
  }
  EXPECT_GT(service.cached_bytes(), 0u);
}

TEST_P(StackLifecycle, OversizedBodyIs413AndServingGoesOn) {
  if (!testing::speaks_http1(GetParam())) GTEST_SKIP() << testing::kNotHttp1;
  constexpr std::size_t kMaxBody = 64 * 1024;
  ServerOptions options;
  options.limits.max_body_bytes = kMaxBody;
  const auto server = start(options);
  const auto client = connect(server->endpoint());
  Payload out;
  try {
    client->echo(Binary{Bytes(2 * kMaxBody, 7)}, out);
    ADD_FAILURE() << "an over-limit body was accepted";
  } catch (const CallError& e) {
    EXPECT_NE(std::string(e.what()).find("413"), std::string::npos) << e.what();
  }
  EXPECT_EQ(connect(server->endpoint())->ping(), kPingReply);
}

TEST_P(StackLifecycle, IdleConnectionsAreClosed) {
  ServerOptions options;
  options.limits.keepalive_timeout_s = 1;
  const auto server = start(options);
  const auto client = connect(server->endpoint());
  EXPECT_EQ(client->ping(), kPingReply);
  RawConnection c(server->endpoint());
  c.set_receive_timeout(std::chrono::seconds(5));
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_TRUE(testing::speaks_http1(GetParam()) ? c.closed_by_server()
                                                : c.closed_by_server_after_its_bytes());
  const auto waited = std::chrono::steady_clock::now() - begin;
  EXPECT_GE(waited, std::chrono::milliseconds(900));
  EXPECT_LT(waited, std::chrono::milliseconds(4000));
}

INSTANTIATE_TEST_SUITE_P(AllStacks, StackLifecycle, ::testing::ValuesIn(stack_names()),
                         [](const auto& p) {
                           std::string name = p.param;
                           for (auto& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace wsb
