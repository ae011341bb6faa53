// The xmlrpc-c anchor through start_server/connect: ping, a message-b/128KiB
// echo equal to the request, the operations it does not have, one
// keep-alive connection past Abyss's default of 30 requests per
// connection, and the same bytes on the wire as the xmlrpc-c stack, both
// ways: its server's replies equal the stack server's for the same request,
// and its client's requests equal the stack client's.
#include "anchors/xmlrpc-c/xmlrpc_anchor.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/payload.h"
#include "common/rpc_binding.h"
#include "common/service.h"
#include "harness/loopback.h"
#include "raw_http.h"
#include "xmlrpc/xmlrpc_codec.h"

namespace wsb {
namespace {

namespace anchor = wsb::anchors::xmlrpc;
using testing::RawConnection;

class XmlrpcAnchor : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = anchor::start_server(ServerOptions{}); }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override { client_ = anchor::connect(server_->endpoint()); }

  static Payload message_b() { return generate(parse_spec("message-b/128KiB")); }

  static inline std::unique_ptr<Server> server_;
  std::unique_ptr<Client> client_;
};

TEST_F(XmlrpcAnchor, PingAnswersPong) { EXPECT_EQ(client_->ping(), kPingReply); }

TEST_F(XmlrpcAnchor, EchoOfMessageBEqualsTheRequest) {
  const Payload sent = message_b();
  Payload back;
  client_->echo(sent, back);
  EXPECT_EQ(describe_difference(sent, back), "");
}

TEST_F(XmlrpcAnchor, OtherOperationsAreCallErrors) {
  Payload out;
  std::vector<Message> messages;
  const std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"get", [&] { client_->get(parse_spec("ints/200"), out); }},
      {"register", [&] { client_->register_client(); }},
      {"send", [&] { client_->send_message("q", Message{}); }},
      {"receive", [&] { client_->receive_messages("q", messages); }},
      {"unregister", [&] { client_->unregister_client("q"); }},
      {"primes", [&] { client_->primes(10); }},
      {"define", [&] { client_->define("word"); }},
      {"put", [&] { client_->put("word", "definition"); }},
  };
  for (const auto& [op, call] : calls) {
    try {
      call();
      ADD_FAILURE() << op << " did not throw";
    } catch (const CallError& e) {
      EXPECT_EQ(std::string(e.what()), op + " is not an operation of the anchor");
    }
  }
}

TEST_F(XmlrpcAnchor, ServerFaultIsACallError) {
  // A stack client calls methods the anchor's registry does not have.
  const auto stack_client = find_stack("xmlrpc-c").connect(server_->endpoint(), "xmlrpc");
  EXPECT_THROW(stack_client->register_client(), CallError);
}

// The local port of this process's one connection to `server` (none: 0;
// more than one: a test failure).
std::uint16_t client_port_to(const Endpoint& server) {
  std::vector<std::uint16_t> ports;
  DIR* dir = opendir("/proc/self/fd");
  while (const dirent* e = readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    sockaddr_in local{}, peer{};
    socklen_t ll = sizeof local, pl = sizeof peer;
    if (e->d_name[0] == '.' || getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0 ||
        peer.sin_family != AF_INET || ntohs(peer.sin_port) != server.port ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0)
      continue;
    ports.push_back(ntohs(local.sin_port));
  }
  closedir(dir);
  EXPECT_LE(ports.size(), 1u) << "connections to the server";
  return ports.empty() ? 0 : ports.front();
}

TEST_F(XmlrpcAnchor, OneConnectionPastAbyssDefaultOfThirtyRequests) {
  client_->ping();
  const std::uint16_t first = client_port_to(server_->endpoint());
  ASSERT_NE(first, 0);
  for (int i = 0; i < 40; ++i) client_->ping();
  EXPECT_EQ(client_port_to(server_->endpoint()), first) << "the client reconnected";
}

// ---- the same bytes as the stack ----

// A request as a client sends it, with its header fields.
std::string request_of(const std::string& xml_body) {
  return "POST /RPC2 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml\r\nContent-Length: " +
         std::to_string(xml_body.size()) + "\r\n\r\n" + xml_body;
}

// `message` without its header field `name` (as written, with ": "), which
// differs for reasons of no interest here: the clock (Date), the port
// (Host).
std::string without_field(const std::string& message, const std::string& name) {
  const std::size_t at = message.find("\r\n" + name + ": ");
  if (at == std::string::npos) return message;
  const std::size_t end = message.find("\r\n", at + 2);
  return message.substr(0, at) + message.substr(end);
}

