// The beast stack: its client against its server for every codec it
// carries, and its HTTP API as a third party (curl, a browser) sees it,
// driven through a plain socket: content negotiation, status codes, limits,
// keep-alive, malformed requests, and the phase points it marks.

#include <gtest/gtest.h>

#include <charconv>
#include <chrono>
#include <thread>

#include "common/codec.h"
#include "common/phases.h"
#include "common/rpc_binding.h"
#include "common/service.h"
#include "common/transport.h"
#include "conformance_cases.h"
#include "raw_http.h"
#include "rest/http_negotiation.h"
#include "rest/rest_handler.h"
#include "stack_fixture.h"

namespace wsb {
namespace {

// ---- a plain-socket HTTP peer ----

using testing::RawConnection;
using testing::RawResponse;
using testing::roundtrip;

// A request as curl 7.88 sends it, with extra header lines.
std::string request(std::string_view method, std::string_view target, const Endpoint& server,
                    std::string_view extra = {}, std::string_view body = {}) {
  std::string r = std::string(method) + " " + std::string(target) +
                  " HTTP/1.1\r\nHost: " + server.to_string() +
                  "\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n";
  r += extra;
  if (!body.empty() || method == "POST" || method == "PUT")
    r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  r += "\r\n";
  r += body;
  return r;
}

// Accept replaces curl's */* when given.
std::string get(const Endpoint& server, std::string_view target, std::string_view accept = {}) {
  std::string r = request("GET", target, server);
  if (!accept.empty()) {
    const auto at = r.find("Accept: */*");
    r.replace(at, 11, "Accept: " + std::string(accept));
  }
  return r;
}

Payload conformance_case(std::string_view name) {
  for (auto& c : testing::conformance_payloads())
    if (c.name == name) return c.payload;
  throw std::invalid_argument("no conformance case " + std::string(name));
}

Payload decode_with(const char* codec, const std::string& body) {
  Payload p;
  find_codec(codec).make()->decode(body, p);
  return p;
}

std::string encode_with(const char* codec, const Payload& p) {
  std::string out;
  find_codec(codec).make()->encode(p, out);
  return out;
}

// ---- the fixture: one Service, one server with the default limits ----

constexpr char kBeastStackName[] = "beast";
using BeastStack = testing::StackSuite<kBeastStackName>;

// ---- client against server, every codec ----

class BeastCodecs : public BeastStack, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { client_ = connect(GetParam()); }

  // Empty if `actual` is what was sent, under the codec's double fidelity.
  // Payloads the codec cannot carry at all (xmlrpc-c and 4-byte UTF-8) are
  // not sent; `carried` counts the others.
  std::string difference(const Payload& expected, const Payload& actual) const {
    return describe_difference(expected, actual, codec_->double_fidelity());
  }
  bool can_carry(const Payload& p) const { return codec_->unsupported(p).empty(); }
  // How the codec's refusals begin: an HTTP status for REST, the
  // protocol's fault (with the same code for XML-RPC) for RPC codecs.
  std::string refusal(unsigned status) const {
    if (GetParam() == "xmlrpc") return "XML-RPC fault " + std::to_string(status) + ": ";
    if (GetParam().starts_with("soap")) return "SOAP Fault SOAP-ENV:Client: ";
    return "HTTP " + std::to_string(status) + ": ";
  }

  std::unique_ptr<Client> client_;
  std::unique_ptr<Codec> codec_ = find_codec(GetParam()).make();
};

// The registry lists every codec a beast client pings its server with, but
// a second decode path of another codec's bytes (xml-dom), whose requests
// that codec already covers.
TEST(BeastStackEntry, ListsEveryCodecItsClientCarries) {
  EXPECT_EQ(find_stack("beast").codecs, testing::codecs_that_ping(find_stack("beast")));
}

// The operations themselves are tested for every stack in
// stack_conformance_test.cpp; here, the form of a refusal.
TEST_P(BeastCodecs, UnknownQueuesAreRefusedAs404) {
  const auto a = std::get<Message>(generate(parse_spec("message-a/100")));
  const std::string queue = client_->register_client();
  client_->unregister_client(queue);
  std::vector<Message> got;
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { client_->send_message(queue, a); },
           [&] { client_->receive_messages(queue, got); },
           [&] { client_->unregister_client(queue); },
       }) {
    try {
      call();
      ADD_FAILURE() << "a call on an unregistered queue succeeded";
    } catch (const CallError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(refusal(404), 0), 0u) << e.what();
    }
  }
  EXPECT_EQ(client_->ping(), kPingReply) << "the connection survives refused calls";
}

