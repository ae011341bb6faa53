// Hostile input, one table: each row is a class of malformed or hostile
// request x a stack (and, for what lives in the body, a codec it carries),
// with the answer the server must give. Each row sends raw bytes to an
// in-process server, checks the answer, then checks that a new connection
// is served. The table of docs/servers/hostile-input.md ("Hostile input
// classes tried") is this table; a test keeps the two equal.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/codec.h"
#include "common/rpc_binding.h"
#include "common/service.h"
#include "common/transport.h"
#include "docs_table.h"
#include "raw_http.h"
#include "stack_fixture.h"

namespace wsb {
namespace {

using testing::RawConnection;
using testing::RawResponse;

// What the server must answer: an HTTP status, or kRefusal, the protocol's
// refusal of a request it could read (REST 400, SOAP Fault, XML-RPC fault).
using Answer = int;
constexpr Answer kRefusal = 0;

// ---- the bodies ----

// Markers the hostile bytes replace in a valid echo request; each as long
// as the text that replaces it where the codec is length-prefixed
// (protobuf).
constexpr std::string_view kTextMarker = "HOSTILE-MARKER-0019";
constexpr std::int32_t kIntMarker = 12345678;
const Bytes kBinaryMarker = {'w', 's', 'b', 'e', 'n', 'c', 'h', '!'};
constexpr std::string_view kBinaryMarkerBase64 = "d3NiZW5jaCE=";

Payload text_payload() { return Text{std::string(kTextMarker)}; }
Payload object_payload() { return ObjectArray{{Object{kIntMarker, "name", 1.5, true}}}; }
Payload binary_payload() { return Binary{kBinaryMarker}; }

std::string replace_once(std::string body, std::string_view what, std::string_view with) {
  const auto at = body.find(what);
  if (at == std::string::npos) throw std::logic_error("marker not in the request");
  return body.replace(at, what.size(), with);
}

// Where the document's root element starts (a DOCTYPE goes before it).
std::size_t root_element(std::string_view codec, std::string_view body) {
  // Not the MIME part's Content-ID, <SOAP-ENV:Envelope>.
  const auto soap = body.find(":Envelope ");
  if (codec.starts_with("soap") && soap != std::string_view::npos) return body.rfind('<', soap);
  for (std::size_t at = body.find('<'); at != std::string_view::npos; at = body.find('<', at + 1))
    if (std::isalpha(static_cast<unsigned char>(body[at + 1]))) return at;
  throw std::logic_error("no root element");
}

bool is_xml(std::string_view codec) {
  return codec.starts_with("soap") || codec.starts_with("xml");
}

// text/plain has no fields, types or markup to abuse; only its UTF-8.
bool has_fields(std::string_view codec) { return !find_codec(codec).texts_only; }

// Codecs whose client sends binaries as base64 text (soap-mtom and soap-swa
// send them as MIME parts; protobuf as bytes).
bool carries_base64(std::string_view codec) {
  return has_fields(codec) && codec != "protobuf" && codec != "soap-mtom" && codec != "soap-swa";
}

// ---- the table ----

struct Row {
  std::string klass;  // HostileClass::id
  std::string stack;
  std::string codec;  // empty: the class is about HTTP, not the body
  Answer answer;
};

// A class: what it is, where it applies, and how its request is made from
// the request `make` builds for a payload (the stack's own client's echo).
struct HostileClass {
  std::string id;    // in test names
  std::string name;  // in docs/servers/hostile-input.md
  // Whether it applies to a codec; null: an HTTP-level class (one row per
  // stack).
  std::function<bool(std::string_view codec)> applies;
  Answer answer;
  // Stacks whose library answers otherwise, where no hook of ours comes
  // first (docs/servers/limits.md says why).
  std::map<std::string, Answer> except = {};
};

const std::vector<HostileClass>& classes() {
  static const std::vector<HostileClass> all = {
      {"garbage", "garbage bytes instead of a request line", nullptr, 400},
      {"truncated", "body cut off mid-way, then the close", nullptr, 400, {{"xmlrpc-c", 408}}},
      {"bad_chunked", "bad chunked encoding", nullptr, 400, {{"xmlrpc-c", 411}}},
      {"length_negative", "Content-Length -1", nullptr, 400},
      {"length_not_a_number", "Content-Length abc", nullptr, 400},
      {"length_10GB", "Content-Length 10 GB (body never sent)", nullptr, 413},
      {"header_64KiB", "header field of 64 KiB", nullptr, 431},
      {"header_1000_fields", "1,000 header fields", nullptr, 431},
      {"utf8_stray", "invalid UTF-8 (a stray 0xFF)", [](auto) { return true; }, kRefusal},
      {"utf8_overlong", "overlong UTF-8 (`..\\xc0\\xaf` for `../`)", [](auto) { return true; },
       kRefusal},
      {"json_nan", "NaN and Infinity in JSON", [](auto c) { return c == "json"; }, kRefusal},
      {"int_range", "integer out of range (2^40 for an int32; JSON: beyond 64 bits)",
       [](auto c) { return has_fields(c) && c != "protobuf"; }, kRefusal},
      {"base64", "bad base64", carries_base64, kRefusal},
      {"base64_after_padding", "base64 with data after its padding (`AAA=A`)", carries_base64,
       kRefusal},
      {"base64_surplus_padding", "base64 with three `=` (`A===`)", carries_base64, kRefusal},
      {"wrong_type", "wrong type (a string for an integer)",
       [](auto c) { return has_fields(c) && c != "protobuf"; }, kRefusal},
      {"markup", "markup inside a string field", [](auto c) { return is_xml(c); }, kRefusal},
      {"billion_laughs", "billion laughs (DTD entity expansion)", [](auto c) { return is_xml(c); },
       kRefusal},
      {"xxe", "external entity (XXE)", [](auto c) { return is_xml(c); }, kRefusal},
  };
  return all;
}

std::vector<Row> rows() {
  std::vector<Row> out;
  for (const auto& k : classes())
    for (const auto& stack : all_stacks()) {
      if (!testing::speaks_http1(stack.name)) continue;  // testing::kNotHttp1
      if (!k.applies) {
        const auto other = k.except.find(stack.name);
        out.push_back({k.id, stack.name, "", other == k.except.end() ? k.answer : other->second});
        continue;
      }
      for (const auto& codec : stack.codecs)
        if (k.applies(codec)) out.push_back({k.id, stack.name, codec, k.answer});
    }
  return out;
}

// ---- requests ----

// An echo request as the stack's client sends it, split so a row can
// change the body and the framing.
struct EchoRequest {
  std::string start;  // request line and the fields but Content-Length
  std::string body;
  std::unique_ptr<RpcBinding> rpc;  // null for REST
};

// The codec an HTTP-level row speaks: the stack's first.
std::string http_codec(const Row& row) {
  return row.codec.empty() ? find_stack(row.stack).codecs.front() : row.codec;
}

EchoRequest echo_request(const Row& row, const Endpoint& at, const Payload& payload) {
  const std::string codec_name = http_codec(row);
  const CodecEntry& entry = find_codec(codec_name);
  EchoRequest r;
  std::string path = "/echo";
  std::string headers;
  if (entry.make_rpc) {
    r.rpc = entry.make_rpc();
    r.rpc->encode_call({.op = Operation::echo, .payload = &payload}, r.body);
    path = std::string(r.rpc->path());
    headers = "Content-Type: " + r.rpc->call_content_type() + "\r\n";
    if (const auto [name, value] = r.rpc->call_header(); !name.empty())
      headers += std::string(name) + ": " + std::string(value) + "\r\n";
    if (row.stack == "beast") headers += "X-Wsbench-Codec: " + codec_name + "\r\n";
  } else {
    auto codec = entry.make();
    codec->encode(payload, r.body);
    headers =
        "Content-Type: " + codec->content_type() + "\r\nAccept: " + codec->content_type() + "\r\n";
  }
  r.start = "POST " + path + " HTTP/1.1\r\nHost: " + at.to_string() + "\r\n" + headers;
  return r;
}

std::string with_length(const EchoRequest& r) {
  return r.start + "Content-Length: " + std::to_string(r.body.size()) + "\r\n\r\n" + r.body;
}

std::string billion_laughs() {
  std::string dtd = "<!DOCTYPE r [<!ENTITY l0 \"lollollollollollollollollollol\">";
  for (int level = 1; level <= 9; ++level) {
    dtd += "<!ENTITY l" + std::to_string(level) + " \"";
    for (int i = 0; i < 10; ++i) dtd += "&l" + std::to_string(level - 1) + ";";
    dtd += "\">";
  }
  return dtd + "]>";
}

// The body of a class that lives in the payload, from a valid request.
std::string hostile_body(const Row& row, EchoRequest& request) {
  const std::string& k = row.klass;
  const std::string& codec = row.codec;
  auto text_request = [&](std::string_view hostile) {
    return replace_once(request.body, kTextMarker, hostile);
  };
  if (k == "utf8_stray")
    return text_request(
        "bad \xff"
        " byte in it!!");
  if (k == "utf8_overlong")
    return text_request(
        "..\xc0\xaf..\xc0\xaf"
        "etc\xc0\xaf"
        "passwd");
  if (k == "markup") return text_request("<b>bold</b>");
  if (k == "billion_laughs" || k == "xxe") {
    const bool laughs = k == "billion_laughs";
    std::string body = text_request(laughs ? "&l9;" : "&x;");
    const std::string dtd =
        laughs ? billion_laughs() : "<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>";
    return body.insert(root_element(codec, body), dtd);
  }
  const std::string marker = std::to_string(kIntMarker);
  if (k == "json_nan") {
    std::string body = request.body;
    return replace_once(replace_once(body, "1.5", "NaN"), marker, "Infinity");
  }
  if (k == "int_range")
    return replace_once(request.body, marker,
                        codec == "json" ? "184467440737095516160" : "1099511627776");
  if (k == "wrong_type") {
    std::string body = request.body;
    if (codec == "json") return replace_once(body, marker, "\"12345678\"");
    if (codec != "xmlrpc") return replace_once(body, marker, "twelve");
    // XML-RPC types its values by element: <i4>...</i4> becomes a <string>.
    const auto at_marker = body.find(marker);
    const auto open = body.rfind('<', at_marker);
    const auto close = body.find('>', at_marker) + 1;
    return body.replace(open, close - open, "<string>12345678</string>");
  }
  if (k == "base64") return replace_once(request.body, kBinaryMarkerBase64, "d3Ni!W5jaCE=");
  if (k == "base64_after_padding")
    return replace_once(request.body, kBinaryMarkerBase64, "d3NiZW5jaCE=A");
  if (k == "base64_surplus_padding")
    return replace_once(request.body, kBinaryMarkerBase64, "d3NiZW5jA===");
  throw std::logic_error("no body for class " + k);
}

// The payload whose valid request a class changes.
Payload payload_for(std::string_view klass) {
  if (klass == "json_nan" || klass == "int_range" || klass == "wrong_type") return object_payload();
  if (klass.starts_with("base64")) return binary_payload();
  return text_payload();
}

// Sends the row's request and reads the answer (status 0: none came).
RawResponse send_row(const Row& row, const Endpoint& at, const EchoRequest& valid) {
  RawConnection c(at);
  const std::string& k = row.klass;
  if (!row.codec.empty()) {
    // One request for start and body: an MTOM boundary is new per message.
    EchoRequest hostile = echo_request(row, at, payload_for(row.klass));
    hostile.body = hostile_body(row, hostile);
    return testing::roundtrip(c, with_length(hostile));
  }
  if (k == "garbage") {
    // A TLS ClientHello's first bytes, then text.
    c.send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) +
           " not HTTP at all\r\n\r\n");
  } else if (k == "truncated") {
    c.send(with_length(valid).substr(0, valid.start.size() + 40 + valid.body.size() / 2));
    c.shutdown_write();
  } else if (k == "bad_chunked") {
    c.send(valid.start + "Transfer-Encoding: chunked\r\n\r\nzz-not-hex\r\n" + valid.body +
           "\r\n0\r\n\r\n");
  } else if (k == "length_negative") {
    c.send(valid.start + "Content-Length: -1\r\n\r\n" + valid.body);
  } else if (k == "length_not_a_number") {
    c.send(valid.start + "Content-Length: abc\r\n\r\n" + valid.body);
  } else if (k == "length_10GB") {
    c.send(valid.start + "Content-Length: 10737418240\r\n\r\n");
  } else if (k == "header_64KiB") {
    c.send(valid.start + "X-Padding: " + std::string(64 * 1024, 'p') + "\r\n" +
           "Content-Length: " + std::to_string(valid.body.size()) + "\r\n\r\n" + valid.body);
  } else if (k == "header_1000_fields") {
    std::string fields;
    for (int i = 0; i < 1000; ++i) fields += "X-F" + std::to_string(i) + ": v\r\n";
    c.send(valid.start + fields + "Content-Length: " + std::to_string(valid.body.size()) +
           "\r\n\r\n" + valid.body);
  } else {
    throw std::logic_error("no request for class " + k);
  }
  return c.read_response();
}

