// One Service and one server of a registered stack, shared by a whole test
// suite (servers are cheap to keep, slow to start per test).
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "common/codec.h"
#include "common/service.h"
#include "common/transport.h"

namespace wsb::testing {

// Whether the stack's server speaks plaintext HTTP/1.1 on its socket: every
// stack but grpc (HTTP/2) and the TLS stacks (*-tls: their sockets carry
// TLS records, so a raw request written in plaintext is refused at the
// handshake; their edge is tests/servers/tls_stacks_test.cpp and
// tests/beast/beast_tls_test.cpp), which the raw-socket
// suites (hostile input, slow clients, raw HTTP) skip, saying so. grpc's
// raw HTTP/2 tests are tests/grpc/grpc_hostile_test.cpp and
// grpc_slow_clients_test.cpp.
inline bool speaks_http1(const std::string& stack) {
  return stack != "grpc" && !stack.ends_with("-tls");
}
inline constexpr const char kNotHttp1[] =
    "grpc speaks HTTP/2 (its raw-socket tests are under tests/grpc/) and a *-tls stack's socket "
    "carries TLS records: their raw plaintext HTTP/1.1 tests do not apply";

// One registered stack carrying one of its codecs: the parameter of suites
// that run over every stack x codec.
struct StackCodec {
  std::string stack;
  std::string codec;
};

// How GoogleTest prints it (in ctest's test names): "beast/soap-mtom".
inline void PrintTo(const StackCodec& combo, std::ostream* out) {
  *out << combo.stack << "/" << combo.codec;
}

// A test name for it: "beast_soap_mtom".
inline std::string test_name(const StackCodec& combo) {
  std::string name = combo.stack + "_" + combo.codec;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// Every stack x codec it carries that `applies` accepts (all by default):
// a suite whose tests apply to some combinations only instantiates those.
inline std::vector<StackCodec> every_stack_codec(
    const std::function<bool(const StackCodec&)>& applies = {}) {
  std::vector<StackCodec> out;
  for (const auto& stack : all_stacks())
    for (const auto& codec : stack.codecs)
      if (StackCodec combo{stack.name, codec}; !applies || applies(combo))
        out.push_back(std::move(combo));
  return out;
}

// The codecs (of all registered, but second decode paths that are no
// library alternative, such as xml-dom) over which a client of `stack` pings
// a fresh server of it: what its registry entry should list.
inline std::vector<std::string> codecs_that_ping(const StackEntry& stack) {
  Service service;
  const auto server = stack.start_server(service, ServerOptions{});
  std::vector<std::string> carried;
  for (const auto& codec : all_codecs()) {
    if (!codec.decode_path_of.empty() && codec.alternative_of.empty()) continue;
    try {
      if (stack.connect(server->endpoint(), codec.name)->ping() == kPingReply)
        carried.push_back(codec.name);
    } catch (const std::exception&) {
      // not carried: refused when connecting, or the call failed
    }
  }
  return carried;
}

// Those whose codec has a syntax to attack: all but text/plain, where any
// UTF-8 is a valid body (CodecEntry::texts_only).
inline std::vector<StackCodec> stack_codecs_with_syntax() {
  return every_stack_codec(
      [](const StackCodec& combo) { return !find_codec(combo.codec).texts_only; });
}

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