TEST_P(BeastCodecs, ServiceLimitsAreRefusedAs413AndServingGoesOn) {
  Payload out;
  try {
    client_->get(parse_spec("ints/100000000"), out);
    ADD_FAILURE() << "an over-limit payload was served";
  } catch (const CallError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(refusal(413), 0), 0u) << e.what();
  }
  EXPECT_EQ(client_->ping(), kPingReply);
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, BeastCodecs,
                         ::testing::Values("soap", "soap-mtom", "soap-swa", "xmlrpc", "json", "xml",
                                           "protobuf"),
                         [](const auto& p) {
                           std::string name = p.param;
                           for (auto& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// ---- the HTTP API as a third party sees it ----

TEST_F(BeastStack, CurlStylePingIsJsonAndServerTimingOnlyWhenAsked) {
  RawConnection c(endpoint());
  RawResponse r = roundtrip(c, request("GET", "/ping", endpoint()));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  EXPECT_EQ(r.body, R"({"text":"pong"})");
  EXPECT_FALSE(r.header("Server-Timing")) << "not asked for";

  r = roundtrip(
      c, request("GET", "/ping", endpoint(), std::string(rest::kTimingRequestHeader) + ": 1\r\n"));
  EXPECT_EQ(r.status, 200);
  const auto timing = r.header("Server-Timing");
  ASSERT_TRUE(timing);
  // "parse;dur=<ms>, service;dur=<ms>, marshal;dur=<ms>", fractional ms.
  std::string_view rest = *timing;
  for (const char* name : {"parse", "service", "marshal"}) {
    const std::string prefix = std::string(name) + ";dur=";
    ASSERT_EQ(rest.substr(0, prefix.size()), prefix) << *timing;
    rest.remove_prefix(prefix.size());
    double ms = -1;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), ms);
    ASSERT_EQ(ec, std::errc{}) << *timing;
    EXPECT_GE(ms, 0.0);
    EXPECT_LT(ms, 1000.0);
    EXPECT_NE(std::string_view(rest.data(), end - rest.data()).find('.'), std::string_view::npos)
        << "fractional milliseconds";
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    if (!rest.empty()) {
      ASSERT_EQ(rest.substr(0, 2), ", ") << *timing;
      rest.remove_prefix(2);
    }
  }
  EXPECT_TRUE(rest.empty()) << *timing;
  EXPECT_TRUE(rest::parse_server_timing(*timing)) << *timing;
}

TEST(ServerTimingHeader, ParsesTheThreeServerPhases) {
  const auto d = rest::parse_server_timing("parse;dur=0.0123, service;dur=1.5, marshal;dur=0");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->parse_ns, 12'300);
  EXPECT_EQ(d->service_ns, 1'500'000);
  EXPECT_EQ(d->marshal_ns, 0);
  // Other metrics, parameters, order and spacing do not matter.
  const auto e = rest::parse_server_timing(
      "db;dur=9,marshal;desc=\"m\";dur=2 ,  service ; dur=3, parse;dur=4;desc=x, cache");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->parse_ns, 4'000'000);
  EXPECT_EQ(e->service_ns, 3'000'000);
  EXPECT_EQ(e->marshal_ns, 2'000'000);
}

