// What RFC 9110 and 9112 ask of an origin server, on the gsoap server where
// gSOAP 2.8 alone does not do it (issue 32): HEAD, Transfer-Encoding and
// Host rules, header field syntax, the Date field, absolute-form targets,
// bounded chunk lines and trailers, and a refusal's clean close. The
// server and its TLS twin share this code (src/soap/soap_http_rules.h), so
// the plaintext server stands for both.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>
#include <utility>

#include "common/service.h"
#include "common/transport.h"
#include "raw_http.h"

namespace wsb {
namespace {

using testing::RawConnection;
using testing::RawResponse;
using testing::roundtrip;

constexpr std::size_t kMaxBody = 256 * 1024;
constexpr std::size_t kMaxHeader = 8 * 1024;

const std::string kPing =
    "<?xml version=\"1.0\"?><SOAP-ENV:Envelope "
    "xmlns:SOAP-ENV=\"http://schemas.xmlsoap.org/soap/envelope/\" "
    "xmlns:ns=\"urn:wsbench\"><SOAP-ENV:Body><ns:ping/></SOAP-ENV:Body></SOAP-ENV:Envelope>";

class GsoapHttpRules : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    service_ = new Service;
    ServerOptions options;
    options.limits.max_body_bytes = kMaxBody;
    options.limits.max_header_bytes = kMaxHeader;
    options.limits.keepalive_timeout_s = 2;
    server_ = find_stack("gsoap").start_server(*service_, options).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete service_;
  }
  static Endpoint endpoint() { return server_->endpoint(); }
  static std::string host() { return endpoint().to_string(); }

  // A ping POST with `fields` (each ending in CRLF) after the Host field.
  static std::string ping(std::string_view fields = {}, std::string_view target = "/",
                          std::string_view version = "HTTP/1.1") {
    return "POST " + std::string(target) + " " + std::string(version) + "\r\nHost: " + host() +
           "\r\n" + std::string(fields) +
           "Content-Type: text/xml; charset=utf-8\r\nContent-Length: " +
           std::to_string(kPing.size()) + "\r\n\r\n" + kPing;
  }
  // The request `bytes` gets `status` and the close.
  static void expect_refused(const std::string& bytes, int status) {
    RawConnection c(endpoint());
    const RawResponse r = roundtrip(c, bytes);
    EXPECT_EQ(r.status, status) << bytes.substr(0, 200);
    EXPECT_EQ(r.header("Connection"), "close");
    EXPECT_TRUE(c.closed_by_server());
  }

  static Service* service_;
  static Server* server_;
};
Service* GsoapHttpRules::service_ = nullptr;
Server* GsoapHttpRules::server_ = nullptr;

// kPing as one chunk, without the last chunk.
std::string chunked_ping() {
  char size[16];
  std::snprintf(size, sizeof size, "%zx", kPing.size());
  return std::string(size) + "\r\n" + kPing + "\r\n";
}

// A response's status line and header fields, read without a body.
RawResponse read_head(RawConnection& c) {
  std::string head;
  while (!head.ends_with("\r\n\r\n")) head += c.read_exactly(1);
  RawResponse r;
  r.head = head;
  r.status = std::stoi(head.substr(9, 3));
  return r;
}

// ---- HEAD (RFC 9110 9.3.2) ----

TEST_F(GsoapHttpRules, HeadAnswersAsGetWithoutTheBodyAndPipeliningGoesOn) {
  RawConnection c(endpoint());
  const std::string get = "GET /?wsdl HTTP/1.1\r\nHost: " + host() + "\r\n\r\n";
  const RawResponse full = roundtrip(c, get);
  ASSERT_EQ(full.status, 200);
  ASSERT_TRUE(c.send("HEAD /?wsdl HTTP/1.1\r\nHost: " + host() + "\r\n\r\n" + ping()));
  const RawResponse head = read_head(c);
  EXPECT_EQ(head.status, 200);
  for (const char* field : {"Content-Type", "Content-Length", "Connection", "Server"})
    EXPECT_EQ(head.header(field), full.header(field)) << field;
  const RawResponse next = c.read_response();
  EXPECT_EQ(next.status, 200) << "the request pipelined after HEAD";
  EXPECT_NE(next.body.find(">pong<"), std::string::npos);
}

TEST_F(GsoapHttpRules, HeadOfAnUnknownPathIsTheGets404WithoutItsBody) {
  RawConnection c(endpoint());
  ASSERT_TRUE(c.send("HEAD /nowhere HTTP/1.1\r\nHost: " + host() + "\r\n\r\n"));
  EXPECT_EQ(read_head(c).status, 404);
  EXPECT_TRUE(c.closed_by_server()) << "no body after the head";
}

