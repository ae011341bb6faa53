// Tables in the docs that are a test's own table: the test generates the
// Markdown and checks that the page holds it after a heading.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace wsb::testing {

// Whether the page at `path` holds `table` somewhere after `heading` (a
// line of the page, its newline included).
inline ::testing::AssertionResult page_holds_table(const std::string& path,
                                                   const std::string& heading,
                                                   const std::string& table) {
  std::ifstream docs(path);
  if (!docs) return ::testing::AssertionFailure() << path << " not found";
  std::stringstream text;
  text << docs.rdbuf();
  const std::string page = text.str();
  const auto at = page.find(heading);
  if (at == std::string::npos)
    return ::testing::AssertionFailure() << path << " has no heading \"" << heading << "\"";
  if (page.find(table, at) == std::string::npos)
    return ::testing::AssertionFailure()
           << path << "'s table after \"" << heading << "\" differs from the test's; it is:\n"
           << table;
  return ::testing::AssertionSuccess();
}

}  // namespace wsb::testing