void PrintTo(const Row& row, std::ostream* os) {
  *os << row.klass << " " << row.stack << " " << (row.codec.empty() ? "http" : row.codec);
}

std::string row_name(const Row& row) {
  return row.klass + "_" + testing::test_name({row.stack, row.codec.empty() ? "http" : row.codec});
}

class HostileInput : public ::testing::TestWithParam<Row> {};

TEST_P(HostileInput, GetsAClearErrorAndTheNextClientIsServed) {
  const Row& row = GetParam();
  Service service;
  const auto server = find_stack(row.stack).start_server(service, ServerOptions{});
  const Endpoint at = server->endpoint();
  const EchoRequest valid = echo_request(row, at, text_payload());

  const RawResponse r = send_row(row, at, valid);
  switch (row.answer) {
    default:
      EXPECT_EQ(r.status, row.answer) << r.head << "\n" << r.body;
      break;
    case kRefusal:
      if (valid.rpc) {
        EXPECT_EQ(r.status, valid.rpc->fault_status()) << r.head << "\n" << r.body;
        Payload out;
        EXPECT_THROW(valid.rpc->decode_reply(Operation::echo, r.body, out), CallError) << r.body;
      } else {
        EXPECT_EQ(r.status, 400) << r.head << "\n" << r.body;
      }
      // Never echoed back, rewritten or not.
      EXPECT_EQ(r.body.find("passwd"), std::string::npos) << r.body;
      EXPECT_EQ(r.body.find("bold"), std::string::npos) << r.body;
      break;
  }

  const auto client = find_stack(row.stack).connect(at, http_codec(row));
  Payload echoed;
  client->echo(text_payload(), echoed);
  EXPECT_EQ(describe_difference(text_payload(), echoed), "");
}

