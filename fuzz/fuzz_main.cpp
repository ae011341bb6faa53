// libFuzzer's entry points (the fuzz preset's wsbench-fuzz): every input
// goes to the target named by WSBENCH_FUZZ_TARGET. One executable for all
// targets: one link under the sanitizers instead of one per target, and
// the list comes from the registries at run time (scripts/fuzz).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "fuzz_targets.h"

namespace {
const wsb::fuzz::FuzzTarget* target = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* name = std::getenv("WSBENCH_FUZZ_TARGET");
  target = name != nullptr ? wsb::fuzz::find_fuzz_target(name) : nullptr;
  if (target == nullptr) {
    std::fprintf(stderr, "wsbench-fuzz: set WSBENCH_FUZZ_TARGET to one of:\n");
    for (const auto& t : wsb::fuzz::all_fuzz_targets())
      std::fprintf(stderr, "  %s\n", t.name.c_str());
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Anything escaping a target is a finding: say what, then crash so that
  // libFuzzer keeps the input.
  try {
    target->run(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const wsb::fuzz::PropertyViolation& e) {
    std::fprintf(stderr, "wsbench-fuzz: property violated: %s\n", e.what());
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wsbench-fuzz: %s: exception escaped: %s\n", target->name.c_str(),
                 e.what());
    std::abort();
  }
  return 0;
}
