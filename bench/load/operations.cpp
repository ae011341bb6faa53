#include "load/operations.h"

#include <memory>
#include <stdexcept>

#include "common/codec.h"
#include "common/payload.h"
#include "common/service.h"

namespace wsb::load {
namespace {

std::uint32_t parse_count(const std::string& text) {
  std::size_t used = 0;
  unsigned long value = 0;
  try {
    value = std::stoul(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || value > 0xffff'ffffUL)
    throw std::invalid_argument("not a count: '" + text + "'");
  return static_cast<std::uint32_t>(value);
}

CallFactory payload_call(const std::string& argument, const std::string& codec, bool echo) {
  const PayloadSpec spec = parse_spec(argument);
  auto expected = std::make_shared<const Payload>(generate(spec));
  const DoubleFidelity fidelity = find_codec(codec).make()->double_fidelity();
  return [spec, expected, fidelity, echo]() -> Call {
    auto out = std::make_shared<Payload>();
    return [spec, expected, fidelity, out, echo](Client& client) {
      if (echo)
        client.echo(*expected, *out);
      else
        client.get(spec, *out);
      return describe_difference(*expected, *out, fidelity);
    };
  };
}

}  // namespace

const std::vector<Operation>& all_operations() {
  static const std::vector<Operation> table = {
      {"ping", "none", "",
       [](const std::string&, const std::string&) -> CallFactory {
         return [] {
           return [](Client& client) {
             const std::string reply = client.ping();
             return reply == kPingReply ? std::string() : "ping returned '" + reply + "'";
           };
         };
       }},
      {"primes", "n: the reply lists the first n primes (E7: 100000)", "100000",
       [](const std::string& argument, const std::string&) -> CallFactory {
         const std::uint32_t n = parse_count(argument);
         auto expected = std::make_shared<const std::string>(Service().primes(n));
         return [n, expected] {
           return [n, expected](Client& client) {
             return client.primes(n) == *expected ? std::string() : "primes reply differs";
           };
         };
       }},
      {"echo", "a payload label (ints/200, message-a): sent and returned", "ints/200",
       [](const std::string& argument, const std::string& codec) {
         return payload_call(argument, codec, true);
       }},
      {"get", "a payload label: the server generates it", "ints/200",
       [](const std::string& argument, const std::string& codec) {
         return payload_call(argument, codec, false);
       }},
  };
  return table;
}

OperationChoice parse_operation(const std::string& text) {
  const auto colon = text.find(':');
  const std::string name = text.substr(0, colon);
  for (const auto& op : all_operations()) {
    if (op.name != name) continue;
    return {&op, colon == std::string::npos ? op.default_argument : text.substr(colon + 1)};
  }
  std::string known;
  for (const auto& op : all_operations()) known += (known.empty() ? "" : ", ") + op.name;
  throw std::invalid_argument("unknown operation '" + name + "' (known: " + known + ")");
}

}  // namespace wsb::load
