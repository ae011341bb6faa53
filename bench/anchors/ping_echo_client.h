// What every anchor's client shares: an anchor answers ping and echo only
// (anchors.h), so every other operation of wsb::Client is refused with the
// same CallError, and there are no probes, so every point stays 0.
#pragma once

#include <string>
#include <vector>

#include "common/transport.h"

namespace wsb::anchors {

class PingEchoClient : public Client {
 public:
  void get(const PayloadSpec&, Payload&) final { refuse("get"); }
  std::string register_client() final { refuse("register"); }
  void send_message(const std::string&, const Message&) final { refuse("send"); }
  void receive_messages(const std::string&, std::vector<Message>&) final { refuse("receive"); }
  void unregister_client(const std::string&) final { refuse("unregister"); }
  std::string primes(std::uint32_t) final { refuse("primes"); }
  std::string define(const std::string&) final { refuse("define"); }
  void put(const std::string&, const std::string&) final { refuse("put"); }

  const Timeline& last_timeline() const final { return timeline_; }

 private:
  [[noreturn]] static void refuse(const char* op) {
    throw CallError(std::string(op) + " is not an operation of the anchor");
  }

  Timeline timeline_{};
};

}  // namespace wsb::anchors
