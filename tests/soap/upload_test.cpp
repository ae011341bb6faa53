// E9's upload: the receipt the service answers with (known values, and that
// a wrong byte, a wrong double or a wrong count changes it), and the gsoap
// client uploading a binary and GML in each SOAP variant, the server
// receiving exactly what was sent.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/payload.h"
#include "common/service.h"
#include "common/transport.h"
#include "stack_fixture.h"

namespace wsb {
namespace {

// Worked out independently (Python): the length as a little-endian uint64
// word, then the bytes, a word at a time and the tail byte by byte, each
// step h = (h ^ v) * 0x100000001b3 from 0xcbf29ce484222325.
TEST(UploadReceipt, KnownValues) {
  EXPECT_EQ(upload_receipt(Binary{}), "0 af63bd4c8601b7df");
  EXPECT_EQ(upload_receipt(Binary{{1, 2, 3}}), "3 f5d06a87f8f19736");
  EXPECT_EQ(upload_receipt(Binary{{1, 2, 4}}), "3 f5d06d87f8f19c4f");
  EXPECT_EQ(upload_receipt(Binary{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}), "11 b846cb44128af0f7");
}

TEST(UploadReceipt, ADifferentPayloadHasADifferentReceipt) {
  const Payload binary = generate({Kind::binary, 1 << 20});
  Payload flipped = binary;
  std::get<Binary>(flipped).data[12345] ^= 1;
  EXPECT_NE(upload_receipt(binary), upload_receipt(flipped));
  Payload shorter = binary;
  std::get<Binary>(shorter).data.pop_back();
  EXPECT_NE(upload_receipt(binary), upload_receipt(shorter));

  const Payload gml = generate({Kind::gml, 10});
  Payload moved = gml;
  auto& x = std::get<BuildingCollection>(moved).buildings[3].footprint[1].x;
  x = std::nextafter(x, 1e300);  // one ulp: a decode that rounds fails
  EXPECT_NE(upload_receipt(gml), upload_receipt(moved));
  Payload renamed = gml;
  std::get<BuildingCollection>(renamed).buildings[9].name += "x";
  EXPECT_NE(upload_receipt(gml), upload_receipt(renamed));
}

TEST(UploadReceipt, TheServiceAnswersWithTheReceiptAndRecordsTheRequest) {
  Service service;
  service.record_requests(true);
  const Payload gml = generate({Kind::gml, 100});
  EXPECT_EQ(service.upload(gml), upload_receipt(gml));
  EXPECT_EQ(service.last_request(), gml);
}

class GsoapUpload : public ::testing::TestWithParam<testing::StackCodec> {};

TEST_P(GsoapUpload, TheServerReceivesWhatWasSentAndSaysSo) {
  Service service;
  service.record_requests(true);
  const StackEntry& stack = find_stack(GetParam().stack);
  const auto server = stack.start_server(service, ServerOptions{});
  const auto client = stack.connect(server->endpoint(), GetParam().codec);
  for (const PayloadSpec spec : {PayloadSpec{Kind::binary, 1 << 20}, PayloadSpec{Kind::gml, 10},
                                 PayloadSpec{Kind::gml, 1000}}) {
    const Payload sent = generate(spec);
    EXPECT_EQ(client->upload(sent), upload_receipt(sent)) << spec.label();
    EXPECT_EQ(service.last_request(), sent) << spec.label();
  }
  // The connection goes on serving other operations.
  EXPECT_EQ(client->ping(), kPingReply);
}

INSTANTIATE_TEST_SUITE_P(Variants, GsoapUpload,
                         ::testing::ValuesIn(testing::every_stack_codec(
                             [](const testing::StackCodec& c) { return c.stack == "gsoap"; })),
                         [](const auto& combo) { return testing::test_name(combo.param); });

// A stack that does not map it says so, rather than timing something else.
TEST(Upload, UnmappedStacksRefuse) {
  Service service;
  const auto server = find_stack("beast").start_server(service, ServerOptions{});
  const auto client = find_stack("beast").connect(server->endpoint(), "json");
  EXPECT_THROW(client->upload(Binary{{1}}), CallError);
}

}  // namespace
}  // namespace wsb
