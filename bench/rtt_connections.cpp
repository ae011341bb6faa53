// TLS and new-connection rows (rtt_internal.h): which stacks pair (a
// "<stack>-tls" with its plain "<stack>"), the client a new-connection
// case calls through, and the plaintext byte counts a TLS row's floor
// moves.
#include <map>
#include <stdexcept>

#include "rtt_internal.h"

namespace wsb::bench::rtt {
namespace {

constexpr std::string_view kTlsSuffix = "-tls";

// A client that connects for every call and closes after it, through the
// stack's own client (StackEntry::connect, as a steady case connects
// once). Each call, the timed region of a new-connection row, is therefore
// connect (with the TLS handshake on a TLS stack), the call, and the
// close (the client's destructor: a TLS client's close_notify, the
// socket's close).
class NewConnectionClient final : public Client {
 public:
  NewConnectionClient(const StackEntry& stack, const Endpoint& server, std::string codec)
      : stack_(stack), server_(server), codec_(std::move(codec)) {}

 private:
  template <class Call>
  auto once(Call call) {
    const auto client = stack_.connect(server_, codec_);
    struct Keep {  // the timeline outlives the client, whatever the call does
      Timeline& into;
      Client& from;
      ~Keep() { into = from.last_timeline(); }
    } keep{timeline_, *client};
    return call(*client);
  }

 public:
  std::string ping() override {
    return once([](Client& c) { return c.ping(); });
  }
  void get(const PayloadSpec& spec, Payload& out) override {
    once([&](Client& c) { c.get(spec, out); });
  }
  void echo(const Payload& in, Payload& out) override {
    once([&](Client& c) { c.echo(in, out); });
  }
  std::string register_client() override {
    return once([](Client& c) { return c.register_client(); });
  }
  void send_message(const std::string& queue, const Message& message) override {
    once([&](Client& c) { c.send_message(queue, message); });
  }
  void receive_messages(const std::string& queue, std::vector<Message>& out) override {
    once([&](Client& c) { c.receive_messages(queue, out); });
  }
  void unregister_client(const std::string& queue) override {
    once([&](Client& c) { c.unregister_client(queue); });
  }
  std::string primes(std::uint32_t n) override {
    return once([n](Client& c) { return c.primes(n); });
  }
  std::string define(const std::string& word) override {
    return once([&](Client& c) { return c.define(word); });
  }
  void put(const std::string& word, const std::string& definition) override {
    once([&](Client& c) { c.put(word, definition); });
  }
  // The last call's client points: they start after its connect.
  const Timeline& last_timeline() const override { return timeline_; }

 private:
  const StackEntry& stack_;
  Endpoint server_;
  std::string codec_;
  Timeline timeline_{};
};

}  // namespace

bool is_tls(const StackEntry& stack) { return stack.name.ends_with(kTlsSuffix); }

const StackEntry* plain_counterpart(const StackEntry& tls_stack) {
  if (!is_tls(tls_stack)) return nullptr;
  const std::string plain = tls_stack.name.substr(0, tls_stack.name.size() - kTlsSuffix.size());
  for (const auto& stack : all_stacks())
    if (stack.name == plain) return &stack;
  return nullptr;
}

bool has_tls_variant(const std::vector<StackEntry>& stacks, const StackEntry& stack,
                     const std::string& codec) {
  if (is_tls(stack)) return false;
  const std::string variant = stack.name + std::string(kTlsSuffix);
  for (const auto& s : stacks)
    if (s.name == variant)
      for (const auto& carried : s.codecs)
        if (carried == codec) return true;
  return false;
}

std::unique_ptr<Client> connect_case(const RttCase& c, const Endpoint& server) {
  if (c.new_connection) return std::make_unique<NewConnectionClient>(*c.stack, server, c.codec);
  return c.stack->connect(server, c.codec);
}

WireCount plain_wire(const RttCase& c) {
  const StackEntry* plain = plain_counterpart(*c.stack);
  if (plain == nullptr)
    throw std::runtime_error("no plain counterpart registered for " + c.stack->name +
                             ": its TLS floor needs the plaintext byte counts");
  RttCase p = c;
  p.stack = plain;
  p.new_connection = false;
  // Counted once per case, as count_wire's figures are (rtt_bench.cpp).
  static std::map<std::string, WireCount> counted;
  const std::string key = p.name();
  auto known = counted.find(key);
  if (known == counted.end()) {
    const CaseScope scope(p);
    known = counted.emplace(key, count_wire(p, pool->endpoint(*plain, p.placement))).first;
  }
  return known->second;
}

}  // namespace wsb::bench::rtt
