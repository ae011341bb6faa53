// The beast server's fixed reply header (ResponseHead) against Beast's own
// serializer: for every kind of reply the REST handler gives, the bytes the
// server sends are the bytes http::write of the equivalent Beast response
// would send.

#include <gtest/gtest.h>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <cmath>
#include <ctime>
#include <regex>
#include <sstream>
#include <string>

#include "beast/beast_rest.h"
#include "rest/http_negotiation.h"
#include "rest/rest_handler.h"

namespace wsb {
namespace {

namespace http = boost::beast::http;

struct Reply {
  unsigned version = 11;
  bool keep_alive = true;
  unsigned status = 200;
  std::string content_type;
  std::string location;
  std::string_view allow;
  std::string server_timing;
  std::string body;
};

rest::RestResponse filled(const Reply& r, std::string& body) {
  body = r.body;
  rest::RestResponse res(body);
  res.status = r.status;
  res.content_type = r.content_type;
  res.location = r.location;
  res.allow = r.allow;
  res.server_timing = r.server_timing;
  return res;
}

// What the server sends: its ResponseHead (one per connection, `head`),
// then the body.
std::string sent_with_date(beast_stack::ResponseHead& head, const Reply& r) {
  std::string body;
  const rest::RestResponse res = filled(r, body);
  return std::string(head.of(r.version, r.keep_alive, res)) + body;
}

// The Date field's line, which every reply ends its header with (the
// comparison with Beast leaves it out: Beast sets no Date).
const std::regex kDateLine(
    "Date: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} "
    "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} "
    "[0-9]{2}:[0-9]{2}:[0-9]{2} GMT\r\n\r\n");

std::string sent(beast_stack::ResponseHead& head, const Reply& r) {
  std::string out = sent_with_date(head, r);
  std::smatch date;
  if (!std::regex_search(out, date, kDateLine)) return "no Date field last: " + out;
  return out.replace(static_cast<std::size_t>(date.position(0)),
                     static_cast<std::size_t>(date.length(0)) - 2, "");
}

// The same reply as a Beast response, built field by field, serialised by
// Beast.
std::string beast_serialised(const Reply& r) {
  http::response<http::string_body> res;
  res.version(r.version);
  res.result(r.status);
  if (!r.content_type.empty()) res.set(http::field::content_type, r.content_type);
  if (!r.location.empty()) res.set(http::field::location, r.location);
  if (!r.allow.empty()) res.set(http::field::allow, r.allow);
  if (!r.server_timing.empty()) res.set("Server-Timing", r.server_timing);
  res.keep_alive(r.keep_alive);
  res.body() = r.body;
  if (res.result() != http::status::no_content) res.prepare_payload();
  std::ostringstream out;
  out << res;
  return out.str();
}

Reply reply(unsigned status, std::string content_type, std::string body) {
  Reply r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

TEST(ResponseHead, IsWhatBeastSerialisesForEveryKindOfReply) {
  const std::string json(rest::media_type(rest::Format::json));
  const std::string text(rest::media_type(rest::Format::text));
  std::vector<Reply> replies = {
      reply(200, json, R"({"text":"pong"})"),
      reply(200, json, "{}"),
      reply(200, json, "{}"),
      reply(413, text, "too large"),
      reply(201, "", ""),
      reply(204, "", ""),
      reply(204, "", ""),
      reply(405, text, "no"),
      reply(200, json, ""),
      reply(500, text, ""),
  };
  replies[1].version = 10;  // keep-alive asked for
  replies[2].version = 10;
  replies[2].keep_alive = false;
  replies[3].keep_alive = false;
  replies[4].location = "/queues/7";
  replies[6].keep_alive = false;
  replies[7].allow = "GET, PUT";
  replies[8].server_timing = "parse;dur=0.001, service;dur=0.002, marshal;dur=0.003";
  replies[8].body.assign(100'000, 'x');
  for (const Reply& r : replies) {
    beast_stack::ResponseHead fresh;
    EXPECT_EQ(sent(fresh, r), beast_serialised(r)) << beast_serialised(r);
  }
  // One connection's head through all of them, twice, each kind after
  // every other: a reused prefix never carries the previous reply's status,
  // type, version or framing.
  beast_stack::ResponseHead connection;
  for (int round = 0; round < 2; ++round)
    for (const Reply& r : replies) EXPECT_EQ(sent(connection, r), beast_serialised(r));
}

// A run of replies that differ only in their body's length: the head is
// reused up to the Content-Length value, which follows each body.
TEST(ResponseHead, ReusedHeadCarriesEachBodysLength) {
  beast_stack::ResponseHead connection;
  for (const std::size_t bytes : {15, 1, 100'000, 0, 15}) {
    const Reply r = reply(200, "application/json", std::string(bytes, 'x'));
    EXPECT_EQ(sent(connection, r), beast_serialised(r));
  }
  const Reply other_type = reply(200, "application/xml", "<a/>");
  EXPECT_EQ(sent(connection, other_type), beast_serialised(other_type));
  const Reply other_status = reply(404, "application/xml", "<a/>");
  EXPECT_EQ(sent(connection, other_status), beast_serialised(other_status));
}

// Date is now, as HTTP's IMF-fixdate (RFC 9110 5.6.7), on every kind of
// reply, 204 included.
TEST(ResponseHead, CarriesTodaysDate) {
  beast_stack::ResponseHead head;
  for (const unsigned status : {200u, 204u, 404u}) {
    const std::string out = sent_with_date(head, reply(status, "text/plain", ""));
    std::smatch date;
    ASSERT_TRUE(std::regex_search(out, date, kDateLine)) << out;
    std::tm parsed{};
    ASSERT_NE(strptime(date.str(0).c_str(), "Date: %a, %d %b %Y %H:%M:%S GMT", &parsed), nullptr);
    EXPECT_LE(std::abs(std::difftime(timegm(&parsed), std::time(nullptr))), 2.0) << date.str(0);
  }
}

// The comparison catches a header that differs from Beast's: a reply whose
// Content-Length is not its body's.
TEST(ResponseHead, ComparisonSeesAWrongContentLength) {
  const Reply r = reply(200, "application/json", "{}");
  beast_stack::ResponseHead head;
  std::string wrong = sent(head, r);
  wrong.replace(wrong.find("Content-Length: 2"), 17, "Content-Length: 3");
  EXPECT_NE(wrong, beast_serialised(r));
}

}  // namespace
}  // namespace wsb
