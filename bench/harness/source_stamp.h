// Which source a binary was built from, stamped at build time
// (cmake/SourceStamp.cmake), set against the checkout it runs beside: a
// binary built at one commit and run after a checkout of another measures
// the first, whatever the checkout says.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace wsb {

// A commit and whether tracked files differed from it; both "unknown" when
// there was no git checkout to ask.
struct GitState {
  std::string commit;
  std::string dirty;  // "true", "false" or "unknown"
};

// The state of the source tree when this binary was built (generated).
GitState built_source();

// What a results context records about both: source_git_commit and
// source_git_dirty (the build's), checkout_git_commit and
// checkout_git_dirty (the checkout's at run time), and provenance_warning
// when the build's commit is unknown or both are known and differ. An
// unknown checkout (a binary run away from its source) is no mismatch.
struct Provenance {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::string warning;  // empty when the two agree
};
Provenance provenance(const GitState& built, const GitState& checkout);

}  // namespace wsb
