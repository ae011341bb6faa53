// Refusals without a reset (issue 32): when a server ends a connection
// after a reply — Connection: close, a body over the limit while the client
// is still uploading, a malformed request, xmlrpc-c's refusal of pipelining
// — the client reads the whole reply and then a clean end of stream. A
// server that closes its socket with the client's bytes still unread makes
// the kernel send a reset instead, which can destroy the reply before the
// client reads it (RFC 9112 9.6: close in stages). So in every case the
// client's extra bytes are on their way before the server replies, and the
// client waits a moment before reading. Every HTTP/1.1 stack, plaintext
// and TLS.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/service.h"
#include "common/transport.h"
#include "padded_calls.h"

namespace wsb {
namespace {

using testing::PaddedCall;
using testing::RawResponse;
using testing::WireEnd;
using testing::WirePeer;

constexpr std::size_t kMaxBody = std::size_t{1} << 20;

enum class Close {
  close_then_pipelined,
  close_then_unread_body,
  over_limit_upload,
  malformed_then_more,
  pipelined_pair
};
constexpr const char* kCloseNames[] = {"close_then_pipelined", "close_then_unread_body",
                                       "over_limit_upload", "malformed_then_more",
                                       "pipelined_pair"};

// The stack's ping, whole, with `fields` added.
std::string ping(const std::string& stack, const std::string& fields = "") {
  const PaddedCall call = testing::padded_ping(stack);
  const std::string body = call.before + call.after;
  return call.request_line + "\r\nHost: localhost\r\n" + call.fields + fields +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

bool says_close(const RawResponse& r) {
  const auto connection = r.header("Connection");
  return connection && (*connection == "close" || *connection == "Close");
}

struct Param {
  std::string stack;
  Close close;
};

class CleanClose : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.limits.max_body_bytes = kMaxBody;
    server_ = find_stack(GetParam().stack).start_server(service_, options);
  }

  // Reads replies until `count` are in or one closes the connection; in
  // the second case, then the end of the stream, which must be clean.
  void expect_replies_then_clean_end(WirePeer& peer, std::size_t count, int status) {
    std::vector<RawResponse> replies;
    for (;;) {
      WireEnd end;
      const auto reply = peer.read_reply(end);
      ASSERT_TRUE(reply) << "after " << replies.size() << " whole replies: " << to_string(end);
      // 0: any refusal (gSOAP answers a broken field line with 500).
      if (status == 0)
        EXPECT_GE(reply->status, 400) << reply->head;
      else
        EXPECT_EQ(reply->status, status) << reply->head << "\n" << reply->body.substr(0, 300);
      replies.push_back(*reply);
      if (says_close(*reply) || replies.size() == count) break;
    }
    if (!says_close(replies.back()) && status == 200) return;  // answered all, kept open
    std::string after;
    const WireEnd end = peer.read_to_end(after);
    EXPECT_EQ(after.substr(0, 200), "") << "bytes after the closing reply";
    EXPECT_EQ(end, WireEnd::eof) << "after the reply the connection ended with " << to_string(end)
                                 << ", not a clean end of stream";
  }

  Service service_;
  std::unique_ptr<Server> server_;
};

TEST_P(CleanClose, ReplyThenCleanEndOfStream) {
  const Param& p = GetParam();
  WirePeer peer(server_->endpoint(), testing::is_tls_stack(p.stack));
  ASSERT_TRUE(peer.connected());
  const auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); };
  switch (p.close) {
    case Close::close_then_pipelined:
      // RFC 9112 9.6: no request after the one that says close is served.
      ASSERT_TRUE(peer.send(ping(p.stack, "Connection: close\r\n") + ping(p.stack)));
      settle();
      return expect_replies_then_clean_end(peer, 1, 200);
    case Close::close_then_unread_body: {
      // The next request's head and 256 KiB of its 8 MiB body.
      const PaddedCall echo = testing::padded_echo(p.stack);
      const std::string next = echo.request_line + "\r\nHost: localhost\r\n" + echo.fields +
                               "Content-Length: 8388608\r\n\r\n" + std::string(256 * 1024, 'a');
      ASSERT_TRUE(peer.send(ping(p.stack, "Connection: close\r\n") + next));
      settle();
      return expect_replies_then_clean_end(peer, 1, 200);
    }
    case Close::over_limit_upload: {
      // 64 MiB declared, sent on until the 413 is readable (8 MiB at most),
      // and a piece more.
      const PaddedCall echo = testing::padded_echo(p.stack);
      const std::string piece(64 * 1024, 'a');
      bool open = peer.send(echo.request_line + "\r\nHost: localhost\r\n" + echo.fields +
                            "Content-Length: 67108864\r\n\r\n" + echo.before);
      for (int i = 0; open && i < 128 && !peer.readable(); ++i) open = peer.send(piece);
      open = open && peer.send(piece);
      EXPECT_TRUE(open) << "the upload was cut (errno " << peer.send_errno()
                        << ") before the reply was read";
      settle();
      return expect_replies_then_clean_end(peer, 1, 413);
    }
    case Close::malformed_then_more:
      // A field line without a colon, then a request's worth of bytes more.
      ASSERT_TRUE(peer.send(
          "POST / HTTP/1.1\r\nHost: localhost\r\nThis line has no colon\r\nContent-Length: "
          "0\r\n\r\n" +
          ping(p.stack) + std::string(64 * 1024, 'a')));
      settle();
      return expect_replies_then_clean_end(peer, 1, 0);
    case Close::pipelined_pair:
      // Answered both, or (xmlrpc-c) the first with Connection: close.
      ASSERT_TRUE(peer.send(ping(p.stack) + ping(p.stack)));
      settle();
      return expect_replies_then_clean_end(peer, 2, 200);
  }
}

std::vector<Param> params() {
  std::vector<Param> out;
  for (const auto& stack : testing::http1_stacks())
    for (const Close c :
         {Close::close_then_pipelined, Close::close_then_unread_body, Close::over_limit_upload,
          Close::malformed_then_more, Close::pipelined_pair})
      out.push_back({stack, c});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Stacks, CleanClose, ::testing::ValuesIn(params()), [](const auto& p) {
  return testing::stack_test_name(p.param.stack) + "_" +
         kCloseNames[static_cast<int>(p.param.close)];
});

}  // namespace
}  // namespace wsb
