// The xmlrpc-c stack where a test needs a server or a peer of its own: the
// server's connection threads (pinned, named, SIGPIPE blocked), its body
// limit and start-up errors, and the client against a fake server (no
// Expect: 100-continue, bad replies as errors), each checked on the real
// sockets and threads. The shared server's tests: xmlrpc_stack_test.cpp.
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <xmlrpc-c/base.hpp>

#include "common/codec.h"
#include "common/placement.h"
#include "common/service.h"
#include "xmlrpc/xmlrpc_codec.h"
#include "xmlrpc/xmlrpc_stack.h"
#include "xmlrpc_stack_test.h"

namespace wsb {
namespace {

using testing::call_xml;
using testing::param;
using testing::port_of;
using testing::post;
using testing::Socket;
using testing::stack;
using xmlrpc::FaultError;

// ---- what /proc says about our own sockets and threads ----

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Threads of this process named `name`.
std::vector<pid_t> threads_named(const std::string& name) {
  std::vector<pid_t> out;
  DIR* dir = opendir("/proc/self/task");
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::string comm = read_file("/proc/self/task/" + std::string(e->d_name) + "/comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    if (comm == name) out.push_back(std::atoi(e->d_name));
  }
  closedir(dir);
  return out;
}

std::set<int> affinity_of(pid_t tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(tid, sizeof set, &set);
  std::set<int> cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) cpus.insert(i);
  return cpus;
}

bool blocks_sigpipe(pid_t tid) {
  const std::string status = read_file("/proc/self/task/" + std::to_string(tid) + "/status");
  const auto at = status.find("SigBlk:");
  if (at == std::string::npos) return false;
  const unsigned long long mask = std::stoull(status.substr(at + 7), nullptr, 16);
  return (mask >> (SIGPIPE - 1)) & 1U;
}

// ---- a fake server for the client's side of the wire ----

// Accepts one connection, records each request, answers with `respond`.
class FakeServer {
 public:
  using Responder = std::function<std::string(const std::string& headers, const std::string& body)>;

