// The xmlrpc-c stack against one server for the suite: its client for every
// operation, raw HTTP requests as a third party (or an attacker) sends them,
// and the transport facts the stack's comments claim (one keep-alive
// connection, TCP_NODELAY on both ends, the phase points), each checked on
// the real sockets. Pinned connection threads, the body limit and the client
// against a fake server: xmlrpc_server_client_test.cpp.
#include "xmlrpc/xmlrpc_stack.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <xmlrpc-c/base.hpp>
#include <xmlrpc-c/xml.hpp>

#include "common/clock.h"
#include "common/codec.h"
#include "common/phases.h"
#include "common/placement.h"
#include "common/service.h"
#include "conformance_cases.h"
#include "server_points.h"
#include "xmlrpc/xmlrpc_codec.h"
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

// The outcome of a methodResponse body (our server's, so parsed directly).
xmlrpc_c::rpcOutcome outcome_of(const Socket::Reply& reply) {
  xmlrpc_c::rpcOutcome outcome;
  xmlrpc_c::xml::parseResponse(reply.body, &outcome);
  return outcome;
}

// ---- what /proc says about our own sockets and threads ----

struct Connection {
  int fd;
  std::uint16_t local_port;
  std::uint16_t peer_port;
};

// Connected TCP sockets of this process with the given local or peer port.
std::vector<Connection> connections(std::uint16_t local_port, std::uint16_t peer_port) {
  std::vector<Connection> out;
  DIR* dir = opendir("/proc/self/fd");
  while (const dirent* e = readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    struct stat st {};
    if (e->d_name[0] == '.' || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_in local{}, peer{};
    socklen_t ll = sizeof local, pl = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0 ||
        local.sin_family != AF_INET ||
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0)
      continue;
    if ((local_port != 0 && port_of(local) != local_port) ||
        (peer_port != 0 && port_of(peer) != peer_port))
      continue;
    out.push_back({fd, port_of(local), port_of(peer)});
  }
  closedir(dir);
  return out;
}

bool nodelay(int fd) {
  int on = 0;
  socklen_t length = sizeof on;
  getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, &length);
  return on != 0;
}

// ---- the fixture: one server for the suite ----

class XmlrpcStack : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = stack().start_server(service(), ServerOptions{}); }
  static void TearDownTestSuite() { server_.reset(); }

  static Service& service() {
    static Service s;
    return s;
  }
  static Endpoint endpoint() { return server_->endpoint(); }

  void SetUp() override { client_ = stack().connect(endpoint(), "xmlrpc"); }

  // A raw request on a new connection.
  static Socket::Reply exchange(const std::string& request) {
    Socket s(endpoint());
    EXPECT_TRUE(s.send_all(request));
    return s.read_reply();
  }

  static void expect_fault(const Socket::Reply& reply, int code, const std::string& text = "") {
    ASSERT_EQ(reply.status, 200) << reply.headers;
    const auto outcome = outcome_of(reply);
    ASSERT_FALSE(outcome.succeeded()) << reply.body;
    EXPECT_EQ(outcome.getFault().getCode(), code) << outcome.getFault().getDescription();
    EXPECT_NE(outcome.getFault().getDescription().find(text), std::string::npos)
        << outcome.getFault().getDescription();
  }

  static void expect_serving() {
    const auto reply = exchange(post(call_xml("wsbench.ping")));
    ASSERT_EQ(reply.status, 200);
    const auto outcome = outcome_of(reply);
    ASSERT_TRUE(outcome.succeeded());
    EXPECT_EQ(xmlrpc_c::value_string(outcome.getResult()).cvalue(), kPingReply);
  }

  static std::unique_ptr<Server> server_;
  std::unique_ptr<Client> client_;
};

std::unique_ptr<Server> XmlrpcStack::server_;

TEST_F(XmlrpcStack, PayloadsTheLibraryCannotCarryAreRefusedBeforeSending) {
  const auto codec = xmlrpc::make_xmlrpc_codec();
  int refused = 0;
  for (const auto& [name, payload] : testing::conformance_payloads()) {
    if (codec->unsupported(payload).empty()) continue;
    Payload out;
    EXPECT_THROW(client_->echo(payload, out), std::invalid_argument) << name;
    ++refused;
  }
  EXPECT_GT(refused, 0);
  EXPECT_EQ(client_->ping(), kPingReply);
}

