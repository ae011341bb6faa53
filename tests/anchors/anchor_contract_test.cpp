// Every registered anchor keeps the contract (anchor_contract.h), and the
// check finds the faults it guards in anchors broken on purpose.
#include "anchor_contract.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

namespace wsb::testing {
namespace {

class AnchorContract : public ::testing::TestWithParam<std::size_t> {};

TEST_P(AnchorContract, PingEchoAndNothingElse) {
  const auto& anchor = anchors::all_anchors().at(GetParam());
  EXPECT_EQ(contract_breaches(anchor), "") << anchor.library;
}

INSTANTIATE_TEST_SUITE_P(Registry, AnchorContract,
                         ::testing::Range<std::size_t>(0, anchors::all_anchors().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& param_info) {
                           std::string name = anchors::all_anchors().at(param_info.param).library;
                           for (auto& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(AnchorRegistry, HasTheBeastAnchorOfBeastJson) {
  const auto& all = anchors::all_anchors();
  const auto beast =
      std::find_if(all.begin(), all.end(), [](const auto& a) { return a.library == "beast"; });
  ASSERT_NE(beast, all.end());
  EXPECT_EQ(beast->stack, "beast");
  EXPECT_EQ(beast->codec, "json");
}

// Echo returns the message with the first byte of its attachment changed.
class ChangedEcho final : public ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;
  void echo(const Payload& in, Payload& out) override {
    ForwardingClient::echo(in, out);
    if (auto* m = std::get_if<Message>(&out); m != nullptr && !m->attachment.empty())
      m->attachment.front() ^= 1;
  }
};

// get answers instead of refusing.
class AnswersGet final : public ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;
  void get(const PayloadSpec& spec, Payload& out) override { out = generate(spec); }
};

TEST(AnchorContractCheck, FindsAChangedEcho) {
  const std::string breaches = contract_breaches(faulty_beast<ChangedEcho>());
  EXPECT_NE(breaches.find("echo: "), std::string::npos) << breaches;
}

TEST(AnchorContractCheck, FindsAnOperationThatDoesNotThrow) {
  const std::string breaches = contract_breaches(faulty_beast<AnswersGet>());
  EXPECT_EQ(breaches, "get did not throw\n");
}

}  // namespace
}  // namespace wsb::testing
