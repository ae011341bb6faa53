// The operations the load driver can call, as a table: each row names an
// operation and prepares, for one codec and argument, a call that sends the
// request on a client and verifies the reply as the single-call benchmark
// does. A new operation (E8's dictionary) is one more row.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/transport.h"

namespace wsb::load {

// One call on a connected client, in two parts so that the check stays
// out of the timed span: `send` makes the request and keeps the reply
// (transport and protocol failures throw, CallError); `check` then returns
// "" if the reply is right, else what differs.
struct Call {
  std::function<void(Client&)> send;
  std::function<std::string()> check;
};
// Makes the call for one connection: what the check needs is shared, the
// reply lands in state of the connection's own.
using CallFactory = std::function<Call()>;

struct Operation {
  std::string name;
  std::string argument_help;     // what the text after ':' means
  std::string default_argument;  // used when none is given
  // Prepares the call for `codec` (throws std::invalid_argument for a bad
  // argument). What a check needs (an expected reply, a payload) is made
  // here, once, never while load runs.
  std::function<CallFactory(const std::string& argument, const std::string& codec)> prepare;
};

const std::vector<Operation>& all_operations();

// "primes:100000", "echo:ints/200", "ping": the operation and its
// argument (the row's default when none is given). Throws
// std::invalid_argument for an unknown name.
struct OperationChoice {
  const Operation* operation = nullptr;
  std::string argument;
  std::string label() const {
    return argument.empty() ? operation->name : operation->name + ":" + argument;
  }
};
OperationChoice parse_operation(const std::string& text);

// E8's dictionary calls: `define_percent` of them look a word up and check
// its definition, the rest put a word back with the definition it has (a
// real write that keeps every later define checkable). Words are drawn
// uniformly from kDictionarySampleWords of the list, chosen with a fixed
// seed, whose definitions are made before the load.
struct DictionaryMix {
  unsigned size_multiple = 1;
  unsigned define_percent = 90;
};
inline constexpr std::size_t kDictionarySampleWords = 4096;
// "x10" or "x10:90"; throws std::invalid_argument otherwise.
DictionaryMix parse_dictionary_mix(const std::string& text);

}  // namespace wsb::load
