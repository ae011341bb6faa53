// What a benchmark run records about the build, so cited numbers can be
// traced to library versions and compiler flags.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace wsb {

// (key, value) pairs such as ("gsoap_version", "2.8.124").
std::vector<std::pair<std::string, std::string>> build_info();

}  // namespace wsb