TEST(ServerTimingHeader, RefusesWhatDoesNotCarryTheThreePhases) {
  for (const char* bad :
       {"", "parse;dur=1, service;dur=1", "parse;dur=1, service;dur=1, marshal",
        "parse;dur=1, service;dur=-1, marshal;dur=1", "parse;dur=1, service;dur=x, marshal;dur=1",
        "parse;dur=1, service;dur=1, marshal;dur=1, parse;dur=2",
        "parse;dur=nan, service;dur=1, marshal;dur=1"})
    EXPECT_FALSE(rest::parse_server_timing(bad)) << bad;
}

TEST_F(BeastStack, ClientReadsServerTimingWhenItAsks) {
  const auto client = connect("json");
  client->ping();
  EXPECT_FALSE(client->last_server_timing()) << "not asked for";
  ASSERT_TRUE(client->request_server_timing());
  const Payload payload = generate(parse_spec("objects/200"));
  Payload out;
  client->echo(payload, out);
  const auto timing = client->last_server_timing();
  ASSERT_TRUE(timing);
  EXPECT_GT(timing->parse_ns, 0) << "decoding 200 objects takes time";
  EXPECT_GT(timing->marshal_ns, 0);
  // As a remote run splits them: the server's phases within the wait.
  const auto phases = phases_of(client->last_timeline(), *timing);
  std::vector<std::string> names;
  for (const auto& p : phases) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"client_marshal", "request_transfer+response_transfer",
                                             "server_parse", "service", "server_marshal",
                                             "client_parse"}));
}

// The client names REST bodies by codec; the other codecs travel in
// X-Wsbench-Codec.
TEST(HttpNegotiation, FormatOfCodecKnowsTheFourRestBodiesOnly) {
  using rest::Format;
  for (const Format f : {Format::json, Format::xml, Format::protobuf, Format::text})
    EXPECT_EQ(rest::format_of_codec(rest::codec_name(f)), f) << rest::codec_name(f);
  for (const char* other : {"soap", "soap-mtom", "xmlrpc", "xml-dom", "JSON", ""})
    EXPECT_FALSE(rest::format_of_codec(other)) << other;
}