// The operations themselves are tested for every stack in
// stack_conformance_test.cpp; here, the XML-RPC form of a refusal.
TEST_F(XmlrpcStack, UnknownQueuesAreFault404) {
  const auto a = std::get<Message>(generate(parse_spec("message-a/100")));
  const std::string queue = client_->register_client();
  client_->unregister_client(queue);
  std::vector<Message> got;
  for (const auto& refused : std::vector<std::function<void()>>{
           [&] { client_->send_message(queue, a); }, [&] { client_->receive_messages(queue, got); },
           [&] { client_->unregister_client(queue); }}) {
    try {
      refused();
      ADD_FAILURE() << "a call on an unregistered queue succeeded";
    } catch (const FaultError& e) {
      EXPECT_EQ(e.code(), xmlrpc::kFaultNotFound) << e.what();
      EXPECT_NE(std::string(e.what()).find("XML-RPC fault 404: no queue"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(client_->ping(), kPingReply) << "the connection survives faults";
}

TEST_F(XmlrpcStack, ConcurrentClientsAreServedApart) {
  // A connection thread each, one registry and guard per thread.
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&wrong, t] {
      try {
        const auto client = stack().connect(endpoint(), "xmlrpc");
        const std::string queue = client->register_client();
        std::vector<Message> got;
        for (int i = 0; i < 25; ++i) {
          Message m;
          m.meta.timestamp = t * 1000 + i;
          m.attachment = Bytes(1000 * t, static_cast<std::uint8_t>(i));
          client->send_message(queue, m);
          client->receive_messages(queue, got);
          if (got.size() != 1 || !(got[0] == m)) ++wrong;
        }
        client->unregister_client(queue);
      } catch (const std::exception&) {
        ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
}

TEST_F(XmlrpcStack, ServiceLimitsAreFaultsWithStableCodes) {
  const auto code_of = [](const std::function<void()>& call) {
    try {
      call();
    } catch (const FaultError& e) {
      return e.code();
    }
    return 0;
  };
  Payload out;
  EXPECT_EQ(code_of([&] { client_->get(parse_spec("ints/100000000"), out); }),
            xmlrpc::kFaultTooLarge);
  EXPECT_EQ(code_of([&] { client_->primes(2'000'000'000); }), xmlrpc::kFaultTooLarge);
  // Above 2^31 - 1 the count goes as <i8>.
  EXPECT_EQ(code_of([&] { client_->primes(4'000'000'000U); }), xmlrpc::kFaultTooLarge);
  EXPECT_EQ(client_->ping(), kPingReply);
}

TEST_F(XmlrpcStack, MulticallRunsSeveralCallsInOneRequest) {
  const auto entry = [](const char* method, xmlrpc_c::carray params) {
    xmlrpc_c::cstruct call;
    call.emplace("methodName", xmlrpc_c::value_string(method));
    call.emplace("params", xmlrpc_c::value_array(params));
    return xmlrpc_c::value_struct(call);
  };
  xmlrpc_c::paramList params;
  params.add(xmlrpc_c::value_array(
      {entry("wsbench.ping", {}), entry("wsbench.primes", {xmlrpc_c::value_int(3)}),
       entry("wsbench.unregisterClient", {xmlrpc_c::value_string("no-such-queue")})}));
  std::string xml;
  xmlrpc_c::xml::generateCall("system.multicall", params, &xml);
  const auto reply = exchange(post(xml));
  ASSERT_EQ(reply.status, 200);
  const auto outcome = outcome_of(reply);
  ASSERT_TRUE(outcome.succeeded()) << reply.body;
  const auto results = xmlrpc_c::value_array(outcome.getResult()).cvalue();
  ASSERT_EQ(results.size(), 3u);
  // Each result is a one-element array, each fault a fault struct.
  EXPECT_EQ(xmlrpc_c::value_string(xmlrpc_c::value_array(results[0]).cvalue().at(0)).cvalue(),
            kPingReply);
  EXPECT_EQ(xmlrpc_c::value_string(xmlrpc_c::value_array(results[1]).cvalue().at(0)).cvalue(),
            "FIRST 3 numbers: 2 3 5");
  const auto fault = xmlrpc_c::value_struct(results[2]).cvalue();
  EXPECT_EQ(xmlrpc_c::value_int(fault.at("faultCode")).cvalue(), xmlrpc::kFaultNotFound);
}

TEST_F(XmlrpcStack, ARequestBuiltByHandIsServed) {
  // As a third party writes it: no XML declaration, <int> for i4, no
  // User-Agent, HTTP/1.0-style close.
  const std::string body =
      "<methodCall><methodName>wsbench.get</methodName><params><param><value>"
      "<string>text</string></value></param></params></methodCall>";
  const auto reply = exchange(
      "POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nConnection: close\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  ASSERT_EQ(reply.status, 200) << reply.headers;
  EXPECT_NE(reply.headers.find("text/xml"), std::string::npos) << reply.headers;
  // Checked with libxml2, independently of xmlrpc-c.
  std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)> doc(
      xmlReadMemory(reply.body.data(), static_cast<int>(reply.body.size()), "reply.xml", nullptr,
                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING),
      xmlFreeDoc);
  ASSERT_NE(doc, nullptr) << reply.body;
  std::unique_ptr<xmlXPathContext, decltype(&xmlXPathFreeContext)> ctx(
      xmlXPathNewContext(doc.get()), xmlXPathFreeContext);
  std::unique_ptr<xmlXPathObject, decltype(&xmlXPathFreeObject)> name(
      xmlXPathEvalExpression(
          reinterpret_cast<const xmlChar*>("string(/methodResponse/params/param/value/struct/"
                                           "member/name)"),
          ctx.get()),
      xmlXPathFreeObject);
  ASSERT_NE(name, nullptr);
  EXPECT_STREQ(reinterpret_cast<const char*>(name->stringval), "text");
}

TEST_F(XmlrpcStack, BadCallsGetFaultsAndTheConnectionStaysUsable) {
  Socket s(endpoint());
  const auto send_and_read = [&](const std::string& body) {
    EXPECT_TRUE(s.send_all(post(body)));
    return s.read_reply();
  };
  expect_fault(send_and_read("<methodCall><methodName>x</methodName></params></methodCall>"), -503,
               "not valid XML");
  expect_fault(send_and_read(call_xml("no.such.method")), -506, "no.such.method");
  // The server's guard: xmlrpc-c's parser would crash on this <i8> (as it
  // does behind xmlrpc_c::serverAbyss), accept garbage base64, and expand
  // entities without bound.
  expect_fault(send_and_read(call_xml("wsbench.primes", param("<i8>12x</i8>"))),
               xmlrpc::kFaultUnparseable, "64-bit integer");
  expect_fault(send_and_read(call_xml("wsbench.echo", param("<struct><member><name>binary</name>"
                                                            "<value><base64>!!!!</base64></value>"
                                                            "</member></struct>"))),
               xmlrpc::kFaultUnparseable, "base64");
  expect_fault(send_and_read("<?xml version=\"1.0\"?><!DOCTYPE m [<!ENTITY a \"a\">]>" +
                             call_xml("wsbench.ping")),
               xmlrpc::kFaultUnparseable, "DOCTYPE");
  expect_fault(send_and_read(call_xml("wsbench.ping").substr(0, 80)), xmlrpc::kFaultUnparseable,
               "does not end with </methodCall>");
  // Parameters that do not fit the method.
  const int bad = xmlrpc::kFaultBadRequest;
  expect_fault(send_and_read(call_xml("wsbench.get")), bad, "takes 1 parameter, not 0");
  expect_fault(send_and_read(call_xml("wsbench.get", param("<i4>3</i4>"))), bad, "label is INT");
  expect_fault(send_and_read(call_xml("wsbench.get", param("<string>video/3</string>"))), bad,
               "video");
  expect_fault(send_and_read(call_xml("wsbench.echo", param("<string>x</string>"))), bad,
               "payload value is STRING");
  expect_fault(send_and_read(call_xml("wsbench.primes", param("<i4>-1</i4>"))), bad, "n must be");
  expect_fault(send_and_read(call_xml("wsbench.primes", param("<string>7</string>"))), bad,
               "n is STRING");
  expect_fault(send_and_read(call_xml("wsbench.ping", param("<i4>1</i4>"))), bad,
               "takes 0 parameters, not 1");
  expect_fault(send_and_read(call_xml("wsbench.sendMessage",
                                      param("<string>1</string>") + param("<struct></struct>"))),
               bad, "missing member 'recipient'");
  // Still the same connection.
  EXPECT_TRUE(s.send_all(post(call_xml("wsbench.ping"))));
  const auto reply = s.read_reply();
  ASSERT_TRUE(outcome_of(reply).succeeded());
  EXPECT_EQ(xmlrpc_c::value_string(outcome_of(reply).getResult()).cvalue(), kPingReply);
}

TEST(XmlrpcStackServer, TheLibraryAloneCrashesOnABadI8InACall) {
  // Why the server runs the guard before the registry parses a call: the
  // parser xmlrpc_c::serverAbyss would hand this body to dies on it (the
  // fault message is formatted with two %s and one argument).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        std::string method;
        xmlrpc_c::paramList params;
        xmlrpc_c::xml::parseCall(call_xml("wsbench.primes", param("<i8>12x</i8>")), &method,
                                 &params);
      },
      "");
}

TEST_F(XmlrpcStack, HttpErrorsForWhatIsNotAnXmlRpcCall) {
  EXPECT_EQ(exchange("GET /RPC2 HTTP/1.1\r\nHost: x\r\n\r\n").status, 405);
  EXPECT_EQ(exchange(post(call_xml("wsbench.ping"), "/other")).status, 404);
  EXPECT_EQ(exchange("POST /RPC2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "5\r\n<a/>\n\r\n0\r\n\r\n")
                .status,
            411);
  EXPECT_EQ(exchange("POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Length: 12x\r\n\r\n").status, 400);
  expect_serving();
}

TEST_F(XmlrpcStack, TruncatedRequestsDoNotStopTheServer) {
  {
    // Content-Length promises more than is sent, then the client closes
    // its end: xmlrpc-c's handler answers a body that stops short with 408
    // (its word for "the client did not send the rest") and closes.
    Socket s(endpoint());
    const std::string whole = post(call_xml("wsbench.ping"));
    ASSERT_TRUE(s.send_all(whole.substr(0, whole.size() - 20)));
    s.shutdown_write();
    const auto reply = s.read_reply();
    EXPECT_EQ(reply.status, 408) << reply.headers;
    EXPECT_NE(reply.body.find("POST data"), std::string::npos) << reply.body;
  }
  {
    // The header alone, then close.
    Socket s(endpoint());
    ASSERT_TRUE(s.send_all("POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Len"));
  }
  expect_serving();
}

TEST_F(XmlrpcStack, ServerMarksAllFourPhasePoints) {
  client_->ping();  // connected
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { client_->ping(); },
           [&] {
             Payload out;
             client_->echo(generate(parse_spec("message-a/10")), out);
           }}) {
    call();
    Timeline t = client_->last_timeline();
    ASSERT_TRUE(testing::collect_server_points(*client_, endpoint(), t));
    EXPECT_EQ(t[kRequestWritten], 0) << "libcurl hides it";
    for (const Mark m : {kInvoke, kRequestReceived, kParsed, kServiced, kMarshalled,
                         kResponseReceived, kDecoded}) {
      EXPECT_NE(t[m], 0) << kPhaseNames[m];
    }
    EXPECT_LE(t[kInvoke], t[kRequestReceived]);
    EXPECT_LE(t[kRequestReceived], t[kParsed]);
    EXPECT_LE(t[kParsed], t[kServiced]);
    EXPECT_LE(t[kServiced], t[kMarshalled]);
    EXPECT_LE(t[kMarshalled], t[kResponseReceived]);
    EXPECT_LE(t[kResponseReceived], t[kDecoded]);
    const auto phases = phases_of(t);
    ASSERT_EQ(phases.size(), 6u);
    EXPECT_EQ(phases[0].name, "client_marshal+request_transfer");
  }
}

TEST_F(XmlrpcStack, OneClientKeepsOneConnectionWithNoDelayOnBothEnds) {
  const std::uint16_t port = endpoint().port;
  client_->ping();
  const auto first = connections(port, 0);
  ASSERT_FALSE(first.empty());
  // The connection(s) the server accepted from this client: the one whose
  // peer is a socket of ours with the server as its peer.
  std::set<std::uint16_t> client_ports;
  for (const auto& c : connections(0, port)) client_ports.insert(c.local_port);
  for (int i = 0; i < 50; ++i) client_->ping();
  Payload out;
  client_->get(parse_spec("binary/256KiB"), out);
  std::set<std::uint16_t> after;
  for (const auto& c : connections(0, port)) after.insert(c.local_port);
  EXPECT_EQ(after, client_ports) << "a new connection appeared";
  ASSERT_EQ(after.size(), 1u) << "one client, one connection";
  const std::uint16_t client_port = *after.begin();
  for (const auto& c : connections(port, client_port))
    EXPECT_TRUE(nodelay(c.fd)) << "server side, accepted socket";
  for (const auto& c : connections(client_port, port))
    EXPECT_TRUE(nodelay(c.fd)) << "client side, libcurl's socket";
  EXPECT_EQ(connections(port, client_port).size(), 1u);
}

}  // namespace
}  // namespace wsb