// ---- Transfer-Encoding (RFC 9112 6.1, 6.3) ----

// The body's end is unknown: even one that reads as chunked framing.
TEST_F(GsoapHttpRules, TransferEncodingNotEndingInChunkedIs400AndTheClose) {
  for (const char* codings : {"gzip", "chunked, gzip", "chunked\r\nTransfer-Encoding: chunked"})
    expect_refused("POST / HTTP/1.1\r\nHost: " + host() + "\r\nTransfer-Encoding: " + codings +
                       "\r\nContent-Type: text/xml\r\n\r\n" + chunked_ping() + "0\r\n\r\n",
                   400);
}

TEST_F(GsoapHttpRules, TransferEncodingWithContentLengthIs400AndTheClose) {
  expect_refused("POST / HTTP/1.1\r\nHost: " + host() +
                     "\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
                 400);
}

TEST_F(GsoapHttpRules, Http10WithTransferEncodingIs400AndTheClose) {
  expect_refused("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400);
}

TEST_F(GsoapHttpRules, ATransferCodingOtherThanChunkedIs501AndTheClose) {
  expect_refused("POST / HTTP/1.1\r\nHost: " + host() +
                     "\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
                 501);
}

// ---- Host (RFC 9112 3.2) ----

TEST_F(GsoapHttpRules, Http11WithoutHostOrWithTwoIs400) {
  expect_refused("POST / HTTP/1.1\r\nContent-Type: text/xml\r\nContent-Length: " +
                     std::to_string(kPing.size()) + "\r\n\r\n" + kPing,
                 400);
  expect_refused(ping("Host: other.example\r\n"), 400);
}

TEST_F(GsoapHttpRules, Http10WithoutHostIsServed) {
  RawConnection c(endpoint());
  const RawResponse r =
      roundtrip(c, "POST / HTTP/1.0\r\nContent-Type: text/xml\r\nContent-Length: " +
                       std::to_string(kPing.size()) + "\r\n\r\n" + kPing);
  EXPECT_EQ(r.status, 200);
}

// ---- field syntax (RFC 9112 2.2, 5.1, 5.2) ----

TEST_F(GsoapHttpRules, MalformedFieldLinesAre400AndTheClose) {
  for (const char* bad : {"Content-Type : text/xml\r\n",  // whitespace before the colon
                          "X-Note\tx: y\r\n",             // a name with a tab
                          "NoColonHere\r\n",              // no colon
                          "X-Note: a\001b\r\n",           // a control character
                          "X-Note: a\rb\r\n",             // a bare CR
                          "X-Note: a\r\n folded\r\n",     // obs-fold
                          ": empty name\r\n"}) {
    SCOPED_TRACE(bad);
    expect_refused(ping(bad), 400);
  }
  std::string nul = ping("X-Note: a_b\r\n");
  nul[nul.find("a_b") + 1] = '\0';
  expect_refused(nul, 400);
}

// ---- Date (RFC 9110 6.6.1) ----

TEST_F(GsoapHttpRules, EveryReplyCarriesAnImfFixdate) {
  const std::regex imf(R"([A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT)");
  auto expect_date = [&](const RawResponse& r) {
    const auto date = r.header("Date");
    ASSERT_TRUE(date.has_value()) << r.head;
    EXPECT_TRUE(std::regex_match(*date, imf)) << *date;
  };
  RawConnection c(endpoint());
  expect_date(roundtrip(c, ping()));                                                 // 200
  expect_date(roundtrip(c, "GET /?wsdl HTTP/1.1\r\nHost: " + host() + "\r\n\r\n"));  // GET
  {
    RawConnection f(endpoint());  // a SOAP Fault
    std::string bad = ping();
    bad.replace(bad.find("<ns:ping/>"), 10, "<ns:nope/>");
    expect_date(roundtrip(f, bad));
  }
  for (const std::string& refused :
       {std::string("GET /nowhere HTTP/1.1\r\nHost: ") + host() + "\r\n\r\n",           // 404
        std::string("\x01\x02 garbage\r\n\r\n"),                                        // raw 400
        "POST / HTTP/1.1\r\nHost: " + host() + "\r\nContent-Length: 99999999\r\n\r\n",  // 413
        "POST / HTTP/1.1\r\nHost: " + host() + "\r\nX: " + std::string(kMaxHeader, 'x') +
            "\r\n\r\n"}) {  // 431
    RawConnection r(endpoint());
    expect_date(roundtrip(r, refused));
  }
}

// ---- absolute-form (RFC 9112 3.2.2) ----

TEST_F(GsoapHttpRules, AbsoluteFormTargetsAreServedAsTheirPath) {
  RawConnection c(endpoint());
  const RawResponse wsdl =
      roundtrip(c, "GET http://" + host() + "/?wsdl HTTP/1.1\r\nHost: " + host() + "\r\n\r\n");
  EXPECT_EQ(wsdl.status, 200);
  EXPECT_NE(wsdl.body.find("definitions"), std::string::npos);
  const RawResponse r = roundtrip(c, ping({}, "http://" + host() + "/"));
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(">pong<"), std::string::npos);
}

