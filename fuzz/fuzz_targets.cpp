// The codec targets (decode-<codec>, read-<codec>), one per codec of the
// registry, and the registry of all targets.
#include "fuzz_targets.h"

#include <charconv>
#include <memory>
#include <string>
#include <utility>

#include "common/codec.h"
#include "common/payload.h"
#include "target_parts.h"

namespace wsb::fuzz {

ServiceLimits service_limits() {
  ServiceLimits limits;
  limits.max_array_items = 1000;
  limits.max_records = 100;
  limits.max_binary_bytes = 64 * 1024;
  limits.max_buildings = 100;
  limits.max_primes = 10'000;
  limits.max_queues = 100;
  limits.max_messages_per_queue = 100;
  limits.max_cached_payload_bytes = 1 << 20;
  limits.max_cached_payloads = 16;
  return limits;
}

ServerLimits server_limits() {
  ServerLimits limits;
  limits.max_body_bytes = 1 << 20;
  return limits;
}

std::vector<Payload> seed_payloads() {
  std::vector<Payload> out;
  for (const char* label : {"text", "ints/5", "strings/4:escaped", "objects/3:escaped",
                            "message-a/2:escaped", "message-b/48", "binary/40", "gml/1"})
    out.push_back(generate(parse_spec(label)));
  Message message = std::get<Message>(generate(parse_spec("message-a/1")));
  out.push_back(MessageList{{message, message}});
  return out;
}

std::vector<CallArgs> seed_calls(const std::vector<Payload>& payloads, const Message& message) {
  std::vector<CallArgs> calls = {
      {Operation::ping},
      {Operation::get, parse_spec("ints/5")},
      {Operation::get, parse_spec("message-a/1:escaped")},
      {Operation::register_client},
      {.op = Operation::send_message, .queue = "1", .message = &message},
      {.op = Operation::receive_messages, .queue = "1"},
      {.op = Operation::unregister_client, .queue = "1"},
      {.op = Operation::primes, .n = 20},
  };
  for (const auto& payload : payloads)
    if (!std::holds_alternative<MessageList>(payload))
      calls.push_back({.op = Operation::echo, .payload = &payload});
  return calls;
}

std::string http_post(std::string_view path, std::string_view content_type,
                      std::string_view extra_headers, std::string_view body) {
  std::string out = "POST " + std::string(path) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  out += "Content-Type: " + std::string(content_type) + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += extra_headers;
  out += "\r\n";
  out += body;
  return out;
}

std::vector<std::string> rpc_requests(const CodecEntry& codec, std::string_view extra_headers) {
  const auto payloads = seed_payloads();
  const Message message = std::get<Message>(generate(parse_spec("message-b/32")));
  auto rpc = codec.make_rpc();
  const auto [name, value] = rpc->call_header();
  std::string headers(extra_headers);
  if (!name.empty()) headers += std::string(name) + ": " + std::string(value) + "\r\n";
  std::vector<std::string> out;
  std::string body;
  for (const auto& call : seed_calls(payloads, message)) {
    if (call.payload != nullptr && !codec.make()->unsupported(*call.payload).empty()) continue;
    rpc->encode_call(call, body);
    out.push_back(http_post(rpc->path(), rpc->call_content_type(), headers, body));
  }
  return out;
}

void check_http_reply(std::string_view target, std::string_view reply) {
  // "HTTP/1.1 200 OK"
  unsigned status = 0;
  if (reply.size() >= 12 && reply.starts_with("HTTP/1."))
    std::from_chars(reply.data() + 9, reply.data() + 12, status);
  if (status < 100 || status >= 600)
    throw PropertyViolation(std::string(target) +
                            ": the reply is not HTTP: " + std::string(reply.substr(0, 80)));
  // SOAP 1.1 faults travel with 500 (fault_status()): one that blames the
  // client is its 4xx.
  const bool client_fault = reply.find(":Client</faultcode>") != std::string_view::npos ||
                            reply.find(":Sender</") != std::string_view::npos;
  // 501 and 505 are HTTP's answers to what a client asks and the server
  // does not implement (a transfer coding, a major version).
  const bool not_implemented = status == 501 || status == 505;
  if (status >= 500 && !not_implemented && !(status == 500 && client_fault))
    throw PropertyViolation(std::string(target) + ": a client's bytes got a server error: " +
                            std::string(reply.substr(0, 400)));
}

namespace {

// The dictionary of a codec's wire format.
std::string dictionary_of(const std::string& codec) {
  if (codec.starts_with("json")) return "json.dict";
  if (codec == "protobuf" || codec == "text") return "";
  if (codec == "xmlrpc") return "xmlrpc.dict";
  if (codec.starts_with("soap")) return "soap.dict";
  return "xml.dict";
}

std::vector<std::string> encoded_seeds(const CodecEntry& entry) {
  auto codec = entry.make();
  std::vector<std::string> out;
  for (const auto& payload : seed_payloads()) {
    if (!codec->unsupported(payload).empty()) continue;
    out.emplace_back();
    codec->encode(payload, out.back());
  }
  return out;
}

// decode(encode(decode(x))) == decode(x): what a codec accepts, it can write
// back and read again unchanged (doubles within its declared fidelity).
void decode_round_trip(const CodecEntry& entry, std::string_view input) {
  auto codec = entry.make();
  Payload first;
  try {
    codec->decode(input, first);
  } catch (const DecodeError&) {
    return;
  }
  // Accepted, yet not writable by this codec (e.g. xmlrpc-c and 4-byte
  // UTF-8): the codec says so itself rather than failing to encode.
  if (!codec->unsupported(first).empty()) return;
  std::string wire;
  codec->encode(first, wire);
  Payload second;
  try {
    codec->decode(wire, second);
  } catch (const DecodeError& e) {
    throw PropertyViolation(entry.name +
                            ": its own encoding of a decoded payload is refused: " + e.what());
  }
  const std::string difference = describe_difference(first, second, codec->double_fidelity());
  if (!difference.empty())
    throw PropertyViolation(entry.name +
                            ": a decoded payload changed in a round trip: " + difference);
}

// read then unbind accepts exactly what decode accepts, with the same
// result: the stages the benchmarks time are the decoder.
void read_matches_decode(const CodecEntry& entry, std::string_view input) {
  auto staged = entry.make();
  CodecStages& stages = *staged->stages();
  Payload by_stages;
  bool stages_accept = true;
  try {
    stages.read(input);
    stages.unbind(by_stages);
  } catch (const DecodeError&) {
    stages_accept = false;
  }
  auto whole = entry.make();
  Payload decoded;
  bool decode_accepts = true;
  try {
    whole->decode(input, decoded);
  } catch (const DecodeError&) {
    decode_accepts = false;
  }
  if (stages_accept != decode_accepts)
    throw PropertyViolation(entry.name + ": read+unbind " +
                            (stages_accept ? "accepts" : "refuses") + " what decode " +
                            (decode_accepts ? "accepts" : "refuses"));
  if (!stages_accept) return;
  const std::string difference = describe_difference(decoded, by_stages, whole->double_fidelity());
  if (!difference.empty())
    throw PropertyViolation(entry.name + ": read+unbind differs from decode: " + difference);
}

std::vector<FuzzTarget> codec_targets() {
  std::vector<FuzzTarget> out;
  for (const auto& entry : all_codecs()) {
    out.push_back({"decode-" + entry.name,
                   "decode of the " + entry.name + " codec; what decodes survives a round trip",
                   dictionary_of(entry.name),
                   [&entry](std::string_view input) { decode_round_trip(entry, input); },
                   [&entry] { return encoded_seeds(entry); }});
    const auto codec = entry.make();
    if (codec->stages() != nullptr && codec->stages()->splits_decode())
      out.push_back({"read-" + entry.name,
                     "read (bytes -> the library's representation) and unbind of the " +
                         entry.name + " codec; they agree with decode",
                     dictionary_of(entry.name),
                     [&entry](std::string_view input) { read_matches_decode(entry, input); },
                     [&entry] { return encoded_seeds(entry); }});
  }
  return out;
}

}  // namespace

const std::vector<FuzzTarget>& all_fuzz_targets() {
  static const std::vector<FuzzTarget> targets = [] {
    std::vector<FuzzTarget> out = codec_targets();
    out.push_back(beast_request_target());
    for (auto& target : gsoap_targets()) out.push_back(std::move(target));
    for (auto& target : xmlrpc_targets()) out.push_back(std::move(target));
    return out;
  }();
  return targets;
}

const FuzzTarget* find_fuzz_target(std::string_view name) {
  for (const auto& target : all_fuzz_targets())
    if (target.name == name) return &target;
  return nullptr;
}

}  // namespace wsb::fuzz
