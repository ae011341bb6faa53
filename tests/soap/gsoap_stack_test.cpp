// The gsoap stack: its client against its server for both codecs, and its
// SOAP endpoint as a third-party SOAP client sees it, driven through a plain
// socket: the WSDL, hand-written envelopes, faults, MTOM, limits,
// keep-alive, malformed requests, and the phase points it marks.
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <chrono>
#include <thread>

#include "common/base64.h"
#include "common/codec.h"
#include "common/phases.h"
#include "common/service.h"
#include "common/transport.h"
#include "conformance_cases.h"
#include "harness/byte_relay.h"
#include "raw_http.h"
#include "soap/soap_stack.h"
#include "stack_fixture.h"
#include "test_helpers.h"

namespace wsb {
namespace {

constexpr std::string_view kSoapEnvNs = "http://schemas.xmlsoap.org/soap/envelope/";
constexpr std::string_view kWsdlNs = "http://schemas.xmlsoap.org/wsdl/";

// ---- a plain-socket HTTP peer ----

using testing::RawConnection;
using testing::RawResponse;
using testing::roundtrip;

// A POST as a third-party SOAP 1.1 client (curl with a hand-written
// envelope) sends it.
std::string post(const Endpoint& server, std::string_view body, std::string_view extra = {},
                 std::string_view content_type = "text/xml; charset=utf-8") {
  std::string r =
      "POST / HTTP/1.1\r\nHost: " + server.to_string() +
      "\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\nContent-Type: " + std::string(content_type) +
      "\r\nSOAPAction: \"\"\r\n";
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

// ---- reading replies with libxml2, independently of gSOAP ----

using testing::attribute;
using testing::Doc;
using testing::str;
using testing::text_of;

Doc parse_dom(std::string_view xml) {
  return Doc(xmlReadMemory(xml.data(), static_cast<int>(xml.size()), nullptr, nullptr,
                           XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
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

constexpr char kGsoapStackName[] = "gsoap";
using GsoapStack = testing::StackSuite<kGsoapStackName>;

// The registry lists exactly the codecs the gSOAP client takes, of all the
// codecs there are.
TEST(GsoapStackEntry, ListsTheCodecsItsClientTakes) {
  const std::vector<std::string> taken = testing::codecs_that_ping(find_stack("gsoap"));
  EXPECT_EQ(find_stack("gsoap").codecs, taken);
  EXPECT_EQ(taken, (std::vector<std::string>{"soap", "soap-mtom", "soap-swa"}));
}

// ---- client against server, both codecs ----

class GsoapCodecs : public GsoapStack, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { client_ = connect(GetParam()); }
  std::unique_ptr<Client> client_;
};

// The operations themselves are tested for every stack in
// stack_conformance_test.cpp; here, the SOAP form of a refusal.
TEST_P(GsoapCodecs, UnknownQueuesAreClientFaults) {
  const auto a = std::get<Message>(generate(parse_spec("message-a/100")));
  const std::string queue = client_->register_client();
  client_->unregister_client(queue);
  std::vector<Message> got;
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

TEST_P(GsoapCodecs, ServiceLimitsAreClientFaultsAndServingGoesOn) {
  Payload out;
  try {
    client_->get(parse_spec("ints/100000000"), out);
    ADD_FAILURE() << "an over-limit payload was served";
  } catch (const CallError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("SOAP Fault SOAP-ENV:Client: ints/100000000 exceeds", 0),
              0u)
        << e.what();
  }
  EXPECT_THROW(client_->primes(4'000'000'000u), CallError);
  EXPECT_EQ(client_->ping(), kPingReply);
}

INSTANTIATE_TEST_SUITE_P(SoapCodecs, GsoapCodecs,
                         ::testing::Values("soap", "soap-mtom", "soap-swa"), [](const auto& p) {
                           std::string name = p.param;
                           for (auto& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// ---- what goes over the socket ----

// One call through a capturing relay: the request and response bytes.
struct Wire {
  std::string request, response;
};
template <class Call>
Wire on_the_wire(const Endpoint& server, const std::string& codec, Call call) {
  ByteRelay relay(server);
  relay.set_capture(true);
  const auto client = find_stack("gsoap").connect(relay.endpoint(), codec);
  relay.reset();
  call(*client);
  return {relay.captured_to_server(), relay.captured_to_client()};
}

bool contains_raw(const std::string& wire, const Bytes& bytes) {
  // A 64-byte run from the middle: present only if sent unencoded.
  const std::string run(bytes.begin() + bytes.size() / 2, bytes.begin() + bytes.size() / 2 + 64);
  return wire.find(run) != std::string::npos;
}

bool is_multipart_xop(const std::string& http_message) {
  const auto head = http_message.substr(0, http_message.find("\r\n\r\n"));
  return head.find("Content-Type: multipart/related;") != std::string::npos &&
         head.find("application/xop+xml") != std::string::npos;
}

TEST_F(GsoapStack, MtomBinariesTravelAsAttachmentsBothWays) {
  const Payload b = generate(parse_spec("message-b/128KiB"));
  const Bytes& attachment = std::get<Message>(b).attachment;
  const std::string base64_run = base64_encode(Bytes(attachment.begin(), attachment.begin() + 48));

  const Wire echo = on_the_wire(endpoint(), "soap-mtom", [&](Client& c) {
    Payload out;
    c.echo(b, out);
    EXPECT_TRUE(out == b);
  });
  EXPECT_TRUE(is_multipart_xop(echo.request)) << echo.request.substr(0, 400);
  EXPECT_TRUE(is_multipart_xop(echo.response)) << echo.response.substr(0, 400);
  EXPECT_TRUE(contains_raw(echo.request, attachment));
  EXPECT_TRUE(contains_raw(echo.response, attachment));
  EXPECT_EQ(echo.request.find(base64_run), std::string::npos);
  EXPECT_EQ(echo.response.find(base64_run), std::string::npos);
  EXPECT_NE(echo.response.find("xop:Include"), std::string::npos);

  // Requests without binaries are MTOM packages too, so replies with
  // binaries (get, receive) come back as attachments.
  const Wire get = on_the_wire(endpoint(), "soap-mtom", [&](Client& c) {
    Payload out;
    c.get(parse_spec("message-b/128KiB"), out);
    EXPECT_TRUE(out == b);
  });
  EXPECT_TRUE(is_multipart_xop(get.request));
  EXPECT_TRUE(is_multipart_xop(get.response));
  EXPECT_TRUE(contains_raw(get.response, attachment));

  std::string queue;
  const Wire send = on_the_wire(endpoint(), "soap-mtom", [&](Client& c) {
    queue = c.register_client();
    c.send_message(queue, std::get<Message>(b));
  });
  EXPECT_TRUE(contains_raw(send.request, attachment));
  EXPECT_EQ(send.request.find(base64_run), std::string::npos);
  const Wire receive = on_the_wire(endpoint(), "soap-mtom", [&](Client& c) {
    std::vector<Message> got;
    c.receive_messages(queue, got);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got[0] == std::get<Message>(b));
    c.unregister_client(queue);
  });
  EXPECT_TRUE(contains_raw(receive.response, attachment));

  // A reply without binaries is plain SOAP even to an MTOM request.
  const Wire ping = on_the_wire(endpoint(), "soap-mtom", [](Client& c) { c.ping(); });
  EXPECT_TRUE(is_multipart_xop(ping.request));
  EXPECT_NE(ping.response.find("Content-Type: text/xml"), std::string::npos);
}

TEST_F(GsoapStack, PlainSoapCarriesBinariesInlineBothWays) {
  const Payload b = generate(parse_spec("message-b/128KiB"));
  const Bytes& attachment = std::get<Message>(b).attachment;
  const std::string base64_run = base64_encode(Bytes(attachment.begin(), attachment.begin() + 48));
  const Wire echo = on_the_wire(endpoint(), "soap", [&](Client& c) {
    Payload out;
    c.echo(b, out);
    EXPECT_TRUE(out == b);
  });
  for (const std::string* m : {&echo.request, &echo.response}) {
    EXPECT_NE(m->find("Content-Type: text/xml; charset=utf-8"), std::string::npos);
    EXPECT_NE(m->find(base64_run), std::string::npos);
    EXPECT_FALSE(contains_raw(*m, attachment));
  }
}

TEST_F(GsoapStack, OneConnectionPerClientAndRequestsAreDocumentLiteral) {
  ByteRelay relay(endpoint());
  relay.set_capture(true);
  const auto client = find_stack("gsoap").connect(relay.endpoint(), "soap");
  for (int i = 0; i < 20; ++i) EXPECT_EQ(client->ping(), kPingReply);
  EXPECT_EQ(client->primes(3), "FIRST 3 numbers: 2 3 5");
  const std::string sent = relay.captured_to_server();
  // One HTTP/1.1 keep-alive connection carried every request (a reconnect
  // would go through the relay's acceptor again and fail the client).
  EXPECT_EQ(http_sizes(sent).messages, 21u);
  EXPECT_NE(sent.find("POST / HTTP/1.1"), std::string::npos);
  EXPECT_NE(sent.find("SOAPAction: \"\""), std::string::npos);
  EXPECT_EQ(sent.find("Connection: close"), std::string::npos);
  // The request's body: Envelope/Body/wsb:primes/wsb:n, all qualified as
  // the WSDL's schema (elementFormDefault="qualified") says.
  const std::string last = sent.substr(sent.rfind("<?xml"));
  const Doc doc = parse_dom(last);
  ASSERT_NE(doc, nullptr);
  const xmlNode* n = find_element(xmlDocGetRootElement(doc.get()), "n");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(str(n->parent->name), "primes");
  EXPECT_EQ(str(n->ns->href), "urn:wsbench");
  EXPECT_EQ(str(n->parent->ns->href), "urn:wsbench");
  EXPECT_EQ(text_of(n), "3");
}

// Requests and replies declare only the namespaces they use, whichever
// message came before on the connection (gSOAP would declare its whole
// namespace table on each).
TEST_F(GsoapStack, EnvelopesDeclareOnlyTheNamespacesTheyUse) {
  ByteRelay relay(endpoint());
  relay.set_capture(true);
  const auto client = find_stack("gsoap").connect(relay.endpoint(), "soap");
  const Payload gml = generate(parse_spec("gml/2"));
  const Payload message_b = generate(parse_spec("message-b/1KiB"));
  Payload out;
  EXPECT_EQ(client->ping(), kPingReply);
  client->echo(gml, out);
  client->get(parse_spec("gml/2"), out);
  client->echo(message_b, out);
  EXPECT_EQ(client->ping(), kPingReply);
  EXPECT_THROW(client->define("no such word"), CallError);  // a Fault
  for (const std::string& wire : {relay.captured_to_server(), relay.captured_to_client()}) {
    std::size_t envelopes = 0;
    for (std::size_t at = wire.find("<?xml"); at != std::string::npos;
         at = wire.find("<?xml", at + 1)) {
      const std::size_t end = wire.find("</SOAP-ENV:Envelope>", at);
      ASSERT_NE(end, std::string::npos);
      const std::string envelope = wire.substr(at, end + 20 - at);
      const Doc doc = parse_dom(envelope);
      ASSERT_NE(doc, nullptr) << envelope;
      EXPECT_EQ(testing::unused_declarations(doc.get()), "") << envelope.substr(0, 400);
      ++envelopes;
    }
    EXPECT_EQ(envelopes, 6u);
  }
}

// ---- the SOAP endpoint as a third party sees it ----

TEST_F(GsoapStack, WsdlIsPublishedWithTheServersLocation) {
  RawConnection c(endpoint());
  const RawResponse r = roundtrip(c, get(endpoint(), "/?wsdl"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "text/xml; charset=utf-8");
  const Doc doc = parse_dom(r.body);
  ASSERT_NE(doc, nullptr) << "WSDL is not well-formed";
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  EXPECT_EQ(str(root->name), "definitions");
  EXPECT_EQ(str(root->ns->href), kWsdlNs);
  EXPECT_EQ(attribute(root, "targetNamespace"), "urn:wsbench");
  EXPECT_EQ(attribute(find_element(root, "address"), "location"),
            "http://" + endpoint().to_string() + "/");
  const xmlNode* port_type = find_element(root, "portType");
  ASSERT_NE(port_type, nullptr);
  std::vector<std::string> operations;
  for (const xmlNode* op = port_type->children; op != nullptr; op = op->next)
    if (op->type == XML_ELEMENT_NODE) operations.push_back(attribute(op, "name"));
  EXPECT_EQ(operations,
            (std::vector<std::string>{"ping", "get", "echo", "RegisterClient", "SendMessage",
                                      "ReceiveMessage", "UnregisterClient", "primes", "define",
                                      "put", "upload"}));
  EXPECT_EQ(attribute(find_element(root, "binding")->children
                          ? find_element(find_element(root, "binding")->children, "binding")
                          : nullptr,
                      "style"),
            "document");

  // The same document at /wsbench.wsdl, on the same connection; the
  // location follows the Host the client addressed.
  const RawResponse again = roundtrip(c, get(endpoint(), "/wsbench.wsdl"));
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body, r.body);
  std::string other = get(endpoint(), "/?wsdl");
  other.replace(other.find("Host: ") + 6, endpoint().to_string().size(), "soap.example:8080");
  const RawResponse elsewhere = roundtrip(c, other);
  EXPECT_NE(elsewhere.body.find("location=\"http://soap.example:8080/\""), std::string::npos);
  // And SOAP on that connection afterwards.
  EXPECT_NE(roundtrip(c, post(endpoint(), envelope("<ns:ping/>"))).body.find(">pong<"),
            std::string::npos);
}

TEST_F(GsoapStack, UnknownGetPathIs404) {
  RawConnection c(endpoint());
  EXPECT_EQ(roundtrip(c, get(endpoint(), "/nowhere")).status, 404);
  RawConnection next(endpoint());
  EXPECT_EQ(roundtrip(next, get(endpoint(), "/?wsdl")).status, 200);
}

TEST_F(GsoapStack, HandWrittenEnvelopesAreServed) {
  // As server_process_test.sh does with curl: any prefix for the
  // targetNamespace, SOAPAction "".
  RawConnection c(endpoint());
  RawResponse r = roundtrip(c, post(endpoint(), envelope("<ns:ping/>")));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "text/xml; charset=utf-8");
  EXPECT_EQ(r.header("Connection"), "keep-alive");
  Doc doc = parse_dom(r.body);
  ASSERT_NE(doc, nullptr);
  EXPECT_EQ(text_of(find_element(xmlDocGetRootElement(doc.get()), "reply")), kPingReply);

  r = roundtrip(
      c, post(endpoint(), envelope("<ns:get><ns:kind>ints</ns:kind><ns:n>3</ns:n></ns:get>")));
  EXPECT_EQ(r.status, 200);
  doc = parse_dom(r.body);
  ASSERT_NE(doc, nullptr);
  const xmlNode* ints = find_element(xmlDocGetRootElement(doc.get()), "ints");
  ASSERT_NE(ints, nullptr);
  const auto expected = std::get<IntArray>(generate(parse_spec("ints/3"))).values;
  std::vector<std::int32_t> got;
  for (const xmlNode* item = ints->children; item != nullptr; item = item->next)
    if (item->type == XML_ELEMENT_NODE) got.push_back(std::stoi(text_of(item)));
  EXPECT_EQ(got, expected);

  // A default namespace instead of a prefix, and SOAP 1.1's Content-Type
  // without charset.
  r = roundtrip(c, post(endpoint(),
                        "<Envelope xmlns=\"" + std::string(kSoapEnvNs) +
                            "\"><Body><primes xmlns=\"urn:wsbench\"><n>4</n></primes></Body>"
                            "</Envelope>",
                        {}, "text/xml"));
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(">FIRST 4 numbers: 2 3 5 7<"), std::string::npos) << r.body;
}

TEST_F(GsoapStack, ServiceFaultsAreClientFaultsAndTheConnectionGoesOn) {
  RawConnection c(endpoint());
  const RawResponse r =
      roundtrip(c, post(endpoint(), envelope("<ns:UnregisterClient><ns:queue>nope</ns:queue>"
                                             "</ns:UnregisterClient>")));
  // SOAP 1.1 faults travel with HTTP 500 (what gSOAP sends, as SOAP 1.1
  // and WS-I BP R1126 prescribe), whatever the ServiceError's HTTP status.
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.header("Connection"), "keep-alive");
  const auto [code, string] = fault_of(r.body);
  EXPECT_EQ(code, "SOAP-ENV:Client");
  EXPECT_NE(string.find("nope"), std::string::npos) << string;
  EXPECT_EQ(roundtrip(c, post(endpoint(), envelope("<ns:ping/>"))).status, 200);

  for (const char* bad :
       {"<ns:get><ns:kind>floats</ns:kind><ns:n>3</ns:n></ns:get>",
        "<ns:get><ns:kind>ints</ns:kind><ns:n>-1</ns:n></ns:get>",
        "<ns:primes><ns:n>2000000000</ns:n></ns:primes>", "<ns:echo><ns:payload/></ns:echo>"}) {
    SCOPED_TRACE(bad);
    const RawResponse f = roundtrip(c, post(endpoint(), envelope(bad)));
    EXPECT_EQ(f.status, 500);
    EXPECT_EQ(fault_of(f.body).first, "SOAP-ENV:Client");
    EXPECT_EQ(f.header("Connection"), "keep-alive");
  }
  EXPECT_EQ(roundtrip(c, post(endpoint(), envelope("<ns:ping/>"))).status, 200);
}

TEST_F(GsoapStack, MalformedRequestsGetFaultsAndTheServerGoesOn) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"<broken", "not a SOAP envelope"},
      {"not xml at all", "not a SOAP envelope"},
      {"<?xml version=\"1.0\"?><x/>", "not a SOAP envelope"},
      {"", ""},
      {envelope("<ns:nothing/>"), "nothing"},
      {envelope("<ns:get><ns:kind>ints</ns:kind><ns:n>abc</ns:n></ns:get>"), "ns:n"},
      {envelope("<ns:get><ns:kind>ints</ns:kind></ns:get>"), ""},
      {envelope("<ns:primes><ns:n>3</ns:n><ns:extra/></ns:primes>"), "ns:extra"},
      {envelope("<ns:ping/>").substr(0, 150), ""},
  };
  for (const auto& [body, says] : cases) {
    SCOPED_TRACE(body);
    RawConnection c(endpoint());
    const RawResponse r = roundtrip(c, post(endpoint(), body));
    EXPECT_EQ(r.status, 500);
    const auto [code, string] = fault_of(r.body);
    EXPECT_EQ(code, "SOAP-ENV:Client");
    EXPECT_NE(string.find(says), std::string::npos) << string;
    // The request may not have been read to its end: the server closes.
    EXPECT_EQ(r.header("Connection"), "close");
    EXPECT_TRUE(c.closed_by_server());
    RawConnection next(endpoint());
    EXPECT_EQ(roundtrip(next, post(endpoint(), envelope("<ns:ping/>"))).status, 200);
  }
}

TEST_F(GsoapStack, TruncatedBodyGetsAFault) {
  RawConnection c(endpoint());
  std::string req = post(endpoint(), envelope("<ns:primes><ns:n>3</ns:n></ns:primes>"));
  req.resize(req.size() - 30);  // Content-Length promises 30 bytes more
  ASSERT_TRUE(c.send(req));
  c.shutdown_write();  // the rest never comes
  const RawResponse r = c.read_response();
  EXPECT_EQ(r.status, 400);  // HTTP's answer to a message cut short, with a fault saying so
  EXPECT_NE(fault_of(r.body).second.find("ended before"), std::string::npos) << r.body;
  EXPECT_TRUE(c.closed_by_server());
  RawConnection next(endpoint());
  EXPECT_EQ(roundtrip(next, post(endpoint(), envelope("<ns:ping/>"))).status, 200);
}

TEST_F(GsoapStack, ExpectContinueIsAnswered) {
  RawConnection c(endpoint());
  const std::string body = envelope("<ns:ping/>");
  std::string head = post(endpoint(), body, "Expect: 100-continue\r\n");
  head.resize(head.size() - body.size());
  ASSERT_TRUE(c.send(head));
  EXPECT_EQ(c.read_response().status, 100);
  ASSERT_TRUE(c.send(body));
  EXPECT_EQ(c.read_response().status, 200);
}

TEST_F(GsoapStack, PipelinedRequestsAreAnsweredInOrder) {
  RawConnection c(endpoint());
  ASSERT_TRUE(c.send(post(endpoint(), envelope("<ns:ping/>")) +
                     post(endpoint(), envelope("<ns:UnregisterClient><ns:queue>none</ns:queue>"
                                               "</ns:UnregisterClient>")) +
                     post(endpoint(), envelope("<ns:primes><ns:n>3</ns:n></ns:primes>"))));
  EXPECT_NE(c.read_response().body.find(">pong<"), std::string::npos);
  EXPECT_EQ(c.read_response().status, 500);
  EXPECT_NE(c.read_response().body.find(">FIRST 3 numbers: 2 3 5<"), std::string::npos);
}

TEST_F(GsoapStack, ConnectionCloseAndHttp10AreHonoured) {
  RawConnection c(endpoint());
  EXPECT_EQ(roundtrip(c, post(endpoint(), envelope("<ns:ping/>"))).status, 200);
  const RawResponse r =
      roundtrip(c, post(endpoint(), envelope("<ns:ping/>"), "Connection: close\r\n"));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(c.closed_by_server());

  RawConnection old(endpoint());
  std::string req = post(endpoint(), envelope("<ns:ping/>"));
  req.replace(req.find("HTTP/1.1"), 8, "HTTP/1.0");
  EXPECT_EQ(roundtrip(old, req).status, 200);
  EXPECT_TRUE(old.closed_by_server());
}

// ---- limits, on a server of its own ----

class GsoapLimits : public ::testing::Test {
 protected:
  static constexpr std::size_t kMaxBody = 64 * 1024;
  void SetUp() override {
    ServerOptions options;
    options.limits.max_body_bytes = kMaxBody;
    options.limits.keepalive_timeout_s = 1;
    server_ = find_stack("gsoap").start_server(service_, options);
  }
  Endpoint endpoint() const { return server_->endpoint(); }
  static std::string big_echo(std::size_t text_bytes) {
    return envelope("<ns:echo><ns:payload><ns:text>" + std::string(text_bytes, 'x') +
                    "</ns:text></ns:payload></ns:echo>");
  }
  void expect_413(const RawResponse& r) {
    EXPECT_EQ(r.status, 413);
    const auto [code, string] = fault_of(r.body);
    EXPECT_EQ(code, "SOAP-ENV:Client");
    EXPECT_NE(string.find(std::to_string(kMaxBody)), std::string::npos) << string;
    EXPECT_EQ(r.header("Connection"), "close");
  }
  Service service_;
  std::unique_ptr<Server> server_;
};

TEST_F(GsoapLimits, DeclaredOversizedBodyIs413BeforeTheBodyIsSent) {
  RawConnection c(endpoint());
  const std::string body = big_echo(kMaxBody);
  std::string head = post(endpoint(), body);
  head.resize(head.size() - body.size());
  ASSERT_TRUE(c.send(head));
  expect_413(c.read_response());
  EXPECT_TRUE(c.closed_by_server());
  RawConnection next(endpoint());
  EXPECT_EQ(roundtrip(next, post(endpoint(), envelope("<ns:ping/>"))).status, 200);
}

TEST_F(GsoapLimits, OversizedUploadStillSees413) {
  // The client writes its whole body before reading: the server drains it
  // rather than reset the connection under the reply.
  RawConnection c(endpoint());
  c.send(post(endpoint(), big_echo(16 * kMaxBody)));
  expect_413(c.read_response());
}

// A POST of `body` in chunks of `piece` bytes.
std::string chunked_post(const Endpoint& server, const std::string& body, std::size_t piece) {
  std::string req = post(server, "", "Transfer-Encoding: chunked\r\n");
  req.erase(req.find("Content-Length: 0\r\n"), 19);
  for (std::size_t at = 0; at < body.size(); at += piece) {
    const std::string chunk = body.substr(at, piece);
    char size[16];
    std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
    req += size + chunk + "\r\n";
  }
  return req + "0\r\n\r\n";
}

TEST_F(GsoapLimits, ChunkedBodyOverTheLimitIs413) {
  RawConnection c(endpoint());
  c.send(chunked_post(endpoint(), big_echo(4 * kMaxBody), 4096));
  expect_413(c.read_response());

  // Under the limit, chunked is fine.
  RawConnection d(endpoint());
  const RawResponse r = roundtrip(
      d, chunked_post(endpoint(), envelope("<ns:primes><ns:n>2</ns:n></ns:primes>"), 1000));
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("FIRST 2 numbers: 2 3"), std::string::npos);
}

// A chunked body is read whole before it is parsed (held in blocks, to its
// last chunk): one spanning several blocks, in small chunks, is answered,
// and so is the request pipelined after it in the same bytes.
TEST_F(GsoapLimits, ChunkedBodiesSpanningBlocksAndPipelinedAreAnswered) {
  const std::size_t text = kMaxBody + kMaxBody / 4;  // within the chunked allowance
  const std::string primes2 = envelope("<ns:primes><ns:n>2</ns:n></ns:primes>");
  RawConnection c(endpoint());
  ASSERT_TRUE(c.send(chunked_post(endpoint(), big_echo(text), 1000) +
                     chunked_post(endpoint(), primes2, 7)));
  const RawResponse echoed = c.read_response();
  EXPECT_EQ(echoed.status, 200);
  EXPECT_NE(echoed.body.find(std::string(text, 'x')), std::string::npos);
  EXPECT_NE(c.read_response().body.find("FIRST 2 numbers: 2 3"), std::string::npos);

  // Small ones, both in the header's first read.
  RawConnection d(endpoint());
  ASSERT_TRUE(
      d.send(chunked_post(endpoint(), primes2, 1000) +
             chunked_post(endpoint(), envelope("<ns:primes><ns:n>3</ns:n></ns:primes>"), 1000)));
  EXPECT_NE(d.read_response().body.find("FIRST 2 numbers: 2 3"), std::string::npos);
  EXPECT_NE(d.read_response().body.find("FIRST 3 numbers: 2 3 5"), std::string::npos);
}

TEST_F(GsoapLimits, ClientSeesHttp413AndNoSilentReconnect) {
  const auto client = find_stack("gsoap").connect(endpoint(), "soap");
  Payload out;
  try {
    client->echo(Binary{Bytes(kMaxBody, 7)}, out);
    ADD_FAILURE() << "an over-limit body was accepted";
  } catch (const CallError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("HTTP 413: ", 0), 0u) << e.what();
  }
  // The server closed that connection; the client says so instead of
  // reconnecting behind the caller's back.
  try {
    client->ping();
    ADD_FAILURE() << "the client reconnected";
  } catch (const CallError& e) {
    EXPECT_NE(std::string(e.what()).find("not reconnecting"), std::string::npos) << e.what();
  }
  EXPECT_EQ(find_stack("gsoap").connect(endpoint(), "soap")->ping(), kPingReply);
}

TEST_F(GsoapLimits, IdleConnectionsAreClosedAndTheClientSaysSo) {
  RawConnection c(endpoint());
  // Timed from before the request: the server's idle clock starts after
  // its reply, which a loaded machine may hand to this thread late.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(roundtrip(c, post(endpoint(), envelope("<ns:ping/>"))).status, 200);
  c.set_receive_timeout(std::chrono::seconds(5));
  EXPECT_TRUE(c.closed_by_server());
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(900));
  EXPECT_LT(waited, std::chrono::milliseconds(4000));

  const auto client = find_stack("gsoap").connect(endpoint(), "soap-mtom");
  EXPECT_EQ(client->ping(), kPingReply);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_THROW(client->ping(), CallError);
}

}  // namespace
}  // namespace wsb
