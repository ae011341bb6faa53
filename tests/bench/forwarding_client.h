// A Client that passes every call to a real one: tests derive from it and
// override only the calls they make faulty (OneByteOffPing is one).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/transport.h"

namespace wsb::testing {

class ForwardingClient : public Client {
 public:
  explicit ForwardingClient(std::unique_ptr<Client> inner) : inner_(std::move(inner)) {}

  std::string ping() override { return inner_->ping(); }
  void get(const PayloadSpec& spec, Payload& out) override { inner_->get(spec, out); }
  void echo(const Payload& in, Payload& out) override { inner_->echo(in, out); }
  std::string register_client() override { return inner_->register_client(); }
  void send_message(const std::string& queue, const Message& message) override {
    inner_->send_message(queue, message);
  }
  void receive_messages(const std::string& queue, std::vector<Message>& out) override {
    inner_->receive_messages(queue, out);
  }
  void unregister_client(const std::string& queue) override { inner_->unregister_client(queue); }
  std::string primes(std::uint32_t n) override { return inner_->primes(n); }
  std::string define(const std::string& word) override { return inner_->define(word); }
  void put(const std::string& word, const std::string& definition) override {
    inner_->put(word, definition);
  }
  const Timeline& last_timeline() const override { return inner_->last_timeline(); }
  std::uint16_t local_port() const override { return inner_->local_port(); }

 protected:
  Client& inner() { return *inner_; }

 private:
  std::unique_ptr<Client> inner_;
};

// A client with one fault: the first byte of every ping reply changed
// ("pong" comes back as "qong").
class OneByteOffPing final : public ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;
  std::string ping() override {
    std::string reply = inner().ping();
    if (!reply.empty()) reply.front() = static_cast<char>(reply.front() ^ 0x01);
    return reply;
  }
};

}  // namespace wsb::testing
