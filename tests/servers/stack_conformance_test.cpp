// Every client against its server, for every stack and codec it carries:
// each operation with equality checks, errors as CallError, and the server
// still serving afterwards.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "common/codec.h"
#include "common/phases.h"
#include "common/service.h"
#include "common/transport.h"
#include "conformance_cases.h"
#include "server_points.h"
#include "stack_fixture.h"

namespace wsb {
namespace {

using Combo = testing::StackCodec;

// One in-process server per stack for the whole test binary.
Endpoint server_for(const std::string& stack) {
  static Service service;
  static std::map<std::string, std::unique_ptr<Server>> servers;
  auto& server = servers[stack];
  if (!server) server = find_stack(stack).start_server(service, ServerOptions{});
  return server->endpoint();
}

class StackConformance : public ::testing::TestWithParam<Combo> {
 protected:
  void SetUp() override {
    client_ = find_stack(GetParam().stack).connect(server_for(GetParam().stack), GetParam().codec);
    codec_ = find_codec(GetParam().codec).make();
  }
  // Compared as the codec's library can carry it (xmlrpc-c: doubles to a
  // documented tolerance).
  std::string difference(const Payload& expected, const Payload& actual) const {
    return describe_difference(expected, actual, codec_->double_fidelity());
  }
  std::unique_ptr<Client> client_;
  std::unique_ptr<Codec> codec_;  // only asked what it can carry
};

TEST_P(StackConformance, PingReturnsTheFixedString) { EXPECT_EQ(client_->ping(), kPingReply); }

TEST_P(StackConformance, GetReturnsEachCatalogueKind) {
  for (const char* label : {"text", "ints/0", "ints/200", "strings/200", "objects/200",
                            "message-a/100", "message-b/128KiB", "binary/1MiB", "gml/10"}) {
    const PayloadSpec spec = parse_spec(label);
    const Payload expected = generate(spec);
    if (!codec_->unsupported(expected).empty()) continue;  // text/plain: texts only
    Payload out;
    client_->get(spec, out);
    EXPECT_EQ(difference(expected, out), "") << label;
  }
}

TEST_P(StackConformance, EchoReturnsWhatWasSent) {
  std::size_t carried = 0;
  for (const auto& [name, payload] : testing::conformance_payloads()) {
    if (!codec_->unsupported(payload).empty()) continue;  // e.g. 4-byte UTF-8 in xmlrpc-c
    Payload out;
    client_->echo(payload, out);
    EXPECT_EQ(difference(payload, out), "") << name;
    ++carried;
  }
  const bool texts_only = find_codec(GetParam().codec).texts_only;
  EXPECT_GE(carried, texts_only ? 2u : 10u) << "the conformance set reached the server";
}

// Messaging, over the codecs that carry messages (not text/plain).
class MessagingStackConformance : public StackConformance {};

bool carries_messages(const Combo& combo) {
  return find_codec(combo.codec).make()->unsupported(generate(parse_spec("message-a/100"))).empty();
}

TEST_P(MessagingStackConformance, MessagingLifecycle) {
  const auto a = std::get<Message>(generate(parse_spec("message-a/100")));
  const auto b = std::get<Message>(generate(parse_spec("message-b/128KiB")));
  const std::string queue = client_->register_client();
  ASSERT_FALSE(queue.empty());
  EXPECT_NE(client_->register_client(), queue);
  std::vector<Message> got;
  client_->receive_messages(queue, got);
  EXPECT_TRUE(got.empty());
  client_->send_message(queue, a);
  client_->send_message(queue, b);
  client_->send_message(queue, Message{});
  client_->receive_messages(queue, got);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[0] == a);
  EXPECT_TRUE(got[1] == b);
  EXPECT_TRUE(got[2] == Message{});
  client_->receive_messages(queue, got);
  EXPECT_TRUE(got.empty()) << "receive drains the queue";
  client_->unregister_client(queue);
  EXPECT_THROW(client_->send_message(queue, a), CallError);
  EXPECT_THROW(client_->receive_messages(queue, got), CallError);
  EXPECT_THROW(client_->unregister_client(queue), CallError);
  EXPECT_EQ(client_->ping(), kPingReply) << "the connection survives refused calls";
}

TEST_P(StackConformance, PrimesAreComputed) {
  EXPECT_EQ(client_->primes(10), "FIRST 10 numbers: 2 3 5 7 11 13 17 19 23 29");
  EXPECT_EQ(client_->primes(1), "FIRST 1 numbers: 2");
  EXPECT_EQ(client_->primes(0), "FIRST 0 numbers:");
}

TEST_P(StackConformance, RequestsOverTheLimitsAreRefusedAndServingGoesOn) {
  Payload out;
  EXPECT_THROW(client_->get(parse_spec("ints/100000000"), out), CallError);
  EXPECT_THROW(client_->primes(2'000'000'000), CallError);
  EXPECT_EQ(client_->ping(), kPingReply);
}

TEST_P(StackConformance, ClientTimelineIsOrdered) {
  client_->ping();
  const Timeline& t = client_->last_timeline();
  ASSERT_NE(t[kInvoke], 0);
  ASSERT_NE(t[kDecoded], 0);
  EXPECT_LE(t[kInvoke], t[kDecoded]);
  for (const Mark m : {kRequestWritten, kResponseReceived})
    if (t[m] != 0) {
      EXPECT_LE(t[kInvoke], t[m]);
      EXPECT_LE(t[m], t[kDecoded]);
    }
}

TEST_P(StackConformance, ServerPhasePointsAreMarkedInCausalOrder) {
  if (!testing::marks_server_points(GetParam().stack)) GTEST_SKIP() << testing::kNotHttp1;
  client_->ping();  // connected
  for (const char* label : {"text", "message-b/128KiB"}) {
    SCOPED_TRACE(label);
    const Payload payload = generate(parse_spec(label));
    if (!codec_->unsupported(payload).empty()) continue;
    Payload out;
    client_->echo(payload, out);
    Timeline t = client_->last_timeline();
    ASSERT_TRUE(testing::collect_server_points(*client_, server_for(GetParam().stack), t));
    // Every stack marks the four server points and the client's start, end
    // of response and end of decode; xmlrpc-c's client hides kRequestWritten.
    for (const Mark m :
         {kInvoke, kRequestReceived, kParsed, kServiced, kMarshalled, kResponseReceived, kDecoded})
      EXPECT_NE(t[m], 0) << kPhaseNames[m];
    // Causal order. kRequestWritten may come after the server's first points:
    // the server can run before the client thread records it.
    const auto before = [&](Mark a, Mark b) {
      if (t[a] != 0 && t[b] != 0) {
        EXPECT_LE(t[a], t[b]) << kPhaseNames[a] << " " << kPhaseNames[b];
      }
    };
    before(kInvoke, kRequestWritten);
    before(kInvoke, kRequestReceived);
    before(kRequestReceived, kParsed);
    before(kParsed, kServiced);
    before(kServiced, kMarshalled);
    before(kMarshalled, kResponseReceived);
    before(kRequestWritten, kResponseReceived);
    before(kResponseReceived, kDecoded);
  }
}

INSTANTIATE_TEST_SUITE_P(AllStacks, StackConformance,
                         ::testing::ValuesIn(testing::every_stack_codec()),
                         [](const auto& p) { return testing::test_name(p.param); });
INSTANTIATE_TEST_SUITE_P(AllStacks, MessagingStackConformance,
                         ::testing::ValuesIn(testing::every_stack_codec(carries_messages)),
                         [](const auto& p) { return testing::test_name(p.param); });

}  // namespace
}  // namespace wsb
