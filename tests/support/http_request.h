// The requests and checks of tests that judge a server's HTTP from the
// wire (http_conformance_test): a request kept as its lines so a test can
// change any part, and gtest assertions on WireResponse.
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "http_wire.h"

namespace wsb::testing {

// A request a server answers with 2xx and a reply that contains `marker`.
struct Call {
  std::string method;
  std::string target;
  std::string fields;  // beyond Host and Content-Length, each ending CRLF
  std::string body;
  std::string marker;
};

// ---- requests ----

// A request as lines, so a row can change any part of it.
struct Request {
  std::string method;
  std::string line;    // the request-line
  std::string fields;  // each ending CRLF
  std::string body;
  std::string bytes() const { return line + "\r\n" + fields + "\r\n" + body; }
  Request& add(const std::string& field) {
    fields += field + "\r\n";
    return *this;
  }
  // Removes the field lines named `name` (as written here, case and all).
  Request& drop(const std::string& name) {
    for (std::size_t at; (at = fields.find(name + ": ")) != std::string::npos;)
      fields.erase(at, fields.find("\r\n", at) + 2 - at);
    return *this;
  }
  Request& version(const std::string& v) {
    line = line.substr(0, line.rfind(' ') + 1) + v;
    return *this;
  }
  // The body sent chunked (in two chunks), without Content-Length.
  Request& chunked(const std::string& coding = "chunked") {
    drop("Content-Length");
    add("Transfer-Encoding: " + coding);
    body = chunks(body);
    return *this;
  }
  static std::string hex(std::size_t n) {
    std::ostringstream out;
    out << std::hex << n;
    return out.str();
  }
  static std::string chunks(const std::string& data, const std::string& ext = "",
                            const std::string& trailer = "") {
    const std::size_t half = data.size() / 2;
    std::string out;
    for (const auto& part : {data.substr(0, half), data.substr(half)})
      if (!part.empty()) out += hex(part.size()) + ext + "\r\n" + part + "\r\n";
    return out + "0\r\n" + trailer + "\r\n";
  }
};

// ---- checks ----

inline std::string show(const WireResponse& r) {
  return (r.ok() ? "" : "[" + r.error + "] ") + r.head + "\n" + r.body.substr(0, 200);
}

inline ::testing::AssertionResult status_in(const WireResponse& r, std::set<int> ok) {
  if (r.ok() && ok.contains(r.status)) return ::testing::AssertionSuccess();
  std::string want;
  for (int s : ok) want += (want.empty() ? "" : " or ") + std::to_string(s);
  return ::testing::AssertionFailure() << "want " << want << ", got: " << show(r);
}

inline ::testing::AssertionResult served(const WireResponse& r, const Call& c) {
  if (r.ok() && r.status / 100 == 2 && r.body.find(c.marker) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "want 2xx with \"" << c.marker << "\", got: " << show(r);
}

// 400, or the request served as if the offending part were not there.
inline ::testing::AssertionResult refused_or_served(const WireResponse& r, const Call& c) {
  if (r.ok() && r.status == 400) return ::testing::AssertionSuccess();
  return served(r, c);
}

inline ::testing::AssertionResult closes(WireConnection& c) {
  const Ending e = c.ending();
  if (e == Ending::clean || e == Ending::no_notify || e == Ending::reset)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "want the connection closed, it was " << to_string(e);
}

// 2^64 + n in decimal (n below 10^6): past every 64-bit integer.
inline std::string two_to_the_64_plus(std::size_t n) {
  std::string digits = "18446744073709551616";
  std::size_t carry = 0;
  for (auto at = digits.rbegin(); at != digits.rend() && (n > 0 || carry > 0); ++at, n /= 10) {
    const std::size_t sum = static_cast<std::size_t>(*at - '0') + n % 10 + carry;
    *at = static_cast<char>('0' + sum % 10);
    carry = sum / 10;
  }
  return digits;
}

inline void has_date(const WireResponse& r) {
  ASSERT_TRUE(r.ok()) << show(r);
  const auto dates = r.all("Date");
  ASSERT_EQ(dates.size(), 1u) << show(r);
  EXPECT_EQ(check_imf_fixdate(dates.front()), "");
}

}  // namespace wsb::testing
