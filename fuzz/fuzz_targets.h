// The fuzz targets: each takes any bytes and must either refuse them the
// way its contract says (DecodeError, an HTTP 4xx, a fault) or accept them
// and keep the property that holds for what it accepted. The libFuzzer
// executable (fuzz_main.cpp) and the corpus replay test call the same
// functions, so a crash found with clang fails the ordinary test build too.
// docs/development/fuzzing.md lists the targets and says why each
// checks what it checks.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wsb::fuzz {

// A property of the target that the input broke (a decoded payload that
// does not survive its own re-encoding, a 500 for a client's input).
class PropertyViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

struct FuzzTarget {
  std::string name;         // "decode-json", "gsoap-request", ...
  std::string description;  // one line
  std::string dictionary;   // files under fuzz/dict/, space-separated
  // Runs one input; throws PropertyViolation. Anything else escaping is a
  // bug of ours too (the contracts say which exceptions may leave).
  std::function<void(std::string_view)> run;
  // Valid inputs to start from: the catalogue payloads as this target's
  // codec writes them, or well-formed requests of its stack.
  std::function<std::vector<std::string>()> seeds;
};

// Every target, from the codec and stack registries.
const std::vector<FuzzTarget>& all_fuzz_targets();
// Null for an unknown name.
const FuzzTarget* find_fuzz_target(std::string_view name);

}  // namespace wsb::fuzz
