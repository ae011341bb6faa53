// The descriptor limit of tests that hold thousands of connections, both
// ends in this process.
#pragma once

#include <sys/resource.h>

namespace wsb::testing {

// Raises this process's descriptor limit to `wanted` if the hard limit
// allows; false if it does not.
inline bool raise_fd_limit(rlim_t wanted) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  if (limit.rlim_cur >= wanted) return true;
  if (limit.rlim_max < wanted) return false;
  limit.rlim_cur = wanted;
  return setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

}  // namespace wsb::testing
