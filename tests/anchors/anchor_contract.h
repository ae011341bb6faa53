// The anchor contract (bench/anchors/anchors.h) as one check, so a test can
// run it on every registered anchor and on a faulty one: ping answers
// kPingReply, a message-b/128KiB echo comes back equal under the codec's
// fidelity, every other operation throws CallError("<op> is not an
// operation of the anchor"), stop() is idempotent and ends the service.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "anchors/anchors.h"
#include "common/codec.h"
#include "common/payload.h"
#include "common/placement.h"
#include "common/service.h"
#include "forwarding_client.h"

namespace wsb::testing {

inline constexpr char kNotAnOperation[] = " is not an operation of the anchor";

// Empty if the anchor keeps the contract, else every breach found, one per
// line.
inline std::string contract_breaches(const anchors::AnchorEntry& anchor) {
  std::string breaches;
  const auto breach = [&](const std::string& what) { breaches += what + "\n"; };
  ServerOptions options;
  options.cpu = server_cpu(Placement::same);
  const auto server = anchor.start_server(options);
  {
    const auto client = anchor.connect(server->endpoint());
    if (const std::string reply = client->ping(); reply != kPingReply)
      breach("ping returned '" + reply + "'");
    const Payload payload = generate({Kind::message_b, 128 * 1024});
    Payload out;
    client->echo(payload, out);
    const DoubleFidelity fidelity = find_codec(anchor.codec).make()->double_fidelity();
    if (const std::string diff = describe_difference(payload, out, fidelity); !diff.empty())
      breach("echo: " + diff);
    // Once more on the same connection: it is kept alive.
    client->echo(payload, out);
    if (const std::string diff = describe_difference(payload, out, fidelity); !diff.empty())
      breach("second echo: " + diff);

    const Message message;
    std::vector<Message> messages;
    const std::vector<std::pair<const char*, std::function<void()>>> others = {
        {"get",
         [&] {
           client->get({Kind::ints, 200}, out);
         }},
        {"register", [&] { client->register_client(); }},
        {"send", [&] { client->send_message("1", message); }},
        {"receive", [&] { client->receive_messages("1", messages); }},
        {"unregister", [&] { client->unregister_client("1"); }},
        {"primes", [&] { client->primes(10); }},
        {"define", [&] { client->define("protocol"); }},
        {"put", [&] { client->put("protocol", "a definition"); }},
    };
    for (const auto& [op, call] : others) {
      try {
        call();
        breach(std::string(op) + " did not throw");
      } catch (const CallError& e) {
        if (std::string(e.what()) != std::string(op) + kNotAnOperation)
          breach(std::string(op) + " threw CallError '" + e.what() + "'");
      } catch (const std::exception& e) {
        breach(std::string(op) + " threw something else than CallError: " + e.what());
      }
    }
  }
  server->stop();
  server->stop();  // idempotent
  try {
    const auto late = anchor.connect(server->endpoint());
    late->ping();
    breach("a stopped server still answers ping");
  } catch (const std::exception&) {
    // Refused, as it should be.
  }
  return breaches;
}

// The registry's Beast anchor; throws if the build has none.
inline const anchors::AnchorEntry& beast_anchor() {
  const auto& all = anchors::all_anchors();
  const auto it =
      std::find_if(all.begin(), all.end(), [](const auto& a) { return a.library == "beast"; });
  if (it == all.end()) throw std::logic_error("no beast anchor in the registry");
  return *it;
}

// The Beast anchor with its client wrapped in FaultyClient (a
// ForwardingClient with one fault).
template <class FaultyClient>
anchors::AnchorEntry faulty_beast() {
  anchors::AnchorEntry faulty = beast_anchor();
  faulty.connect = [&beast = beast_anchor()](const Endpoint& server) {
    return std::make_unique<FaultyClient>(beast.connect(server));
  };
  return faulty;
}

}  // namespace wsb::testing