// ---- chunk lines and trailers count as header (RFC 9112 7.1) ----

TEST_F(GsoapHttpRules, LongChunkExtensionsAndTrailersAreRefused) {
  const std::string head = "POST / HTTP/1.1\r\nHost: " + host() +
                           "\r\nContent-Type: text/xml\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string body = chunked_ping();
  const std::string size = body.substr(0, body.find('\r'));
  for (const std::string& framing :
       {size + ";ext=" + std::string(4 * kMaxHeader, 'e') + "\r\n" + kPing + "\r\n0\r\n\r\n",
        body + "0\r\nX-Trailer: " + std::string(4 * kMaxHeader, 't') + "\r\n\r\n",
        body + "0\r\n" +
            [] {
              std::string many;
              for (std::size_t i = 0; i < kMaxHeader / 8; ++i) many += "X-T: ab\r\n";
              return many;
            }() +
            "\r\n",
        std::string(4 * kMaxHeader, '0') + body + "0\r\n\r\n"}) {
    RawConnection c(endpoint());
    const RawResponse r = roundtrip(c, head + framing);
    EXPECT_TRUE(r.status == 431 || r.status == 400) << r.status;
    EXPECT_TRUE(c.closed_by_server());
  }
  // Within the limit, a trailer is fine.
  RawConnection ok(endpoint());
  EXPECT_EQ(roundtrip(ok, head + body + "0\r\nX-Trailer: t\r\n\r\n").status, 200);
}

// ---- a refusal ends in a FIN, not a reset (RFC 9112 9.6) ----

// Sends `head` and `body_bytes` more from another thread, with no pause,
// so that the server refuses with unread input in its socket; reads the
// reply after a while, and tells whether the connection then ended cleanly
// (a FIN, not a reset, which would discard the reply unread).
struct Closing {
  int status = 0;
  bool clean = false;     // the reply, then the end of the stream
  bool all_sent = false;  // no reset refused the client's bytes
};
Closing refuse_with_unread_input(const Endpoint& server, const std::string& head,
                                 std::size_t body_bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server.port);
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return {};
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  Closing out;
  std::thread sender([fd, &head, body_bytes, &out] {
    const std::string bytes = head + std::string(body_bytes, 'x');
    for (std::size_t sent = 0; sent < bytes.size();) {
      const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<std::size_t>(n);
    }
    out.all_sent = true;
  });
  // The server refuses while bytes are still coming; the reply waits.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::string got;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      got.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    out.clean = n == 0;
    break;
  }
  sender.join();
  ::close(fd);
  if (got.size() > 12 && got.starts_with("HTTP/1.1 ")) out.status = std::stoi(got.substr(9, 3));
  return out;
}

TEST_F(GsoapHttpRules, RefusalsWithUnreadInputEndInAFin) {
  const std::string post = "POST / HTTP/1.1\r\nHost: " + host() + "\r\n";
  const std::pair<std::string, int> cases[] = {
      {post + "Transfer-Encoding: gzip\r\n\r\n", 400},
      {post + "Content-Length: 99999999\r\n\r\n", 413},
      {post + "Bad Field: x\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 100000\r\n\r\n", 400},
      {"\x01\x02 garbage\r\n\r\n", 400},
  };
  for (const auto& [head, status] : cases) {
    SCOPED_TRACE(head);
    const Closing r = refuse_with_unread_input(endpoint(), head, 16 * 1024 * 1024);
    EXPECT_EQ(r.status, status);
    EXPECT_TRUE(r.clean) << "the connection was reset";
    EXPECT_TRUE(r.all_sent) << "the server reset the connection under the client's bytes";
  }
}

}  // namespace
}  // namespace wsb
