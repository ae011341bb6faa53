// The XML-RPC API of the xmlrpc-c stack, shared by its server and client:
// method names, the path, and the faults the methods answer with.
//
// The service at /RPC2 (xmlrpc-c's registry adds the system.* methods,
// system.multicall among them):
//   wsbench.ping() -> "pong"
//   wsbench.get(label: string, e.g. "ints/3200") -> payload value
//   wsbench.echo(payload value) -> the same payload value
//   wsbench.registerClient() -> queue id: string
//   wsbench.sendMessage(queue: string, message struct) -> true
//   wsbench.receiveMessages(queue: string) -> {messages: [message struct...]}
//   wsbench.unregisterClient(queue: string) -> true
//   wsbench.primes(n: i4, or i8 above 2^31 - 1) -> "FIRST n numbers: ..."
//   wsbench.define(word: string) -> definition: string (fault 404 if none)
//   wsbench.put(word: string, definition: string) -> true
// A payload value is the codec's response value: a struct whose one member
// names the kind (src/xmlrpc/xmlrpc_codec.cpp has the table). Calls to
// /RPC2?int64=string get its 64-bit fields as decimal strings, for clients
// that cannot send <i8> back (Int64Form, xmlrpc_mapping.h).
#pragma once

#include <string>

#include "common/transport.h"

namespace wsb::xmlrpc {

inline constexpr const char* kPing = "wsbench.ping";
inline constexpr const char* kGet = "wsbench.get";
inline constexpr const char* kEcho = "wsbench.echo";
inline constexpr const char* kRegisterClient = "wsbench.registerClient";
inline constexpr const char* kSendMessage = "wsbench.sendMessage";
inline constexpr const char* kReceiveMessages = "wsbench.receiveMessages";
inline constexpr const char* kUnregisterClient = "wsbench.unregisterClient";
inline constexpr const char* kPrimes = "wsbench.primes";
inline constexpr const char* kDefine = "wsbench.define";
inline constexpr const char* kPut = "wsbench.put";

inline constexpr const char* kRpcPath = "/RPC2";

// faultCodes of the methods' faults, one per kind of refusal (xmlrpc-c's
// own faults keep its negative codes: -506 unknown method, -503 a call that
// is not valid XML-RPC, -501 and -502 for system.* misuse).
inline constexpr int kFaultBadRequest = 400;  // ServiceError::bad_request, and
                                              // parameters that do not fit the method
inline constexpr int kFaultNotFound = 404;    // ServiceError::not_found (unknown queue or word)
inline constexpr int kFaultTooLarge = 413;    // ServiceError::too_large (a service limit)
inline constexpr int kFaultInternal = -500;   // XMLRPC_INTERNAL_ERROR: a bug on our side
// A call the server's guard refuses before xmlrpc-c parses it (see
// xmlrpc_guard.cpp): XMLRPC_PARSE_ERROR, as xmlrpc-c answers calls it
// cannot parse.
inline constexpr int kFaultUnparseable = -503;

// An XML-RPC fault, as the client reports it: a CallError whose message is
// "XML-RPC fault <code>: <faultString>", with the code kept apart.
class FaultError : public CallError {
 public:
  FaultError(int code, const std::string& fault_string)
      : CallError("XML-RPC fault " + std::to_string(code) + ": " + fault_string), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

}  // namespace wsb::xmlrpc
