// The gsoap stack: its client against its server for both codecs, and its
// SOAP endpoint as a third-party SOAP client sees it, driven through a plain
// socket: the WSDL, hand-written envelopes, faults, MTOM, limits,
// keep-alive, malformed requests, and the phase points it marks.
#include "soap/soap_stack.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <thread>

#include "common/codec.h"
#include "common/phases.h"
#include "common/service.h"
#include "common/transport.h"
#include "conformance_cases.h"

namespace wsb {
namespace {

constexpr std::string_view kSoapEnvNs = "http://schemas.xmlsoap.org/soap/envelope/";
constexpr std::string_view kWsdlNs = "http://schemas.xmlsoap.org/wsdl/";

// ---- a plain-socket HTTP peer ----

struct RawResponse {
  int status = 0;
  std::string head;  // status line and header fields
  std::string body;

  // The value of the first header field `name` (case-insensitive), or
  // nullopt.
  std::optional<std::string> header(std::string_view name) const {
    std::size_t line = head.find("\r\n");
    while (line != std::string::npos && line + 2 < head.size()) {
      const std::size_t start = line + 2;
      const std::size_t end = head.find("\r\n", start);
      const std::string_view field(head.data() + start,
                                   (end == std::string::npos ? head.size() : end) - start);
      const std::size_t colon = field.find(':');
      if (colon == name.size() &&
          std::equal(name.begin(), name.end(), field.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
          })) {
        std::string_view value = field.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        return std::string(value);
      }
      line = end;
    }
    return std::nullopt;
  }
};

// One TCP connection speaking bytes, with a receive timeout so a wrong
// server makes a test fail, not hang.
class RawConnection {
 public:
  explicit RawConnection(const Endpoint& server) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(server.port);
    ::inet_pton(AF_INET, server.host.c_str(), &addr.sin_addr);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error("connect failed");
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    set_receive_timeout(std::chrono::seconds(10));
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // False if the peer has closed (EPIPE) or reset the connection.
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }

  // One response, framed by Content-Length (gSOAP sends one with every
  // reply here). Throws if the connection ends first.
  RawResponse read_response() {
    std::size_t end;
    while ((end = pending_.find("\r\n\r\n")) == std::string::npos) fill();
    RawResponse r;
    r.head = pending_.substr(0, end);
    pending_.erase(0, end + 4);
    if (r.head.compare(0, 5, "HTTP/") != 0 || r.head.size() < 12)
      throw std::runtime_error("not an HTTP response: " + r.head);
    r.status = std::stoi(r.head.substr(9, 3));
    std::size_t length = 0;
    if (const auto cl = r.header("Content-Length")) length = std::stoul(*cl);
    while (pending_.size() < length) fill();
    r.body = pending_.substr(0, length);
    pending_.erase(0, length);
    return r;
  }

