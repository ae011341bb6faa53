// Server-Timing on every server: a request carrying X-Wsbench-Server-Timing
// gets the three server phases back, with probes on or off (a remote
// wsbench-server runs with them off); one without it gets none. And the
// clients that can ask (Beast, gSOAP) read it.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/phases.h"
#include "common/service.h"
#include "common/transport.h"
#include "raw_http.h"

namespace wsb {
namespace {

using testing::RawConnection;

// A ping as a third party sends it to each stack, with `extra` header lines.
std::string ping_request(const std::string& stack, const Endpoint& at, const std::string& extra) {
  const std::string host = "Host: " + at.to_string() + "\r\n";
  if (stack == "beast") return "GET /ping HTTP/1.1\r\n" + host + extra + "\r\n";
  std::string path, body, type;
  if (stack == "gsoap") {
    path = "/";
    body =
        R"(<?xml version="1.0"?><SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" xmlns:wsb="urn:wsbench"><SOAP-ENV:Body><wsb:ping/></SOAP-ENV:Body></SOAP-ENV:Envelope>)";
    type = "Content-Type: text/xml; charset=utf-8\r\nSOAPAction: \"\"\r\n";
  } else {
    path = "/RPC2";
    body =
        R"(<?xml version="1.0"?><methodCall><methodName>wsbench.ping</methodName><params/></methodCall>)";
    type = "Content-Type: text/xml\r\n";
  }
  return "POST " + path + " HTTP/1.1\r\n" + host + type +
         "Content-Length: " + std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

class ServerTiming : public ::testing::TestWithParam<std::tuple<std::string, bool>> {
 protected:
  void SetUp() override {
    set_probes_enabled(std::get<1>(GetParam()));
    server_ = find_stack(stack()).start_server(service_, ServerOptions{});
  }
  void TearDown() override {
    server_.reset();
    set_probes_enabled(true);
  }
  const std::string& stack() const { return std::get<0>(GetParam()); }

  Service service_;
  std::unique_ptr<Server> server_;
};

TEST_P(ServerTiming, SentWhenAskedAndOnlyThen) {
  RawConnection c(server_->endpoint());
  const std::string asked = std::string(kServerTimingRequestHeader) + ": 1\r\n";
  for (const bool ask : {true, false, true}) {
    const auto r = roundtrip(c, ping_request(stack(), server_->endpoint(), ask ? asked : ""));
    EXPECT_EQ(r.status, 200) << r.head;
    EXPECT_NE(r.body.find("pong"), std::string::npos) << r.body;
    const auto timing = r.header("Server-Timing");
    if (!ask) {
      EXPECT_FALSE(timing) << *timing;
      continue;
    }
    ASSERT_TRUE(timing) << r.head;
    const auto d = parse_server_timing(*timing);
    ASSERT_TRUE(d) << *timing;
    EXPECT_GT(d->total(), 0) << *timing;
    EXPECT_LT(d->total(), 10'000'000'000) << *timing;  // under 10 s
  }
}

INSTANTIATE_TEST_SUITE_P(EveryServer, ServerTiming,
                         ::testing::Combine(::testing::Values("gsoap", "xmlrpc-c", "beast"),
                                            ::testing::Bool()),
                         [](const auto& p) {
                           std::string name = std::get<0>(p.param);
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name + (std::get<1>(p.param) ? "_probes_on" : "_probes_off");
                         });

// The clients that can ask read the reply's phases; xmlrpc-c's cannot.
TEST(ServerTimingClient, GsoapAndBeastClientsReadIt) {
  set_probes_enabled(false);
  Service service;
  for (const auto& [stack, codec] :
       {std::pair{"gsoap", "soap"}, {"beast", "json"}, {"beast", "soap"}, {"beast", "xmlrpc"}}) {
    const auto server = find_stack(stack).start_server(service, ServerOptions{});
    const auto client = find_stack(stack).connect(server->endpoint(), codec);
    ASSERT_TRUE(client->request_server_timing()) << stack << "/" << codec;
    EXPECT_EQ(client->ping(), kPingReply);
    const auto timing = client->last_server_timing();
    ASSERT_TRUE(timing) << stack << "/" << codec;
    EXPECT_GT(timing->total(), 0);
  }
  const auto server = find_stack("xmlrpc-c").start_server(service, ServerOptions{});
  EXPECT_FALSE(
      find_stack("xmlrpc-c").connect(server->endpoint(), "xmlrpc")->request_server_timing());
  set_probes_enabled(true);
}

}  // namespace
}  // namespace wsb
