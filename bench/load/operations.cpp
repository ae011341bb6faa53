#include "load/operations.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>

#include "common/codec.h"
#include "common/dictionary.h"
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
    return {[spec, expected, out, echo](Client& client) {
              if (echo)
                client.echo(*expected, *out);
              else
                client.get(spec, *out);
            },
            [expected, fidelity, out] { return describe_difference(*expected, *out, fidelity); }};
  };
}

CallFactory dictionary_calls(const DictionaryMix& mix) {
  using Entry = std::pair<std::string, std::string>;  // word, definition
  const std::vector<std::string> words = dictionary_words(DictionaryOptions{}.word_list);
  std::vector<std::string> chosen;
  std::sample(words.begin(), words.end(), std::back_inserter(chosen), kDictionarySampleWords,
              std::mt19937_64(20090101));
  auto entries = std::make_shared<std::vector<Entry>>();
  for (auto& word : chosen) {
    std::string definition = generated_definition(word, mix.size_multiple);
    entries->emplace_back(std::move(word), std::move(definition));
  }
  auto connections = std::make_shared<std::atomic<std::uint64_t>>(0);
  const unsigned define_percent = mix.define_percent;
  return [entries = std::shared_ptr<const std::vector<Entry>>(entries), connections,
          define_percent]() -> Call {
    auto random = std::make_shared<std::mt19937_64>(connections->fetch_add(1) + 1);
    // The entry the last call used and what define returned (put: nothing
    // to check).
    auto last = std::make_shared<std::pair<const Entry*, std::optional<std::string>>>();
    return {[entries, random, define_percent, last](Client& client) {
              const Entry& entry = (*entries)[(*random)() % entries->size()];
              last->first = &entry;
              last->second.reset();
              if ((*random)() % 100 >= define_percent)
                client.put(entry.first, entry.second);
              else
                last->second = client.define(entry.first);
            },
            [last] {
              const auto& [entry, defined] = *last;
              return !defined || *defined == entry->second
                         ? std::string()
                         : "define " + entry->first + ": the definition differs";
            }};
  };
}

}  // namespace

DictionaryMix parse_dictionary_mix(const std::string& text) {
  const auto colon = text.find(':');
  DictionaryMix mix;
  mix.size_multiple = parse_size_multiple(text.substr(0, colon));
  if (colon != std::string::npos) {
    const std::uint32_t percent = parse_count(text.substr(colon + 1));
    if (percent > 100)
      throw std::invalid_argument("the define share is a percentage, not " +
                                  std::to_string(percent));
    mix.define_percent = percent;
  }
  return mix;
}

const std::vector<Operation>& all_operations() {
  static const std::vector<Operation> table = {
      {"ping", "none", "",
       [](const std::string&, const std::string&) -> CallFactory {
         return [] {
           auto reply = std::make_shared<std::string>();
           return Call{[reply](Client& client) { *reply = client.ping(); },
                       [reply] {
                         return *reply == kPingReply ? std::string()
                                                     : "ping returned '" + *reply + "'";
                       }};
         };
       }},
      {"primes", "n: the reply lists the first n primes (E7: 100000)", "100000",
       [](const std::string& argument, const std::string&) -> CallFactory {
         const std::uint32_t n = parse_count(argument);
         auto expected = std::make_shared<const std::string>(Service().primes(n));
         return [n, expected] {
           auto reply = std::make_shared<std::string>();
           return Call{[n, reply](Client& client) { *reply = client.primes(n); },
                       [expected, reply] {
                         return *reply == *expected ? std::string() : "primes reply differs";
                       }};
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
      {"dictionary",
       "SIZE[:DEFINE%]: E8's define/put mix over the wamerican words, definitions of SIZE "
       "(x1, x10, x15, x20; the server's --dictionary-size), DEFINE% of calls define (90)",
       "x1:90",
       [](const std::string& argument, const std::string&) {
         return dictionary_calls(parse_dictionary_mix(argument));
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