// Where two messages first differ, briefly (a 128 KiB message in full
// would drown the report), or empty if they are equal.
std::string first_difference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i < 40 ? 0 : i - 40;
  return "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
         ", first difference at byte " + std::to_string(i) + ": '" + a.substr(from, 80) +
         "' against '" + b.substr(from, 80) + "'";
}

TEST_F(XmlrpcAnchor, RepliesEqualTheStackServers) {
  Service service;
  const auto stack_server = find_stack("xmlrpc-c").start_server(service, ServerOptions{});
  // The calls as the stack's client writes them (its RPC binding).
  const auto binding = xmlrpc::make_xmlrpc_rpc();
  const Payload sent = message_b();
  std::string ping_call, echo_call;
  binding->encode_call({.op = Operation::ping}, ping_call);
  binding->encode_call({.op = Operation::echo, .payload = &sent}, echo_call);
  for (const std::string& body : {ping_call, echo_call}) {
    RawConnection to_stack(stack_server->endpoint());
    RawConnection to_anchor(server_->endpoint());
    const auto stack_reply = testing::roundtrip(to_stack, request_of(body));
    const auto anchor_reply = testing::roundtrip(to_anchor, request_of(body));
    EXPECT_EQ(anchor_reply.status, 200);
    EXPECT_EQ(first_difference(anchor_reply.body, stack_reply.body), "");
    EXPECT_EQ(first_difference(without_field(anchor_reply.head, "Date"),
                               without_field(stack_reply.head, "Date")),
              "");
  }
}

// Accepts one connection, reads one request (framed by Content-Length),
// answers it with `reply_body` and closes: what a client sent, verbatim.
class OneRequestServer {
 public:
  explicit OneRequestServer(std::string reply_body) : reply_(std::move(reply_body)) {
    fd_ = listen_on_loopback(4, port_, "capture");
    thread_ = std::thread([this] { serve(); });
  }
  ~OneRequestServer() {
    if (thread_.joinable()) thread_.join();
    close(fd_);
  }
  Endpoint endpoint() const { return {"127.0.0.1", port_}; }
  std::string request() {
    thread_.join();
    return request_;
  }

 private:
  void serve() {
    const int c = accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    char buffer[65536];
    std::optional<std::size_t> total;
    while (!total || request_.size() < *total) {
      const ssize_t got = recv(c, buffer, sizeof buffer, 0);
      if (got <= 0) break;
      request_.append(buffer, static_cast<std::size_t>(got));
      const std::size_t head_end = request_.find("\r\n\r\n");
      const std::size_t length_at = request_.find("Content-Length: ");
      if (!total && head_end != std::string::npos && length_at < head_end)
        total = head_end + 4 + std::stoul(request_.substr(length_at + 16));
    }
    const std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: " +
                              std::to_string(reply_.size()) + "\r\n\r\n" + reply_;
    write_all(c, reply.data(), reply.size());
    close(c);
  }

  std::string reply_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::string request_;
};

// The request `call` sends through a client that `connect` makes, without
// its Host field.
std::string request_sent(const std::function<std::unique_ptr<Client>(const Endpoint&)>& connect,
                         const std::function<void(Client&)>& call, const std::string& reply) {
  OneRequestServer capture(reply);
  const auto client = connect(capture.endpoint());
  call(*client);
  return without_field(capture.request(), "Host");
}

TEST_F(XmlrpcAnchor, RequestsEqualTheStackClients) {
  const auto stack = [](const Endpoint& e) { return find_stack("xmlrpc-c").connect(e, "xmlrpc"); };
  const auto ours = [](const Endpoint& e) { return anchor::connect(e); };
  const std::string pong =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<methodResponse>\r\n<params>\r\n<param><value>"
      "<string>pong</string></value></param>\r\n</params>\r\n</methodResponse>\r\n";
  const auto ping = [](Client& c) { c.ping(); };
  EXPECT_EQ(first_difference(request_sent(ours, ping, pong), request_sent(stack, ping, pong)), "");

  // The reply (a string) is no payload: each client fails on it after the
  // request has gone out.
  const Payload sent = message_b();
  const auto echo = [&](Client& c) {
    Payload back;
    EXPECT_THROW(c.echo(sent, back), CallError);
  };
  const std::string from_anchor = request_sent(ours, echo, pong);
  EXPECT_GT(from_anchor.size(), std::size_t{128} << 10);
  EXPECT_EQ(first_difference(from_anchor, request_sent(stack, echo, pong)), "");
}

}  // namespace
}  // namespace wsb
