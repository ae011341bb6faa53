// The common transport sends what the library stacks send: for every
// operation, the request body the beast client puts on the socket for the
// soap, soap-mtom, soap-swa and xmlrpc codecs is byte for byte the one the gsoap or
// xmlrpc-c client sends (captured by a relay between client and server),
// and so are the request line and SOAPAction. Other headers differ by
// design (each HTTP stack writes its own) and are not compared.

#include <gtest/gtest.h>
#include <strings.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/codec.h"
#include "common/service.h"
#include "common/transport.h"
#include "dictionary_fixture.h"
#include "harness/byte_relay.h"

namespace wsb {
namespace {

struct Request {
  std::string line;         // "POST / HTTP/1.1"
  std::string soap_action;  // the SOAPAction header line, if any
  std::string body;
};

// The one HTTP request in `stream` (Content-Length framed, as all three
// clients send it).
Request request_of(const std::string& stream) {
  const auto sizes = http_sizes(stream);
  EXPECT_EQ(sizes.messages, 1u);
  const auto header_end = stream.find("\r\n\r\n");
  if (header_end == std::string::npos) throw std::runtime_error("no HTTP request captured");
  std::string action;
  const std::string header = stream.substr(0, header_end + 2);
  for (std::size_t at = 0, end; (end = header.find("\r\n", at)) != std::string::npos;
       at = end + 2) {
    const std::string line = header.substr(at, end - at);
    if (strncasecmp(line.c_str(), "SOAPAction:", 11) == 0) action = line.substr(11);
  }
  const auto first = action.find_first_not_of(' ');
  action = first == std::string::npos ? "" : action.substr(first);
  return {stream.substr(0, stream.find("\r\n")), action, stream.substr(header_end + 4)};
}

// An MTOM or SwA package's MIME boundary is random per message (gSOAP picks it
// when none is given), so it is replaced by a fixed token; nothing else is.
std::string without_mime_boundary(std::string body) {
  if (!body.starts_with("\r\n--") && !body.starts_with("--")) return body;
  const auto start = body.find("--") + 2;
  const std::string boundary = body.substr(start, body.find("\r\n", start) - start);
  EXPECT_FALSE(boundary.empty());
  for (auto at = body.find(boundary); at != std::string::npos;
       at = body.find(boundary, at + sizeof "BOUNDARY" - 1))
    body.replace(at, boundary.size(), "BOUNDARY");
  return body;
}

// A message every codec can carry (xmlrpc-c refuses characters above
// U+FFFD), with XML-special and multi-byte characters and an attachment.
Message sample_message() {
  Message m;
  m.meta = {"recipient <&>", "sender é", "token", 1'700'000'000'000'000'000};
  m.records.push_back({"title", "author \"q\"", "body 中", 1, 2, 3, -4, 5, 6});
  m.records.push_back({"t2", "a2", "b2", -7, 8, 9, 10, 11, -12});
  m.attachment = Bytes{0, 1, 2, 0xff, 'x', 0x80};
  return m;
}

// The calls compared, one per operation, in an order that leaves every
// queue operation a queue to work on (its id is the first the Service
// hands out on both servers).
struct Call {
  std::string name;
  std::function<void(Client&)> run;
};

std::vector<Call> calls() {
  static const Message message = sample_message();
  static const Payload echoed =
      ObjectArray{{{1, "one <&>", 0.1, true}, {-2, "two é", 1e300, false}}};
  static const Payload echoed_binary = Binary{Bytes{9, 8, 7, 0, 255}};
  return {
      {"ping", [](Client& c) { c.ping(); }},
      {"get",
       [](Client& c) {
         Payload out;
         c.get(parse_spec("ints/5"), out);
       }},
      {"echo",
       [](Client& c) {
         Payload out;
         c.echo(echoed, out);
       }},
      {"echo_binary",
       [](Client& c) {
         Payload out;
         c.echo(echoed_binary, out);
       }},
      {"register", [](Client& c) { c.register_client(); }},
      {"send", [](Client& c) { c.send_message("1", message); }},
      {"receive",
       [](Client& c) {
         std::vector<Message> out;
         c.receive_messages("1", out);
       }},
      {"unregister", [](Client& c) { c.unregister_client("1"); }},
      {"primes", [](Client& c) { c.primes(10); }},
      {"define", [](Client& c) { c.define("apple"); }},
      {"put", [](Client& c) { c.put("apple", "a fruit <&> caf\xc3\xa9"); }},
  };
}

// Runs every call on `stack` through a capturing relay; the requests, by
// call name.
std::map<std::string, Request> requests_on(const std::string& stack, const std::string& codec) {
  const testing::TempFolder folder;
  Service service({}, {}, {testing::write_word_list(folder.path(), {"apple"}), folder.path(), 1});
  const auto server = find_stack(stack).start_server(service, ServerOptions{});
  ByteRelay relay(server->endpoint());
  relay.set_capture(true);
  const auto client = find_stack(stack).connect(relay.endpoint(), codec);
  std::map<std::string, Request> requests;
  for (const auto& call : calls()) {
    relay.reset();
    call.run(*client);
    requests[call.name] = request_of(relay.captured_to_server());
  }
  return requests;
}

class RpcWire : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(RpcWire, BeastSendsTheLibraryStacksRequestBodies) {
  const auto& [library_stack, codec] = GetParam();
  const auto library = requests_on(library_stack, codec);
  const auto beast = requests_on("beast", codec);
  for (const auto& call : calls()) {
    SCOPED_TRACE(call.name);
    const Request& expected = library.at(call.name);
    const Request& actual = beast.at(call.name);
    EXPECT_EQ(actual.line, expected.line);
    // The one header that is part of the protocol (SOAP 1.1), not the stack.
    EXPECT_EQ(actual.soap_action, expected.soap_action);
    EXPECT_FALSE(expected.body.empty());
    EXPECT_EQ(without_mime_boundary(actual.body), without_mime_boundary(expected.body));
  }
}

INSTANTIATE_TEST_SUITE_P(
    RpcCodecs, RpcWire,
    ::testing::Values(std::pair<std::string, std::string>{"gsoap", "soap"},
                      std::pair<std::string, std::string>{"gsoap", "soap-mtom"},
                      std::pair<std::string, std::string>{"gsoap", "soap-swa"},
                      std::pair<std::string, std::string>{"xmlrpc-c", "xmlrpc"}),
    [](const auto& p) {
      std::string name = p.param.second;
      for (auto& c : name)
        if (c == '-') c = '_';
      return name;
    });

}  // namespace
}  // namespace wsb