  explicit FakeServer(Responder respond) : respond_(std::move(respond)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    bind(listen_fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    listen(listen_fd_, 4);
    socklen_t length = sizeof a;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &length);
    endpoint_ = {"127.0.0.1", port_of(a)};
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeServer() {
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    thread_.join();
  }

  Endpoint endpoint() const { return endpoint_; }
  std::string headers() const { return headers_; }
  // Whether the whole body had arrived before the server sent anything.
  bool body_came_unasked() const { return body_came_unasked_; }

 private:
  void serve() {
    const int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    std::string in;
    char chunk[65536];
    ssize_t got = 0;
    while (in.find("\r\n\r\n") == std::string::npos && (got = recv(fd, chunk, sizeof chunk, 0)) > 0)
      in.append(chunk, static_cast<std::size_t>(got));
    const std::size_t end = in.find("\r\n\r\n");
    if (end != std::string::npos) {
      headers_ = in.substr(0, end);
      std::string lower = headers_;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const auto at = lower.find("content-length:");
      const std::size_t length = at == std::string::npos ? 0 : std::stoul(lower.substr(at + 15));
      // A client waiting for "100 Continue" sends nothing more; give it
      // 3 s (libcurl's wait is 1 s) before deciding it waits for us.
      const timeval timeout{3, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      std::string body = in.substr(end + 4);
      while (body.size() < length && (got = recv(fd, chunk, sizeof chunk, 0)) > 0)
        body.append(chunk, static_cast<std::size_t>(got));
      body_came_unasked_ = body.size() == length;
      const std::string reply = respond_(headers_, body);
      ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
    }
    close(fd);
  }

  Responder respond_;
  int listen_fd_;
  Endpoint endpoint_;
  std::thread thread_;
  std::string headers_;
  bool body_came_unasked_ = false;
};

std::string http_200(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST(XmlrpcStackServer, ConnectionThreadsArePinnedNamedAndBlockSigpipe) {
  Service service;
  ServerOptions options;
  const int cpu = affinity_of(0).empty() ? 0 : *affinity_of(0).rbegin();
  options.cpu = cpu;
  const auto before = threads_named("xmlrpc-abyss");
  auto server = stack().start_server(service, options);
  // Two open connections, each with a request served.
  Socket a(server->endpoint()), b(server->endpoint());
  for (Socket* s : {&a, &b}) {
    ASSERT_TRUE(s->send_all(post(call_xml("wsbench.ping"))));
    ASSERT_EQ(s->read_reply().status, 200);
  }
  const auto threads = threads_named("xmlrpc-abyss");
  ASSERT_GE(threads.size(), before.size() + 3) << "the accept thread and one per connection";
  for (const pid_t tid : threads) {
    if (std::find(before.begin(), before.end(), tid) != before.end()) continue;
    EXPECT_EQ(affinity_of(tid), std::set<int>{cpu}) << "thread " << tid;
    EXPECT_TRUE(blocks_sigpipe(tid)) << "thread " << tid;
  }
  EXPECT_NE(affinity_of(0).size(), 0u);
}

TEST(XmlrpcStackServer, OversizedBodiesGet413AndServingGoesOn) {
  Service service;
  ServerOptions options;
  options.limits.max_body_bytes = 64 * 1024;
  auto server = stack().start_server(service, options);
  {
    // Declared and sent: the 413 arrives whole, then the server closes.
    const std::string body =
        call_xml("wsbench.echo", param("<base64>" + std::string(100'000, 'A') + "</base64>"));
    Socket s(server->endpoint());
    s.send_all(post(body));
    const auto reply = s.read_reply();
    EXPECT_EQ(reply.status, 413) << reply.headers;
    EXPECT_NE(reply.headers.find("Connection: close"), std::string::npos) << reply.headers;
    EXPECT_NE(reply.body.find("exceeds the limit of 65536"), std::string::npos) << reply.body;
    EXPECT_TRUE(s.closed_by_peer());
  }
  {
    // Declared, never sent.
    Socket s(server->endpoint());
    s.send_all("POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000000\r\n\r\n");
    s.shutdown_write();
    EXPECT_EQ(s.read_reply().status, 413);
  }
  // Through the client: a CallError naming the status; the next call opens
  // a new connection (the server closed the old one after its 413).
  const auto client = stack().connect(server->endpoint(), "xmlrpc");
  Payload out;
  try {
    client->echo(Binary{Bytes(200'000, 7)}, out);
    ADD_FAILURE() << "an oversized echo succeeded";
  } catch (const FaultError& e) {
    ADD_FAILURE() << "a fault instead of HTTP 413: " << e.what();
  } catch (const CallError& e) {
    EXPECT_NE(std::string(e.what()).find("413"), std::string::npos) << e.what();
  }
  EXPECT_EQ(client->ping(), kPingReply);
  client->echo(Binary{Bytes(1000, 7)}, out);
  EXPECT_TRUE(out == Payload(Binary{Bytes(1000, 7)}));
}

TEST(XmlrpcStackServer, StartupErrors) {
  Service service;
  ServerOptions over;
  over.limits.max_body_bytes = xmlrpc::kXmlSizeLimit + 1;
  EXPECT_THROW(stack().start_server(service, over), std::invalid_argument);

  ServerOptions nowhere;
  nowhere.listen.host = "192.0.2.1";  // TEST-NET-1: no interface has it
  EXPECT_THROW(stack().start_server(service, nowhere), std::runtime_error);
}

TEST(XmlrpcStackClient, SendsNoExpect100Continue) {
  // 2 MiB of binary is about 2.8 MB of XML, past the 1 MiB over which
  // libcurl 7.88 would ask for a 100 Continue first.
  const Payload big = Binary{Bytes(2 << 20, 0x5a)};
  std::string reply_body;
  xmlrpc::make_xmlrpc_codec()->encode(big, reply_body);
  FakeServer fake([&](const std::string&, const std::string&) { return http_200(reply_body); });
  const auto client = stack().connect(fake.endpoint(), "xmlrpc");
  Payload out;
  client->echo(big, out);
  EXPECT_TRUE(out == big);
  EXPECT_TRUE(fake.body_came_unasked()) << "the client waited for a 100 Continue";
  EXPECT_EQ(fake.headers().find("100-continue"), std::string::npos) << fake.headers();
  EXPECT_NE(fake.headers().find("Content-Type: text/xml"), std::string::npos) << fake.headers();
}

TEST(XmlrpcStackClient, BadRepliesAreCallErrorsNotCrashes) {
  const auto reply_with = [](const std::string& raw) {
    FakeServer fake([&](const std::string&, const std::string&) { return raw; });
    const auto client = stack().connect(fake.endpoint(), "xmlrpc");
    try {
      client->ping();
    } catch (const FaultError& e) {
      return "fault " + std::to_string(e.code()) + ": " + e.what();
    } catch (const CallError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // xmlrpc_c::client_xml would crash parsing this.
  EXPECT_NE(reply_with(http_200("<?xml version=\"1.0\"?><methodResponse><params><param><value>"
                                "<i8>12x</i8></value></param></params></methodResponse>"))
                .find("malformed response"),
            std::string::npos);
  EXPECT_NE(reply_with(http_200("<?xml version=\"1.0\"?><methodResponse><params><param><value>"
                                "<i4>1</i4></value></param></params></methodResponse>"))
                .find("unexpected reply: ping reply is INT"),
            std::string::npos);
  EXPECT_NE(reply_with("HTTP/1.1 500 Oops\r\nContent-Length: 2\r\n\r\nno").find("500"),
            std::string::npos);
  EXPECT_NE(reply_with("").find("xmlrpc-c: wsbench.ping:"), std::string::npos)
      << "a connection closed without a reply";
  EXPECT_NE(reply_with(http_200("<?xml version=\"1.0\"?><methodResponse><fault><value><struct>"
                                "<member><name>faultCode</name><value><int>7</int></value></member>"
                                "<member><name>faultString</name><value>no</value></member>"
                                "</struct></value></fault></methodResponse>"))
                .find("fault 7: XML-RPC fault 7: no"),
            std::string::npos);
}

}  // namespace
}  // namespace wsb