  // True if the server closes the connection (recv sees the end or a reset)
  // within the receive timeout, with no more response bytes.
  bool closed_by_server() {
    if (!pending_.empty()) return false;
    char c;
    const ssize_t n = ::recv(fd_, &c, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

  void set_receive_timeout(std::chrono::milliseconds t) {
    timeval tv{static_cast<time_t>(t.count() / 1000),
               static_cast<suseconds_t>((t.count() % 1000) * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }

 private:
  void fill() {
    char buf[64 * 1024];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) throw std::runtime_error("connection ended before a whole response");
    pending_.append(buf, static_cast<std::size_t>(n));
  }

  int fd_ = -1;
  std::string pending_;
};

// A POST as a third-party SOAP 1.1 client (curl with a hand-written
// envelope) sends it.
std::string post(const Endpoint& server, std::string_view body, std::string_view extra = {},
                 std::string_view content_type = "text/xml; charset=utf-8") {
  std::string r = "POST / HTTP/1.1\r\nHost: " + server.to_string() +
                  "\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\nContent-Type: " +
                  std::string(content_type) + "\r\nSOAPAction: \"\"\r\n";
  r += extra;
  r += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  r += body;
  return r;
}

std::string get(const Endpoint& server, std::string_view target) {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: " + server.to_string() +
         "\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n";
}

// A SOAP 1.1 envelope around `body`, prefix ns for urn:wsbench.
std::string envelope(std::string_view body) {
  return "<?xml version=\"1.0\"?><SOAP-ENV:Envelope xmlns:SOAP-ENV=\"" + std::string(kSoapEnvNs) +
         "\" xmlns:ns=\"urn:wsbench\"><SOAP-ENV:Body>" + std::string(body) +
         "</SOAP-ENV:Body></SOAP-ENV:Envelope>";
}

RawResponse roundtrip(RawConnection& c, const std::string& bytes) {
  EXPECT_TRUE(c.send(bytes));
  return c.read_response();
}

// ---- reading replies with libxml2, independently of gSOAP ----

std::string_view str(const xmlChar* s) {
  return s == nullptr ? std::string_view() : std::string_view(reinterpret_cast<const char*>(s));
}

struct DocDeleter {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};
using Doc = std::unique_ptr<xmlDoc, DocDeleter>;

Doc parse_dom(std::string_view xml) {
  return Doc(xmlReadMemory(xml.data(), static_cast<int>(xml.size()), nullptr, nullptr,
                           XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
}

const xmlNode* first_element(const xmlNode* n) {
  for (; n != nullptr; n = n->next)
    if (n->type == XML_ELEMENT_NODE) return n;
  return nullptr;
}

// The first descendant element named `name` (any namespace), depth first.
const xmlNode* find_element(const xmlNode* n, std::string_view name) {
  for (; n != nullptr; n = n->next) {
    if (n->type != XML_ELEMENT_NODE) continue;
    if (str(n->name) == name) return n;
    if (const xmlNode* found = find_element(n->children, name)) return found;
  }
  return nullptr;
}

std::string text_of(const xmlNode* n) {
  if (n == nullptr) return "<missing>";
  xmlChar* content = xmlNodeGetContent(n);
  std::string s(str(content));
  xmlFree(content);
  return s;
}

std::string attribute(const xmlNode* n, const char* name) {
  if (n == nullptr) return "<missing>";
  xmlChar* value = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
  std::string s(str(value));
  xmlFree(value);
  return s;
}

// faultcode and faultstring of a SOAP 1.1 Fault reply; empty if it is none.
std::pair<std::string, std::string> fault_of(const std::string& body) {
  const Doc doc = parse_dom(body);
  if (!doc) return {"<not XML>", body.substr(0, 200)};
  const xmlNode* fault = find_element(xmlDocGetRootElement(doc.get()), "Fault");
  if (fault == nullptr) return {};
  return {text_of(find_element(fault->children, "faultcode")),
          text_of(find_element(fault->children, "faultstring"))};
}

// ---- the fixture: one Service, one server with the default limits ----

class GsoapStack : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    service_ = new Service();
    server_ = soap::gsoap_stack().start_server(*service_, ServerOptions{}).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete service_;
  }
  static Endpoint endpoint() { return server_->endpoint(); }
  static std::unique_ptr<Client> connect(const std::string& codec) {
    return soap::gsoap_stack().connect(endpoint(), codec);
  }

  static Service* service_;
  static Server* server_;
};
Service* GsoapStack::service_ = nullptr;
Server* GsoapStack::server_ = nullptr;

TEST(GsoapStackEntry, CarriesBothSoapCodecs) {
  const StackEntry entry = soap::gsoap_stack();
  EXPECT_EQ(entry.name, "gsoap");
  EXPECT_EQ(entry.codecs, (std::vector<std::string>{"soap", "soap-mtom"}));
  EXPECT_EQ(find_stack("gsoap").codecs, entry.codecs);
}

// ---- client against server, both codecs ----

class GsoapCodecs : public GsoapStack, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { client_ = connect(GetParam()); }
  std::unique_ptr<Client> client_;
};

TEST_P(GsoapCodecs, Ping) { EXPECT_EQ(client_->ping(), kPingReply); }

TEST_P(GsoapCodecs, GetReturnsEachKind) {
  for (const char* label : {"text", "ints/200", "strings/200", "objects/200", "message-a/100",
                            "message-b/128KiB", "binary/1MiB", "gml/10", "ints/0"}) {
    const PayloadSpec spec = parse_spec(label);
    Payload out;
    client_->get(spec, out);
    EXPECT_EQ(describe_difference(generate(spec), out), "") << label;
  }
}

TEST_P(GsoapCodecs, EchoReturnsWhatWasSent) {
  for (const char* label : {"message-a/100", "message-b/128KiB", "binary/1MiB"}) {
    const Payload payload = generate(parse_spec(label));
    Payload out;
    client_->echo(payload, out);
    EXPECT_EQ(describe_difference(payload, out), "") << label;
  }
  std::size_t cases = 0;
  for (const auto& [name, payload] : testing::conformance_payloads()) {
    Payload out;
    client_->echo(payload, out);
    EXPECT_EQ(describe_difference(payload, out), "") << name;
    ++cases;
  }
  EXPECT_GT(cases, 20u);
}

TEST_P(GsoapCodecs, MessagingLifecycle) {
  const auto a = std::get<Message>(generate(parse_spec("message-a/100")));
  const auto b = std::get<Message>(generate(parse_spec("message-b/128KiB")));
  const std::string queue = client_->register_client();
  ASSERT_FALSE(queue.empty());
  EXPECT_NE(client_->register_client(), queue);
  client_->send_message(queue, a);
  client_->send_message(queue, b);
  client_->send_message(queue, Message{});
  std::vector<Message> got;
  client_->receive_messages(queue, got);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[0] == a);
  EXPECT_TRUE(got[1] == b);
  EXPECT_TRUE(got[2] == Message{});
  client_->receive_messages(queue, got);
  EXPECT_TRUE(got.empty()) << "receive drains the queue";
  client_->unregister_client(queue);
  for (int op = 0; op < 3; ++op) {
    try {
      if (op == 0) client_->send_message(queue, a);
      if (op == 1) client_->receive_messages(queue, got);
      if (op == 2) client_->unregister_client(queue);
      ADD_FAILURE() << "operation " << op << " on an unregistered queue succeeded";
    } catch (const CallError& e) {
      // ServiceError not_found (404) as a SOAP 1.1 Client fault.
      EXPECT_EQ(std::string(e.what()).rfind("SOAP Fault SOAP-ENV:Client: ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(queue), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(client_->ping(), kPingReply) << "the connection survives refused calls";
}

TEST_P(GsoapCodecs, Primes) {
  EXPECT_EQ(client_->primes(10), "FIRST 10 numbers: 2 3 5 7 11 13 17 19 23 29");
  EXPECT_EQ(client_->primes(1), "FIRST 1 numbers: 2");
}

TEST_P(GsoapCodecs, ServiceLimitsAreClientFaultsAndServingGoesOn) {
  Payload out;
  try {
    client_->get(parse_spec("ints/100000000"), out);
    ADD_FAILURE() << "an over-limit payload was served";
  } catch (const CallError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind("SOAP Fault SOAP-ENV:Client: ints/100000000 exceeds", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(client_->primes(4'000'000'000u), CallError);
  EXPECT_EQ(client_->ping(), kPingReply);
}

TEST_P(GsoapCodecs, TimelineAndServerPhasePoints) {
  for (const char* label : {"text", "message-b/128KiB"}) {
    SCOPED_TRACE(label);
    const Payload payload = generate(parse_spec(label));
    Payload out;
    server_probe().begin_request();
    client_->echo(payload, out);
    Timeline t = client_->last_timeline();
    server_probe().collect(t);
    // Every point is marked, in causal order. kRequestWritten may come
    // after the server's first points: the server can run before the
    // client thread records it.
    for (std::size_t p = 0; p < kPointCount; ++p) EXPECT_NE(t[p], 0) << "point " << p;
    EXPECT_LE(t[kInvoke], t[kRequestWritten]);
    EXPECT_LE(t[kInvoke], t[kRequestReceived]);
    EXPECT_LE(t[kRequestReceived], t[kParsed]);
    EXPECT_LE(t[kParsed], t[kServiced]);
    EXPECT_LE(t[kServiced], t[kMarshalled]);
    EXPECT_LE(t[kMarshalled], t[kResponseReceived]);
    EXPECT_LE(t[kRequestWritten], t[kResponseReceived]);
    EXPECT_LE(t[kResponseReceived], t[kDecoded]);
  }
}

INSTANTIATE_TEST_SUITE_P(BothCodecs, GsoapCodecs, ::testing::Values("soap", "soap-mtom"),
                         [](const auto& p) {
                           std::string name = p.param;
                           for (auto& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace wsb
