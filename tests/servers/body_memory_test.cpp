// What a refused body costs the server in memory: a connection that sends
// far more than ServerLimits::max_body_bytes, chunked or with a declared
// length, is refused with 413 while the process's peak RSS grows by at
// most 1.5 x max_body_bytes. Bodies under the limit in every framing, the
// framing's own lines and memory given back once idle are
// framing_memory_test's, over every HTTP/1.1 stack.
#include <gtest/gtest.h>
#include <malloc.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "common/service.h"
#include "common/transport.h"
#include "padded_calls.h"
#include "stack_fixture.h"

namespace wsb {
namespace {

using testing::kRssMeasurable;
using testing::kRssUnderAsan;
using testing::mib;
using testing::PeakRss;
using testing::WirePeer;

constexpr std::size_t kMaxBody = testing::kMemoryMaxBody;
constexpr std::size_t kMaxHeader = testing::kMemoryMaxHeader;
constexpr std::size_t kSent = std::size_t{200} << 20;  // the body a client tries to send
constexpr std::size_t kPiece = std::size_t{1} << 20;   // sent a chunk at a time

struct BodyCase {
  std::string name;
  bool chunked;
  std::string element;  // opens the accumulated element
  char filler;          // its content, repeated
};

// The SOAP echo of one huge payload element, never closed: the server
// must refuse it before it ends.
std::string envelope_start(const BodyCase& c) {
  return R"(<?xml version="1.0" encoding="UTF-8"?>)"
         R"(<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/")"
         R"( xmlns:wsb="urn:wsbench"><SOAP-ENV:Body><wsb:echo><wsb:payload>)" +
         c.element;
}

std::string chunk(std::string_view data) {
  return testing::chunk_size_line(data.size()) + std::string(data) + "\r\n";
}

class BodyMemory : public ::testing::TestWithParam<BodyCase> {};

// The body is one element the server's parser accumulates as it reads (a
// text, or a binary as base64), the most a parser holds for a body of that
// size.
TEST_P(BodyMemory, RefusedBodyPeaksWithinOneAndAHalfTimesTheLimit) {
  if (!kRssMeasurable) GTEST_SKIP() << kRssUnderAsan;
  const BodyCase& c = GetParam();
  Service service;
  ServerOptions options;
  options.limits.max_body_bytes = kMaxBody;
  const auto server = find_stack("gsoap").start_server(service, options);

  const std::string filler(kPiece, c.filler);
  const PeakRss rss;
  ASSERT_TRUE(rss.reset()) << "cannot reset the peak RSS (/proc/self/clear_refs)";
  {
    WirePeer sender(server->endpoint(), false, std::chrono::seconds(10));
    ASSERT_TRUE(sender.connected());
    std::string head =
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/xml; charset=utf-8\r\n";
    head += c.chunked ? "Transfer-Encoding: chunked\r\n\r\n"
                      : "Content-Length: " + std::to_string(kSent) + "\r\n\r\n";
    const std::string start = envelope_start(c);
    bool open = sender.send(head) && sender.send(c.chunked ? chunk(start) : start);
    std::size_t sent = start.size();
    while (open && sent < kSent) {
      open = sender.send(c.chunked ? chunk(filler) : std::string_view(filler));
      sent += filler.size();
    }
    if (open && c.chunked) sender.send("0\r\n\r\n");
    std::string reply;
    sender.read_to_end(reply);
    EXPECT_EQ(reply.rfind("HTTP/1.1 413", 0), 0u) << reply.substr(0, 200);
  }
  const std::uint64_t grown = rss.grown_bytes();
  RecordProperty("peak_rss_growth_bytes", std::to_string(grown));
  EXPECT_LE(grown, kMaxBody + kMaxBody / 2)
      << "peak RSS grew by " << mib(grown) << " for a limit of " << mib(kMaxBody);
  EXPECT_TRUE(testing::serves_ping("gsoap", server->endpoint()));
}

std::string case_name(const ::testing::TestParamInfo<BodyCase>& param) { return param.param.name; }

INSTANTIATE_TEST_SUITE_P(Gsoap, BodyMemory,
                         ::testing::Values(BodyCase{"chunked_text", true, "<wsb:text>", 'A'},
                                           BodyCase{"chunked_binary", true, "<wsb:binary>", 'A'},
                                           BodyCase{"declared_text", false, "<wsb:text>", 'A'},
                                           BodyCase{"declared_binary", false, "<wsb:binary>", 'A'}),
                         case_name);

}  // namespace
}  // namespace wsb
