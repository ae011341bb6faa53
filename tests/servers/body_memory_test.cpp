// What a refused body costs the server in memory: a connection that sends
// far more than ServerLimits::max_body_bytes, chunked or with a declared
// length, is refused with 413 while the process's peak RSS grows by at
// most 1.5 x max_body_bytes. The body is one element the server's parser
// accumulates as it reads (a text, or a binary as base64), the most a
// parser holds for a body of that size.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "common/service.h"
#include "common/transport.h"
#include "process_memory.h"

namespace wsb {
namespace {

using testing::reset_peak_rss;
using testing::status_kb;

constexpr std::size_t kMaxBody = std::size_t{32} << 20;
constexpr std::size_t kSent = std::size_t{200} << 20;  // the body a client tries to send
constexpr std::size_t kPiece = std::size_t{1} << 20;   // sent a chunk at a time

// A client socket whose sends give up after a few seconds: a server that
// stops reading without closing must fail the test, not hang it.
class Sender {
 public:
  explicit Sender(const Endpoint& server) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(server.port);
    ::inet_pton(AF_INET, server.host.c_str(), &addr.sin_addr);
    const timeval timeout{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~Sender() { ::close(fd_); }
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;

  bool connected() const { return connected_; }
  // False once the peer has closed or stopped reading for the timeout.
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  // What the server answered before closing (up to the timeout).
  std::string received() {
    std::string all;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      all.append(buf, static_cast<std::size_t>(n));
    }
    return all;
  }

 private:
  int fd_;
  bool connected_ = false;
};

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
  std::ostringstream size;
  size << std::hex << data.size();
  return size.str() + "\r\n" + std::string(data) + "\r\n";
}

class BodyMemory : public ::testing::TestWithParam<BodyCase> {};

TEST_P(BodyMemory, RefusedBodyPeaksWithinOneAndAHalfTimesTheLimit) {
#if defined(__SANITIZE_ADDRESS__)
  // ASan's quarantine keeps freed blocks resident (256 MiB by default):
  // the peak would measure the sanitizer's allocator, not the server's.
  GTEST_SKIP() << "peak RSS under AddressSanitizer measures its quarantine";
#endif
  const BodyCase& c = GetParam();
  Service service;
  ServerOptions options;
  options.limits.max_body_bytes = kMaxBody;
  const auto server = find_stack("gsoap").start_server(service, options);

  const std::string filler(kPiece, c.filler);
  ASSERT_TRUE(reset_peak_rss()) << "cannot reset the peak RSS (/proc/self/clear_refs)";
  const std::uint64_t before_kb = status_kb("VmRSS");
  {
    Sender sender(server->endpoint());
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
    const std::string reply = sender.received();
    EXPECT_EQ(reply.rfind("HTTP/1.1 413", 0), 0u) << reply.substr(0, 200);
  }
  const std::uint64_t peak_kb = status_kb("VmHWM");
  const std::uint64_t grown = (peak_kb > before_kb ? peak_kb - before_kb : 0) * 1024;
  RecordProperty("peak_rss_growth_bytes", std::to_string(grown));
  EXPECT_LE(grown, kMaxBody + kMaxBody / 2)
      << "peak RSS grew by " << grown / (1 << 20) << " MiB for a limit of " << kMaxBody / (1 << 20)
      << " MiB";
  // And the server goes on.
  EXPECT_EQ(find_stack("gsoap").connect(server->endpoint(), "soap")->ping(), kPingReply);
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
