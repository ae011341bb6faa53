// The request direction of a round trip is verified: a client that
// corrupts what it sends, while its replies look right, fails the checks
// the round-trip benchmarks run before timing (bench/harness/request_check.h),
// on every stack whose echo and send reach the Service.

#include "harness/request_check.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/codec.h"
#include "common/service.h"
#include "common/transport.h"
#include "forwarding_client.h"

namespace wsb {
namespace {

// Forwards to a real client but sends altered payloads, and answers an
// echo with what the caller passed: only the server sees the corruption.
class CorruptingClient final : public testing::ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;

  void echo(const Payload& in, Payload& out) override {
    Payload altered = in;
    std::get<IntArray>(altered).values.front() += 1;
    inner().echo(altered, out);
    out = in;
  }
  void send_message(const std::string& queue, const Message& message) override {
    Message altered = message;
    altered.meta.sender += "!";
    inner().send_message(queue, altered);
  }
};

Message sample_message() {
  Message m;
  m.meta = {"recipient", "sender", "token", 42};
  m.records.push_back({"title", "author", "body", 1, 2, 3, 4, 5, 6});
  return m;
}

class RequestCheck : public ::testing::TestWithParam<std::pair<std::string, std::string>> {
 protected:
  void SetUp() override {
    const auto& [stack, codec] = GetParam();
    server_ = find_stack(stack).start_server(service_, ServerOptions{});
    connect_ = [this, stack = stack, codec = codec] {
      return find_stack(stack).connect(server_->endpoint(), codec);
    };
  }

  // Echo and send through `client` with requests recorded; what the checks say.
  std::vector<std::string> checks(Client& client) {
    std::vector<std::string> found;
    const Payload ints = generate(parse_spec("ints/5"));
    {
      RequestRecording recording(service_);
      Payload out;
      client.echo(ints, out);
      EXPECT_EQ(describe_difference(ints, out), "") << "the reply alone looks right";
      found.push_back(check_received(service_, ints, {}));
    }
    const Message message = sample_message();
    const std::string queue = client.register_client();
    {
      RequestRecording recording(service_);
      client.send_message(queue, message);
      found.push_back(check_received(service_, message, {}));
    }
    found.push_back(check_queued(client, queue, message, {}));
    client.unregister_client(queue);
    return found;
  }

  Service service_;
  std::unique_ptr<Server> server_;
  std::function<std::unique_ptr<Client>()> connect_;
};

TEST_P(RequestCheck, PassesForAnHonestClient) {
  const auto client = connect_();
  for (const auto& diff : checks(*client)) EXPECT_EQ(diff, "");
}

TEST_P(RequestCheck, FailsForAClientThatCorruptsRequests) {
  CorruptingClient client(connect_());
  const auto found = checks(client);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_NE(found[0].find("the server received something else"), std::string::npos) << found[0];
  EXPECT_NE(found[1].find("the server received something else"), std::string::npos) << found[1];
  EXPECT_NE(found[2].find("the server queued something else"), std::string::npos) << found[2];
}

TEST(RequestRecording, RecordsNothingWhenOff) {
  Service service;
  service.echo(Text{"while timing"});
  EXPECT_FALSE(service.last_request().has_value());
  {
    RequestRecording recording(service);
    service.echo(Text{"while verifying"});
  }
  service.echo(Text{"timing again"});
  ASSERT_TRUE(service.last_request().has_value());
  EXPECT_EQ(std::get<Text>(*service.last_request()).value, "while verifying");
}

INSTANTIATE_TEST_SUITE_P(
    Stacks, RequestCheck,
    ::testing::Values(std::pair<std::string, std::string>{"gsoap", "soap"},
                      std::pair<std::string, std::string>{"xmlrpc-c", "xmlrpc"},
                      std::pair<std::string, std::string>{"beast", "json"},
                      std::pair<std::string, std::string>{"beast", "soap-mtom"},
                      std::pair<std::string, std::string>{"beast", "xmlrpc"}),
    [](const auto& p) {
      std::string name = p.param.first + "_" + p.param.second;
      for (auto& c : name)
        if (c == '-') c = '_';
      return name;
    });

}  // namespace
}  // namespace wsb
