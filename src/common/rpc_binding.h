// The RPC binding: how a protocol with its own request format (SOAP,
// XML-RPC) puts a call of one of the Service's operations on the wire and
// back. A codec that offers one (CodecEntry::make_rpc) is carried on the
// common transport as its library stack carries it: every operation is a
// POST of the protocol's call document to one path, answered by its reply
// or fault document. The beast client and server know only this interface.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/payload.h"

namespace wsb {

enum class Operation : std::uint8_t {
  ping,
  get,
  echo,
  register_client,
  send_message,
  receive_messages,
  unregister_client,
  primes,
  define,
  put,
};

// A call as the client makes it: views of the caller's arguments, so
// encoding one copies nothing into an intermediate model. Only the fields
// of `op` are read.
struct CallArgs {
  Operation op = Operation::ping;
  PayloadSpec spec{};                // get
  std::uint32_t n = 0;               // primes
  std::string_view queue{};          // send_message, receive_messages, unregister_client
  const Payload* payload = nullptr;  // echo
  const Message* message = nullptr;  // send_message
  std::string_view word{};           // define, put
  std::string_view definition{};     // put
};

// A call as the server decodes it, in the model.
struct DecodedCall {
  Operation op = Operation::ping;
  PayloadSpec spec;        // get
  std::uint32_t n = 0;     // primes
  std::string queue;       // send_message, receive_messages, unregister_client
  Payload payload;         // echo's payload, send_message's Message
  std::string word;        // define, put
  std::string definition;  // put
};

// A refusal as the server reports it: the HTTP status a REST reply would
// carry (400, 404, 413, 500), which each protocol maps onto its own fault.
struct Fault {
  unsigned status = 500;
  std::string_view message;
};

// Not thread-safe: one per connection (server) or client.
class RpcBinding {
 public:
  virtual ~RpcBinding() = default;

  // Where calls are POSTed ("/" for SOAP, "/RPC2" for XML-RPC).
  virtual std::string_view path() const = 0;

  // ---- client ----
  // A header every call carries, if the protocol has one (SOAP 1.1's
  // SOAPAction); an empty name if not.
  virtual std::pair<std::string_view, std::string_view> call_header() const { return {}; }
  // Replaces `out` with the call document; call_content_type() is then its
  // Content-Type (for MTOM it names this message's boundary).
  virtual void encode_call(const CallArgs& call, std::string& out) = 0;
  virtual std::string call_content_type() const = 0;
  // Decodes the reply to a call of `op` into `out`: Text for ping,
  // register_client (the queue id), primes and define, the payload for get
  // and echo, a MessageList for receive_messages; send_message,
  // unregister_client and put leave `out` alone. A fault throws CallError with the
  // protocol's code and text; anything malformed throws DecodeError.
  virtual void decode_reply(Operation op, std::string_view wire, Payload& out) = 0;

  // ---- server ----
  // A document the protocol publishes (SOAP: its WSDL and the schemas it
  // imports) at `target`, a GET's path and query, for a server reached as
  // `host` (the Host header); nullopt if there is none there.
  virtual std::optional<std::string> document(std::string_view /*target*/,
                                              std::string_view /*host*/) {
    return std::nullopt;
  }
  // The query of the call's URL (after the '?', may be empty), given before
  // each decode_call: options of the reply (XML-RPC: "int64=string").
  // Throws DecodeError for one the protocol does not know.
  virtual void set_call_query(std::string_view /*query*/) {}
  // Replaces `out` with the call in `wire`; throws DecodeError.
  virtual void decode_call(std::string_view wire, DecodedCall& out) = 0;
  // Replaces `out` with the reply to `op` carrying `result` (what
  // decode_reply returns; ignored for send_message, unregister_client and put).
  virtual void encode_reply(Operation op, const Payload& result, std::string& out) = 0;
  virtual void encode_fault(const Fault& fault, std::string& out) = 0;
  // Content-Type of the last encode_reply or encode_fault.
  virtual std::string reply_content_type() const = 0;
  // The HTTP status a fault travels with (SOAP 1.1: 500; XML-RPC: 200).
  virtual unsigned fault_status() const = 0;
};

}  // namespace wsb