INSTANTIATE_TEST_SUITE_P(Table, HostileInput, ::testing::ValuesIn(rows()),
                         [](const auto& p) { return row_name(p.param); });

// ---- docs/servers/hostile-input.md ----

std::string answer_text(const Row& row) {
  if (row.answer != kRefusal) return std::to_string(row.answer);
  if (row.codec.starts_with("soap")) return "SOAP Fault";
  if (row.codec == "xmlrpc") return "XML-RPC fault";
  return "400";
}

// The docs' table: one line per class, one column per stack, each cell
// the answer per codec where the class is about the body.
std::string docs_table() {
  std::vector<std::string> stacks;  // those rows() tries
  for (const auto& stack : all_stacks())
    if (testing::speaks_http1(stack.name)) stacks.push_back(stack.name);
  std::ostringstream out;
  out << "| class |";
  for (const auto& stack : stacks) out << " " << stack << " |";
  out << "\n|---|";
  for (std::size_t i = 0; i < stacks.size(); ++i) out << "---|";
  out << "\n";
  const std::vector<Row> table = rows();
  for (const auto& k : classes()) {
    out << "| " << k.name << " |";
    for (const auto& stack : stacks) {
      std::string cell;
      for (const auto& row : table) {
        if (row.klass != k.id || row.stack != stack) continue;
        if (!cell.empty()) cell += ", ";
        cell += row.codec.empty() ? answer_text(row) : row.codec + ": " + answer_text(row);
      }
      out << " " << (cell.empty() ? "-" : cell) << " |";
    }
    out << "\n";
  }
  return out.str();
}

// (The suite keeps its name from when the table was in README.md.)
TEST(HostileInputReadme, TableIsTheTestTable) {
  EXPECT_TRUE(testing::page_holds_table(WSB_SOURCE_DIR "/docs/servers/hostile-input.md",
                                        "Hostile input classes tried\n", docs_table()));
}

}  // namespace
}  // namespace wsb