TEST_F(BeastStack, AcceptPicksTheResponseFormat) {
  RawConnection c(endpoint());
  const Payload ints = generate(parse_spec("ints/3"));

  RawResponse r = roundtrip(c, get(endpoint(), "/payloads/ints/3", "application/xml"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "application/xml");
  EXPECT_EQ(describe_difference(ints, decode_with("xml", r.body)), "");

  r = roundtrip(c, get(endpoint(), "/payloads/ints/3", "application/x-protobuf"));
  EXPECT_EQ(r.header("Content-Type"), "application/x-protobuf");
  EXPECT_EQ(describe_difference(ints, decode_with("protobuf", r.body)), "");

  // q-values: XML is preferred over text here.
  r = roundtrip(c, get(endpoint(), "/ping", "text/plain;q=0.5, application/xml"));
  EXPECT_EQ(r.header("Content-Type"), "application/xml");
  EXPECT_EQ(describe_difference(Text{"pong"}, decode_with("xml", r.body)), "");

  // No Accept at all: JSON.
  std::string no_accept = request("GET", "/payloads/ints/3", endpoint());
  no_accept.erase(no_accept.find("Accept: */*\r\n"), 13);
  r = roundtrip(c, no_accept);
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  EXPECT_EQ(r.body.rfind(R"({"ints":[)", 0), 0u) << r.body;
  EXPECT_EQ(describe_difference(ints, decode_with("json", r.body)), "");
}

TEST_F(BeastStack, TextPlainIsTheRawStringForTextResourcesOnly) {
  RawConnection c(endpoint());
  RawResponse r = roundtrip(c, get(endpoint(), "/ping", "text/plain"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "text/plain; charset=utf-8");
  EXPECT_EQ(r.body, "pong");

  r = roundtrip(c, get(endpoint(), "/primes/10", "text/*"));
  EXPECT_EQ(r.body, "FIRST 10 numbers: 2 3 5 7 11 13 17 19 23 29");

  r = roundtrip(c, get(endpoint(), "/payloads/text", "text/plain"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, std::get<Text>(generate(parse_spec("text"))).value);

  r = roundtrip(c, get(endpoint(), "/payloads/ints/3", "text/plain"));
  EXPECT_EQ(r.status, 406);
  EXPECT_NE(r.body.find("application/json"), std::string::npos) << r.body;

  r = roundtrip(c, get(endpoint(), "/ping", "image/png"));
  EXPECT_EQ(r.status, 406);
  EXPECT_EQ(roundtrip(c, get(endpoint(), "/ping")).status, 200) << "the connection goes on";
}

TEST_F(BeastStack, EchoReadsTheContentTypeAndMirrorsIt) {
  RawConnection c(endpoint());
  const Payload msg = conformance_case("message_records");
  RawResponse r =
      roundtrip(c, request("POST", "/echo", endpoint(), "Content-Type: application/xml\r\n",
                           encode_with("xml", msg)));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "application/xml");
  EXPECT_EQ(describe_difference(msg, decode_with("xml", r.body)), "");

  std::string req = request("POST", "/echo", endpoint(), "Content-Type: application/x-protobuf\r\n",
                            encode_with("protobuf", msg));
  req.replace(req.find("Accept: */*"), 11, "Accept: application/json");
  r = roundtrip(c, req);
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  EXPECT_EQ(describe_difference(msg, decode_with("json", r.body)), "");

  r = roundtrip(c, request("POST", "/echo", endpoint(), "Content-Type: text/plain\r\n", "hi <&>"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "text/plain; charset=utf-8");
  EXPECT_EQ(r.body, "hi <&>");
}

// An RPC codec's calls are its protocol's own: a methodCall POSTed to
// /RPC2, answered by a methodResponse; a REST route is not a call.
TEST_F(BeastStack, CommonTransportHeaderSelectsTheCodec) {
  RawConnection c(endpoint());
  const Payload ints = generate(parse_spec("ints/5"));
  const auto rpc = find_codec("xmlrpc").make_rpc();
  std::string body;
  rpc->encode_call({.op = Operation::echo, .payload = &ints}, body);
  const RawResponse r =
      roundtrip(c, request("POST", "/RPC2", endpoint(),
                           "Content-Type: text/xml\r\nX-Wsbench-Codec: xmlrpc\r\n", body));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "text/xml");
  EXPECT_NE(r.body.find("<methodResponse>"), std::string::npos) << r.body;
  Payload echoed;
  rpc->decode_reply(Operation::echo, r.body, echoed);
  EXPECT_EQ(describe_difference(ints, echoed), "");

  const RawResponse rest =
      roundtrip(c, request("POST", "/echo", endpoint(),
                           "Content-Type: text/xml\r\nX-Wsbench-Codec: xmlrpc\r\n", body));
  EXPECT_EQ(rest.status, 404);

  const RawResponse fault =
      roundtrip(c, request("POST", "/", endpoint(),
                           "Content-Type: text/xml\r\nX-Wsbench-Codec: soap\r\n", "<junk/>"));
  EXPECT_EQ(fault.status, 500);
  EXPECT_NE(fault.body.find("SOAP-ENV:Fault"), std::string::npos) << fault.body;
  EXPECT_NE(fault.body.find("SOAP-ENV:Client"), std::string::npos) << fault.body;

  std::string unknown;
  rpc->encode_call({.op = Operation::ping}, unknown);
  unknown.replace(unknown.find("wsbench.ping"), 12, "wsbench.pong");
  const RawResponse no_method =
      roundtrip(c, request("POST", "/RPC2", endpoint(),
                           "Content-Type: text/xml\r\nX-Wsbench-Codec: xmlrpc\r\n", unknown));
  EXPECT_EQ(no_method.status, 200);
  EXPECT_NE(no_method.body.find("<fault>"), std::string::npos) << no_method.body;
  EXPECT_THROW(rpc->decode_reply(Operation::ping, no_method.body, echoed), CallError);

  const RawResponse not_post =
      roundtrip(c, request("GET", "/RPC2", endpoint(), "X-Wsbench-Codec: xmlrpc\r\n"));
  EXPECT_EQ(not_post.status, 405);
  EXPECT_EQ(not_post.header("Allow"), "POST");

  const RawResponse bad =
      roundtrip(c, request("GET", "/ping", endpoint(), "X-Wsbench-Codec: corba\r\n"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("corba"), std::string::npos) << bad.body;
}

TEST_F(BeastStack, QueuesOverRawHttp) {
  RawConnection c(endpoint());
  RawResponse r = roundtrip(c, request("POST", "/queues", endpoint()));
  ASSERT_EQ(r.status, 201);
  const auto location = r.header("Location");
  ASSERT_TRUE(location);
  ASSERT_EQ(location->rfind("/queues/", 0), 0u) << *location;
  EXPECT_TRUE(r.body.empty());

  const Payload a = conformance_case("message_both");
  r = roundtrip(c, request("PUT", *location, endpoint(), "Content-Type: application/json\r\n",
                           encode_with("json", a)));
  EXPECT_EQ(r.status, 204);
  EXPECT_FALSE(r.header("Content-Length")) << "a 204 has no Content-Length";

  r = roundtrip(c, request("PUT", *location, endpoint(), "Content-Type: application/json\r\n",
                           R"({"ints":[1]})"));
  EXPECT_EQ(r.status, 400) << "a queue takes messages only";

  r = roundtrip(c, request("GET", *location, endpoint()));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.rfind(R"({"messages":[)", 0), 0u) << r.body.substr(0, 40);
  EXPECT_EQ(describe_difference(MessageList{{std::get<Message>(a)}}, decode_with("json", r.body)),
            "");

  // Content negotiation happens before the service runs: a 406 leaves the
  // queue as it was.
  r = roundtrip(c, request("PUT", *location, endpoint(), "Content-Type: application/json\r\n",
                           encode_with("json", a)));
  EXPECT_EQ(r.status, 204);
  r = roundtrip(c, get(endpoint(), *location, "text/plain"));
  EXPECT_EQ(r.status, 406);
  r = roundtrip(c, get(endpoint(), *location, "application/x-protobuf"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(
      describe_difference(MessageList{{std::get<Message>(a)}}, decode_with("protobuf", r.body)),
      "");

  EXPECT_EQ(roundtrip(c, request("DELETE", *location, endpoint())).status, 204);
  r = roundtrip(c, request("GET", *location, endpoint()));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.header("Content-Type"), "text/plain; charset=utf-8");
  EXPECT_EQ(roundtrip(c, request("DELETE", *location, endpoint())).status, 404);
  EXPECT_EQ(roundtrip(c, request("GET", "/queues/none", endpoint())).status, 404);
}

TEST_F(BeastStack, BadBodiesAre400AndTheConnectionGoesOn) {
  RawConnection c(endpoint());
  RawResponse r = roundtrip(c, request("POST", "/echo", endpoint(),
                                       "Content-Type: application/json\r\n", "{\"ints\": [1, "));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body.rfind("json: ", 0), 0u) << r.body;

  r = roundtrip(c, request("POST", "/echo", endpoint(), "Content-Type: application/json\r\n",
                           R"({"binary":"@@@@"})"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body.rfind("json: binary: invalid base64", 0), 0u) << r.body;

  r = roundtrip(c, request("POST", "/echo", endpoint(), "Content-Type: application/xml\r\n",
                           "<ints xmlns='urn:wsbench:rest'><i>x</i></ints>"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body.rfind("xml: ", 0), 0u) << r.body;

  r = roundtrip(c, request("POST", "/echo", endpoint(), "Content-Type: application/x-protobuf\r\n",
                           "\xff\xff\xff"));
  EXPECT_EQ(r.status, 400);

  r = roundtrip(c, request("POST", "/echo", endpoint(), "Content-Type: text/csv\r\n", "a,b"));
  EXPECT_EQ(r.status, 415);

  r = roundtrip(c, request("POST", "/echo", endpoint(),
                           "Content-Type: application/x-www-form-urlencoded\r\n", "a=b"));
  EXPECT_EQ(r.status, 415) << "curl -d without -H";

  r = roundtrip(c, request("PUT", "/queues/1", endpoint(), "Content-Type: text/plain\r\n", "hi"));
  EXPECT_EQ(r.status, 415) << "text is no message";

  EXPECT_EQ(roundtrip(c, get(endpoint(), "/ping")).status, 200);
}

TEST_F(BeastStack, UnknownPathsAndMethods) {
  RawConnection c(endpoint());
  for (const char* target :
       {"/", "/pings", "/payloads/", "/payloads/ints/x", "/payloads/nope/3", "/primes/x",
        "/primes/-1", "/primes/99999999999", "/queues/1/2", "/echo/1"}) {
    EXPECT_EQ(roundtrip(c, get(endpoint(), target)).status, 404) << target;
  }
  RawResponse r = roundtrip(c, request("DELETE", "/ping", endpoint()));
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("Allow"), "GET, HEAD");
  r = roundtrip(c, get(endpoint(), "/echo"));
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("Allow"), "POST");
  r = roundtrip(c, request("PATCH", "/queues/1", endpoint()));
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("Allow"), "GET, HEAD, PUT, DELETE");
  r = roundtrip(c, request("BREW", "/ping", endpoint()));
  EXPECT_EQ(r.status, 405) << "an unknown method";
  // A query string does not change the resource.
  EXPECT_EQ(roundtrip(c, get(endpoint(), "/ping?x=1")).status, 200);
}

TEST_F(BeastStack, MalformedRequestsGet400AndTheServerGoesOn) {
  for (const char* bytes :
       {"GARBAGE\r\n\r\n", "GET /ping HTTP/1.1\r\nNo colon here\r\n\r\n",
        "GET /ping HTTP/2.0\r\n\r\n", "POST /echo HTTP/1.1\r\nContent-Length: twelve\r\n\r\n",
        "\x01\x02\x03\r\n\r\n"}) {
    RawConnection c(endpoint());
    const RawResponse r = roundtrip(c, bytes);
    // Another major version is 505 (RFC 9110 15.6.6), the rest 400.
    EXPECT_EQ(r.status,
              std::string_view(bytes).find("HTTP/2") != std::string_view::npos ? 505 : 400)
        << bytes;
    EXPECT_EQ(r.header("Connection"), "close") << bytes;
    EXPECT_TRUE(c.closed_by_server()) << "framing is lost, so the connection ends: " << bytes;
    RawConnection next(endpoint());
    EXPECT_EQ(roundtrip(next, get(endpoint(), "/ping")).status, 200);
  }
}

TEST_F(BeastStack, TruncatedBodyIs400) {
  RawConnection c(endpoint());
  std::string req = request("POST", "/echo", endpoint(), "Content-Type: application/json\r\n",
                            "{\"text\":\"0123456789\"}");
  req.replace(req.find("Content-Length: 21"), 18, "Content-Length: 99");
  ASSERT_TRUE(c.send(req));
  c.shutdown_write();  // the rest never comes
  const RawResponse r = c.read_response();
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("ended before"), std::string::npos) << r.body;
  EXPECT_TRUE(c.closed_by_server());
  RawConnection next(endpoint());
  EXPECT_EQ(roundtrip(next, get(endpoint(), "/ping")).status, 200);
}

