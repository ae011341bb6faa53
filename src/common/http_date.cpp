#include "common/http_date.h"

#include <chrono>
#include <cstring>

namespace wsb {

// By hand, with <chrono>'s calendar: strftime's names follow the locale,
// and gmtime_r takes a lock.
void format_http_date_field(std::time_t at, char (&out)[35]) {
  using namespace std::chrono;
  static constexpr char kDays[] = "SunMonTueWedThuFriSat";
  static constexpr char kMonths[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
  const sys_seconds instant{seconds{at}};
  const sys_days day = floor<days>(instant);
  const year_month_day date{day};
  const hh_mm_ss time{instant - day};
  const auto two = [](char* to, long v) {
    to[0] = static_cast<char>('0' + v / 10);
    to[1] = static_cast<char>('0' + v % 10);
  };
  std::memcpy(out, "Date: Thu, 01 Jan 1970 00:00:00 GMT", sizeof out);
  std::memcpy(out + 6, kDays + 3 * weekday{day}.c_encoding(), 3);
  two(out + 11, static_cast<unsigned>(date.day()));
  std::memcpy(out + 14, kMonths + 3 * (static_cast<unsigned>(date.month()) - 1), 3);
  const int year = static_cast<int>(date.year());
  two(out + 18, year / 100);
  two(out + 20, year % 100);
  two(out + 23, time.hours().count());
  two(out + 26, time.minutes().count());
  two(out + 29, static_cast<long>(time.seconds().count()));
}

std::string_view http_date_field() {
  thread_local std::time_t formatted = -1;
  thread_local char field[36] = {};  // the last byte stays NUL
  const std::time_t now = std::time(nullptr);
  if (now != formatted) {
    format_http_date_field(now, reinterpret_cast<char(&)[35]>(field));
    formatted = now;
  }
  return {field, 35};
}

}  // namespace wsb
