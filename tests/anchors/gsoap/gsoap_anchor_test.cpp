// The gSOAP anchor (bench/anchors/gsoap): ping and a message-b/128KiB echo
// through start_server/connect, the operations it does not have, and its
// replies byte for byte the gsoap stack's, so the anchor rows measure the
// same protocol work as the stack rows they anchor.
#include "anchors/gsoap/gsoap_anchor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/payload.h"
#include "common/service.h"
#include "raw_http.h"

namespace wsb {
namespace {

class GsoapAnchor : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.listen = Endpoint{"127.0.0.1", 0};
    server_ = anchors::gsoap::start_server(options);
    client_ = anchors::gsoap::connect(server_->endpoint());
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<Client> client_;
};

TEST_F(GsoapAnchor, PingAnswersWhatTheServiceAnswers) {
  EXPECT_EQ(client_->ping(), kPingReply);
  EXPECT_EQ(client_->ping(), kPingReply);
}

TEST_F(GsoapAnchor, EchoReturnsMessageB128KiB) {
  const Payload sent = generate(parse_spec("message-b/128KiB"));
  for (int i = 0; i < 3; ++i) {
    Payload got;
    client_->echo(sent, got);
    EXPECT_EQ(describe_difference(sent, got), "");
  }
}

// The binaries of a received payload sent back as they came (their href
// unset: gSOAP's generated reader leaves it as the memory held), one kind
// after another on one connection.
TEST_F(GsoapAnchor, EchoReturnsEveryKind) {
  for (const char* label : {"binary/1KiB", "message-a/10", "message-b/1KiB", "ints/10", "text",
                            "strings/10", "objects/10", "gml/2", "binary/1KiB"}) {
    const Payload sent = generate(parse_spec(label));
    Payload got;
    client_->echo(sent, got);
    EXPECT_EQ(describe_difference(sent, got), "") << label;
  }
}

TEST_F(GsoapAnchor, EveryCallUsesOneConnection) {
  client_->ping();
  const std::uint16_t port = client_->local_port();
  ASSERT_NE(port, 0);
  for (int i = 0; i < 150; ++i) client_->ping();  // past gSOAP's default of 100 per connection
  EXPECT_EQ(client_->local_port(), port);
}

TEST_F(GsoapAnchor, OtherOperationsAreCallErrors) {
  Payload out;
  EXPECT_THROW(client_->get(parse_spec("ints/10"), out), CallError);
  EXPECT_THROW(client_->register_client(), CallError);
  EXPECT_THROW(client_->send_message("q", Message{}), CallError);
  std::vector<Message> messages;
  EXPECT_THROW(client_->receive_messages("q", messages), CallError);
  EXPECT_THROW(client_->unregister_client("q"), CallError);
  EXPECT_THROW(client_->primes(3), CallError);
  EXPECT_THROW(client_->define("w"), CallError);
  EXPECT_THROW(client_->put("w", "d"), CallError);
  try {
    client_->primes(3);
  } catch (const CallError& e) {
    EXPECT_EQ(std::string(e.what()), "primes is not an operation of the anchor");
  }
  EXPECT_EQ(client_->ping(), kPingReply);  // and the connection goes on
}

TEST_F(GsoapAnchor, StopEndsOpenConnectionsAndIsIdempotent) {
  client_->ping();
  server_->stop();
  server_->stop();
  EXPECT_THROW(client_->ping(), CallError);
}

std::size_t entries(const char* dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

// As the rows' isolation check wants: no thread or descriptor outlives the
// server and its clients, with connections open when it stops.
TEST(GsoapAnchorLifetime, StopLeavesNoThreadOrDescriptorBehind) {
  const std::size_t threads = entries("/proc/self/task");
  const std::size_t descriptors = entries("/proc/self/fd");
  {
    ServerOptions options;
    options.listen = Endpoint{"127.0.0.1", 0};
    const auto server = anchors::gsoap::start_server(options);
    const auto first = anchors::gsoap::connect(server->endpoint());
    const auto second = anchors::gsoap::connect(server->endpoint());
    EXPECT_EQ(first->ping(), kPingReply);
    EXPECT_EQ(second->ping(), kPingReply);
    server->stop();
  }
  EXPECT_EQ(entries("/proc/self/task"), threads);
  EXPECT_EQ(entries("/proc/self/fd"), descriptors);
}

// The ping reply's bytes are the gsoap stack's: the same request to both
// servers gets the same body.
TEST(GsoapAnchorBytes, PingReplyIsTheStacksByteForByte) {
  ServerOptions options;
  options.listen = Endpoint{"127.0.0.1", 0};
  Service service;
  const auto stack = find_stack("gsoap").start_server(service, options);
  const auto anchor = anchors::gsoap::start_server(options);
  const std::string envelope =
      R"(<?xml version="1.0" encoding="UTF-8"?>)"
      R"(<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/")"
      R"( xmlns:wsb="urn:wsbench"><SOAP-ENV:Body><wsb:ping/></SOAP-ENV:Body>)"
      "</SOAP-ENV:Envelope>";
  const std::string request =
      "POST / HTTP/1.1\r\nHost: localhost\r\n"
      "Content-Type: text/xml; charset=utf-8\r\nContent-Length: " +
      std::to_string(envelope.size()) + "\r\nSOAPAction: \"\"\r\n\r\n" + envelope;
  testing::RawConnection to_stack(stack->endpoint());
  testing::RawConnection to_anchor(anchor->endpoint());
  const testing::RawResponse from_stack = testing::roundtrip(to_stack, request);
  const testing::RawResponse from_anchor = testing::roundtrip(to_anchor, request);
  EXPECT_EQ(from_stack.status, 200);
  EXPECT_EQ(from_anchor.status, 200);
  EXPECT_NE(from_anchor.body.find(">pong</"), std::string::npos) << from_anchor.body;
  EXPECT_EQ(from_anchor.body, from_stack.body);
}

}  // namespace
}  // namespace wsb