TEST_F(BeastStack, ExpectContinueIsAnswered) {
  RawConnection c(endpoint());
  const std::string body = R"({"text":"later"})";
  std::string head = request("POST", "/echo", endpoint(),
                             "Content-Type: application/json\r\nExpect: 100-continue\r\n", body);
  head.resize(head.size() - body.size());
  ASSERT_TRUE(c.send(head));
  EXPECT_EQ(c.read_response().status, 100);
  ASSERT_TRUE(c.send(body));
  const RawResponse r = c.read_response();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, body);
}

TEST_F(BeastStack, KeepAlivePipeliningAndClose) {
  RawConnection c(endpoint());
  // Two requests in one segment: two replies, in order.
  ASSERT_TRUE(
      c.send(get(endpoint(), "/ping", "text/plain") + get(endpoint(), "/primes/3", "text/plain")));
  EXPECT_EQ(c.read_response().body, "pong");
  EXPECT_EQ(c.read_response().body, "FIRST 3 numbers: 2 3 5");
  // Connection: close is honoured.
  const RawResponse r = roundtrip(c, request("GET", "/ping", endpoint(), "Connection: close\r\n"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Connection"), "close");
  EXPECT_TRUE(c.closed_by_server());

  // HTTP/1.0 without keep-alive: one request per connection.
  RawConnection old(endpoint());
  const RawResponse r10 = roundtrip(old, "GET /ping HTTP/1.0\r\n\r\n");
  EXPECT_EQ(r10.status, 200);
  EXPECT_EQ(r10.head.substr(0, 8), "HTTP/1.0");
  EXPECT_TRUE(old.closed_by_server());
}

// ---- limits, on a server of its own ----

class BeastLimits : public ::testing::Test {
 protected:
  static constexpr std::size_t kMaxBody = 64 * 1024;
  void SetUp() override {
    ServerOptions options;
    options.limits.max_body_bytes = kMaxBody;
    options.limits.keepalive_timeout_s = 1;
    server_ = find_stack("beast").start_server(service_, options);
  }
  Service service_;
  std::unique_ptr<Server> server_;
};

TEST_F(BeastLimits, OversizedBodyIs413BeforeTheBodyIsSent) {
  RawConnection c(server_->endpoint());
  std::string req =
      request("POST", "/echo", server_->endpoint(), "Content-Type: application/json\r\n", "x");
  req.replace(req.find("Content-Length: 1"), 17, "Content-Length: " + std::to_string(kMaxBody + 1));
  req.pop_back();  // headers only
  ASSERT_TRUE(c.send(req));
  const RawResponse r = c.read_response();
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.body.find(std::to_string(kMaxBody)), std::string::npos) << r.body;
  EXPECT_EQ(r.header("Connection"), "close");
  EXPECT_TRUE(c.closed_by_server());
  RawConnection next(server_->endpoint());
  EXPECT_EQ(roundtrip(next, get(server_->endpoint(), "/ping")).status, 200);
}

TEST_F(BeastLimits, OversizedUploadStillSees413) {
  // The client writes its whole body before reading: the server must drain
  // it rather than reset the connection under the reply.
  RawConnection c(server_->endpoint());
  const std::string body(4 * kMaxBody, 'x');
  c.send(request("POST", "/echo", server_->endpoint(), "Content-Type: application/json\r\n", body));
  EXPECT_EQ(c.read_response().status, 413);
}

TEST_F(BeastLimits, ClientSeesHttp413AndNoSilentReconnect) {
  const auto client = find_stack("beast").connect(server_->endpoint(), "json");
  Payload out;
  try {
    client->echo(Binary{Bytes(kMaxBody, 7)}, out);
    ADD_FAILURE() << "an over-limit body was accepted";
  } catch (const CallError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("HTTP 413: ", 0), 0u) << e.what();
  }
  // The server closed that connection; the client says so instead of
  // reconnecting behind the caller's back.
  EXPECT_THROW(client->ping(), CallError);
  EXPECT_EQ(find_stack("beast").connect(server_->endpoint(), "json")->ping(), kPingReply);
}

TEST_F(BeastLimits, OversizedHeaderIs431) {
  RawConnection c(server_->endpoint());
  const RawResponse r = roundtrip(c, request("GET", "/ping", server_->endpoint(),
                                             "X-Big: " + std::string(20000, 'a') + "\r\n"));
  EXPECT_EQ(r.status, 431);
  EXPECT_TRUE(c.closed_by_server());
}

}  // namespace
}  // namespace wsb
