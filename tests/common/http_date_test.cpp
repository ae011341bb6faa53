// The Date field every HTTP/1.1 server sends (src/common/http_date.h):
// IMF-fixdate (RFC 9110 5.6.7) for known instants, strftime's C-locale
// answer for many others, and the cached field of now.
#include "common/http_date.h"

#include <gtest/gtest.h>

#include <cstring>
#include <ctime>
#include <random>
#include <string>

namespace wsb {
namespace {

std::string formatted(std::time_t at) {
  char out[35];
  format_http_date_field(at, out);
  return std::string(out, sizeof out);
}

TEST(HttpDate, KnownInstants) {
  EXPECT_EQ(formatted(0), "Date: Thu, 01 Jan 1970 00:00:00 GMT");
  // RFC 9110 5.6.7's own example.
  EXPECT_EQ(formatted(784111777), "Date: Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(formatted(1709251199), "Date: Thu, 29 Feb 2024 23:59:59 GMT");  // a leap day
  EXPECT_EQ(formatted(4102444800), "Date: Fri, 01 Jan 2100 00:00:00 GMT");
}

// strftime in the C locale (gmtime_r's calendar) agrees on 10,000 instants
// from 1970 to 2200.
TEST(HttpDate, AgreesWithStrftime) {
  std::mt19937_64 random(7);
  std::uniform_int_distribution<std::time_t> instants(0, 7'258'118'400);
  for (int i = 0; i < 10'000; ++i) {
    const std::time_t at = instants(random);
    std::tm utc{};
    ASSERT_NE(gmtime_r(&at, &utc), nullptr);
    char expected[64];
    const std::size_t n =
        std::strftime(expected, sizeof expected, "Date: %a, %d %b %Y %H:%M:%S GMT", &utc);
    ASSERT_EQ(formatted(at), std::string(expected, n)) << at;
  }
}

// The cached field is one whole line's worth, NUL-terminated for C
// libraries' header hooks, and its value is the same text.
TEST(HttpDate, CachedFieldIsNow) {
  const std::time_t before = std::time(nullptr);
  const std::string_view field = http_date_field();
  const std::time_t after = std::time(nullptr);
  ASSERT_EQ(field.size(), 35u);
  EXPECT_EQ(field.data()[field.size()], '\0');
  EXPECT_TRUE(field == formatted(before) || field == formatted(after)) << field;
  EXPECT_EQ(http_date(), field.substr(6));
}

}  // namespace
}  // namespace wsb
