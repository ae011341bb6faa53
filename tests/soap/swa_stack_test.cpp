// soap-swa over both stacks that carry it (gsoap, and beast's common
// transport): binaries and GML documents travel as raw MIME parts of a
// SOAP with Attachments package both ways, referenced by href="cid:...",
// and a package whose reference finds no part gets a SOAP Fault while the
// server goes on serving.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/base64.h"
#include "common/codec.h"
#include "common/rpc_binding.h"
#include "common/service.h"
#include "common/transport.h"
#include "harness/byte_relay.h"
#include "raw_http.h"

namespace wsb {
namespace {

using testing::RawConnection;
using testing::RawResponse;
using testing::roundtrip;

struct Wire {
  std::string request, response;
};

class SwaStack : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { service_ = new Service(); }
  static void TearDownTestSuite() {
    delete service_;
    service_ = nullptr;
  }
  void SetUp() override {
    server_ = find_stack(GetParam()).start_server(*service_, ServerOptions{});
  }

  // One client's calls through a capturing relay: all request and response
  // bytes.
  template <class Call>
  Wire on_the_wire(Call call) {
    ByteRelay relay(server_->endpoint());
    relay.set_capture(true);
    const auto client = find_stack(GetParam()).connect(relay.endpoint(), "soap-swa");
    relay.reset();
    call(*client);
    return {relay.captured_to_server(), relay.captured_to_client()};
  }

  // A soap-swa call as a third party would POST it, with the header the
  // common transport picks the codec by (the gsoap server ignores it).
  std::string post(const std::string& body, const std::string& content_type) const {
    return "POST / HTTP/1.1\r\nHost: " + server_->endpoint().to_string() +
           "\r\nContent-Type: " + content_type +
           "\r\nSOAPAction: \"\"\r\nX-Wsbench-Codec: soap-swa\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }

  static inline Service* service_ = nullptr;
  std::unique_ptr<Server> server_;
};

// The head of the first HTTP message in `stream` says multipart/related with
// a text/xml root (SwA), not application/xop+xml (MTOM).
bool is_swa_package(const std::string& stream) {
  const std::string head = stream.substr(0, stream.find("\r\n\r\n"));
  return head.find("multipart/related") != std::string::npos &&
         head.find("type=\"text/xml\"") != std::string::npos &&
         head.find("xop+xml") == std::string::npos;
}

bool contains_raw(const std::string& wire, const Bytes& bytes) {
  // A 64-byte run from the middle: present only if sent unencoded.
  const std::string run(bytes.begin() + bytes.size() / 2, bytes.begin() + bytes.size() / 2 + 64);
  return wire.find(run) != std::string::npos;
}

TEST_P(SwaStack, BinariesTravelAsMimePartsBothWays) {
  const Payload b = generate(parse_spec("message-b/128KiB"));
  const Bytes& attachment = std::get<Message>(b).attachment;
  const std::string base64_run = base64_encode(Bytes(attachment.begin(), attachment.begin() + 48));
  const Wire echo = on_the_wire([&](Client& c) {
    Payload out;
    c.echo(b, out);
    EXPECT_TRUE(out == b);
  });
  for (const std::string* stream : {&echo.request, &echo.response}) {
    EXPECT_TRUE(is_swa_package(*stream)) << stream->substr(0, 400);
    EXPECT_TRUE(contains_raw(*stream, attachment));
    EXPECT_EQ(stream->find(base64_run), std::string::npos);
    EXPECT_NE(stream->find("<wsb:attachment href=\"cid:attachment-1\">"), std::string::npos);
    EXPECT_NE(stream->find("Content-ID: <attachment-1>"), std::string::npos);
  }
  // A reply without binaries is plain SOAP even to an SwA request.
  const Wire ping = on_the_wire([](Client& c) { EXPECT_EQ(c.ping(), kPingReply); });
  EXPECT_TRUE(is_swa_package(ping.request));
  EXPECT_NE(ping.response.find("Content-Type: text/xml"), std::string::npos);
}

TEST_P(SwaStack, BuildingsTravelAsAnAttachedGmlDocument) {
  const Payload gml = generate(parse_spec("gml/10"));
  const Wire get = on_the_wire([&](Client& c) {
    Payload out;
    c.get(parse_spec("gml/10"), out);
    EXPECT_TRUE(out == gml);
    c.echo(gml, out);
    EXPECT_TRUE(out == gml);
  });
  EXPECT_TRUE(is_swa_package(get.response));
  EXPECT_NE(get.response.find("<wsb:buildingsDocument href=\"cid:attachment-1\">"),
            std::string::npos);
  EXPECT_NE(get.response.find("Content-Type: application/gml+xml"), std::string::npos);
  EXPECT_NE(get.request.find("Content-Type: application/gml+xml"), std::string::npos);
}

TEST_P(SwaStack, MalformedPackagesGetASoapFaultAndServingGoesOn) {
  // A well-formed echo call, then the same package broken two ways.
  const auto rpc = find_codec("soap-swa").make_rpc();
  const Payload binary = generate(parse_spec("binary/1KiB"));
  CallArgs call;
  call.op = Operation::echo;
  call.payload = &binary;
  std::string body;
  rpc->encode_call(call, body);
  const std::string content_type = rpc->call_content_type();
  const auto part = body.find("\r\n--", body.find("</SOAP-ENV:Envelope>"));
  ASSERT_NE(part, std::string::npos);
  const std::string boundary = body.substr(part + 4, body.find("\r\n", part + 4) - part - 4);

  RawConnection good(server_->endpoint());
  EXPECT_EQ(roundtrip(good, post(body, content_type)).status, 200);

  const std::string wrong_cid =
      std::string(body).replace(body.find("cid:attachment-1"), 16, "cid:attachment-9");
  const std::string missing_part = body.substr(0, part) + "\r\n--" + boundary + "--\r\n";
  for (const std::string* broken : {&wrong_cid, &missing_part}) {
    RawConnection c(server_->endpoint());
    const RawResponse r = roundtrip(c, post(*broken, content_type));
    EXPECT_EQ(r.status, 500) << r.head;
    EXPECT_NE(r.body.find("Fault>"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find("missing attachment"), std::string::npos) << r.body;
  }
  const auto client = find_stack(GetParam()).connect(server_->endpoint(), "soap-swa");
  EXPECT_EQ(client->ping(), kPingReply);
}

INSTANTIATE_TEST_SUITE_P(Stacks, SwaStack, ::testing::Values("gsoap", "beast"),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace wsb
