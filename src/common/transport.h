// Servers and clients: every protocol stack sits behind these interfaces.
//
// A stack is one HTTP implementation (gSOAP's engine, xmlrpc-c's Abyss and
// curl, Boost.Beast) carrying one or more codecs. Each exposes the same
// operations, backed by one wsb::Service.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/payload.h"
#include "common/phases.h"
#include "common/server_concurrency.h"

namespace wsb {

class Service;

struct Endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string to_string() const { return host + ":" + std::to_string(port); }
};

// Parses "HOST:PORT" (PORT may be 0 for an ephemeral port); throws
// std::invalid_argument.
Endpoint parse_endpoint(const std::string& text);

// A call the server refused or the transport failed: carries the
// protocol's own error (HTTP status, SOAP faultstring, XML-RPC fault).
class CallError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Named limits a server enforces on what it reads.
struct ServerLimits {
  // Largest request body accepted: a 64 MiB binary as base64 in an
  // envelope is about 90 MiB, so 128 MiB leaves room and stops runaway
  // uploads. Over it: HTTP 413 (or the protocol's fault).
  std::size_t max_body_bytes = std::size_t{128} << 20;
  // Request line and header fields, and the number of fields: generous
  // for this API (its longest field is a SOAP Content-Type). Over either:
  // HTTP 431 where the stack's library lets us see it (docs/servers/limits.md).
  std::size_t max_header_bytes = 16 * 1024;
  std::size_t max_header_fields = 100;
  // Idle keep-alive connections are closed after this long.
  int keepalive_timeout_s = 60;
  // A connection that has waited this long for its next request gives back
  // the buffers a large body made it keep (beast, beast-tls; the other
  // stacks allocate per request). Back-to-back calls keep them. 0: never.
  int idle_release_ms = 2000;
};

struct ServerOptions {
  Endpoint listen;         // port 0: ephemeral
  std::optional<int> cpu;  // pin every server thread to this vCPU
  ServerLimits limits;
  ServerConcurrency concurrency;
};

class Server {
 public:
  virtual ~Server() = default;
  // Where it listens (the ephemeral port resolved).
  virtual Endpoint endpoint() const = 0;
  // Stops accepting, closes connections, joins threads. Idempotent.
  virtual void stop() = 0;
};

// One connection to one server, speaking one codec. Calls are synchronous
// and keep the connection alive; a client never reconnects silently (a
// dropped connection is a CallError). Not thread-safe.
class Client {
 public:
  virtual ~Client() = default;

  virtual std::string ping() = 0;
  virtual void get(const PayloadSpec& spec, Payload& out) = 0;
  virtual void echo(const Payload& in, Payload& out) = 0;
  virtual std::string register_client() = 0;
  virtual void send_message(const std::string& queue, const Message& message) = 0;
  virtual void receive_messages(const std::string& queue, std::vector<Message>& out) = 0;
  virtual void unregister_client(const std::string& queue) = 0;
  virtual std::string primes(std::uint32_t n) = 0;
  // E8's dictionary: a word's definition (a word it lacks is a CallError:
  // HTTP 404, a SOAP Fault, XML-RPC fault 404), and insert-or-replace.
  virtual std::string define(const std::string& word) = 0;
  virtual void put(const std::string& word, const std::string& definition) = 0;
  // E9's upload: sends `payload`, returns the server's receipt
  // (upload_receipt() of what it decoded, common/service.h). Mapped on the
  // gSOAP stacks only, where E9 runs; elsewhere a CallError.
  virtual std::string upload(const Payload& /*payload*/) {
    throw CallError("upload: not mapped on this stack");
  }

  // Client points of the last call (kInvoke, kRequestWritten,
  // kResponseReceived, kDecoded); 0 where the stack exposes none or probes
  // are off.
  virtual const Timeline& last_timeline() const = 0;

  // The local port of the connection, once open (0 if not yet, or if the
  // library does not expose its socket): an in-process server's points are
  // found by it (ServerPointsReader).
  virtual std::uint16_t local_port() const { return 0; }

  // Asks the server to report its phases with every reply (a Server-Timing
  // header), for servers whose points are out of reach; false if the stack
  // cannot.
  virtual bool request_server_timing() { return false; }
  // The server's phases of the last call as its reply reported them.
  virtual std::optional<ServerDurations> last_server_timing() const { return std::nullopt; }
};

struct StackEntry {
  std::string name;  // "gsoap", "xmlrpc-c", "beast"
  std::string description;
  std::vector<std::string> codecs;  // codec names it can carry
  std::function<std::unique_ptr<Server>(Service&, const ServerOptions&)> start_server;
  std::function<std::unique_ptr<Client>(const Endpoint&, const std::string& codec)> connect;
  // Its library sizes its own thread pool by load and keeps what it grew
  // until the server stops (gRPC's executor): a case's connections are
  // then released when its descriptors are, whatever the thread count;
  // stopping the server must still end every thread.
  bool library_thread_pool = false;
};

// Every stack wsbench knows (src/stacks.cpp).
const std::vector<StackEntry>& all_stacks();
// Throws std::invalid_argument for an unknown name.
const StackEntry& find_stack(const std::string& name);

// Parses "STACK=HOST:PORT" (the --listen and --target options) into the
// registered stack's name and the endpoint; throws std::invalid_argument.
std::pair<std::string, Endpoint> parse_stack_endpoint(const std::string& text);

}  // namespace wsb
