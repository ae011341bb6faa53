// One Service and one server of a registered stack, shared by a whole test
// suite (servers are cheap to keep, slow to start per test).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/service.h"
#include "common/transport.h"

namespace wsb::testing {

// kStack names the stack in the registry (src/stacks.cpp).
template <const char* kStack>
class StackSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    service_ = new Service();
    server_ = find_stack(kStack).start_server(*service_, ServerOptions{}).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete service_;
  }
  static Endpoint endpoint() { return server_->endpoint(); }
  static std::unique_ptr<Client> connect(const std::string& codec) {
    return find_stack(kStack).connect(endpoint(), codec);
  }

  static inline Service* service_ = nullptr;
  static inline Server* server_ = nullptr;
};

}  // namespace wsb::testing
