// The phase model of a request/response cycle (aihkisalo-paaso II.B, E6).
//
// Eight points on one steady clock; the phases are the intervals between
// consecutive points and so add up to the round trip by construction. A
// stack that does not expose a point leaves it at 0, and the phases either
// side of it are merged (and named as merged) instead of guessed. Probes
// can be switched off (bench --no-probes): then no point costs a clock read.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

namespace wsb {

enum Mark : std::size_t {
  kInvoke,            // client: the call starts
  kRequestWritten,    // client: request encoded, about to be written. Marked
                      // before the write, not after: on one vCPU the kernel
                      // runs the woken server inside the client's send().
  kRequestReceived,   // server: request fully received
  kParsed,            // server: request in the model, service about to run
  kServiced,          // server: service returned, reply not yet bound
  kMarshalled,        // server: response encoded
  kResponseReceived,  // client: response fully received
  kDecoded,           // client: response decoded, the call returns
  kPointCount
};

// Names of the phase that ends at each point (index 0 unused).
inline constexpr std::array<const char*, kPointCount> kPhaseNames = {
    "",        "client_marshal", "request_transfer",  "server_parse",
    "service", "server_marshal", "response_transfer", "client_parse"};

using Timeline = std::array<std::int64_t, kPointCount>;

// ---- the switch ----

namespace detail {
inline std::atomic<bool> probes_on{true};
}

// Whether clients and servers mark points. Set before servers start and
// clients connect; a connection keeps what it saw when it was opened.
inline bool probes_enabled() { return detail::probes_on.load(std::memory_order_relaxed); }
void set_probes_enabled(bool on);

// A client's point: one clock read, or none with probes off.
inline void mark(Timeline& t, Mark point) {
  if (probes_enabled()) t[point] = now_ns();
}

// ---- server points ----

// The server points of one connection's latest request, and the server's
// own elapsed time for it. Written by the connection's thread only; read by
// the client after the reply has arrived, when the request's writes are
// done (one request is outstanding per connection). Atomics, not a lock:
// a reader never blocks the server.
class ProbeSlot {
 public:
  // A request was read whole at `received_ns`: clears the other points.
  void begin_request(std::int64_t received_ns);
  void mark(Mark point, std::int64_t ns);
  // The connection code's own elapsed time for the request (see
  // ConnectionProbe), stored last.
  void set_served(std::int64_t ns);
  // Copies kRequestReceived..kMarshalled into `t`; returns the served time
  // (0 if none was recorded).
  std::int64_t collect(Timeline& t) const;

 private:
  std::array<std::atomic<std::int64_t>, kMarshalled - kRequestReceived + 1> points_{};
  std::atomic<std::int64_t> served_{0};
};

// A server connection's probe, owned by the connection code. With probes
// on, it registers a slot under the connection's (client port, server
// port), where an in-process client finds it, and routes this thread's
// mark_server() calls to it while a request is served. With probes off it
// does nothing and costs nothing per request.
class ConnectionProbe {
 public:
  ConnectionProbe(std::uint16_t client_port, std::uint16_t server_port);
  // From a connected socket's addresses (the ports stay 0 if unreadable).
  static ConnectionProbe for_socket(int fd);
  ~ConnectionProbe();
  ConnectionProbe(ConnectionProbe&& other) noexcept;
  ConnectionProbe& operator=(ConnectionProbe&&) = delete;
  ConnectionProbe(const ConnectionProbe&) = delete;
  ConnectionProbe& operator=(const ConnectionProbe&) = delete;

  bool active() const { return slot_ != nullptr; }
  std::uint16_t client_port() const { return client_port_; }

  // The request was read whole at `received_ns` (the connection code's own
  // clock read): marks kRequestReceived and starts the served time.
  void request_read(std::int64_t received_ns);
  // The reply is about to be handed to the socket: ends the served time
  // with a clock read of its own. Called for every block of a reply that
  // is written in blocks; the last one stands.
  void reply_handed();

 private:
  std::shared_ptr<ProbeSlot> slot_;
  std::uint16_t client_port_ = 0;
  std::uint16_t server_port_ = 0;
  std::int64_t read_ns_ = 0;
};

namespace detail {
inline thread_local ProbeSlot* current_slot = nullptr;
}

// Marks a point of the request this thread is serving; a null check and
// nothing else when probes are off or the connection has no probe.
inline void mark_server(Mark point) {
  if (ProbeSlot* slot = detail::current_slot) slot->mark(point, now_ns());
}
// The same with a clock read the caller made anyway.
inline void mark_server(Mark point, std::int64_t ns) {
  if (ProbeSlot* slot = detail::current_slot) slot->mark(point, ns);
}

// The client side of an in-process connection: the server points of the
// connection's latest request. `client_port` 0 means "the client cannot
// name its socket" (xmlrpc-c's curl transport): the slot is then the only
// connection to `server_port`, and with several there is none.
class ServerPointsReader {
 public:
  ServerPointsReader(std::uint16_t server_port, std::uint16_t client_port)
      : server_port_(server_port), client_port_(client_port) {}
  // Copies the server points into `t` and returns the server's own elapsed
  // time; nullopt if the connection's slot is not found (yet).
  std::optional<std::int64_t> collect(Timeline& t);

 private:
  std::uint16_t server_port_;
  std::uint16_t client_port_;
  std::shared_ptr<const ProbeSlot> slot_;
};

// ---- phases ----

// One phase, possibly a merge of adjacent ones where a point is missing.
struct Phase {
  std::string name;  // e.g. "service" or "request_transfer+server_parse"
  std::int64_t ns = 0;
};

// True if the points present are in timeline order. A point out of order
// means a stack marks it at the wrong moment (or a remote clock); phases_of
// then merges across it, and the benchmark reports how often it happened.
bool in_order(const Timeline& t);

// Phases of one call; empty if kInvoke or kDecoded is missing.
std::vector<Phase> phases_of(const Timeline& t);

// The server's three phases as durations, from a remote server's report
// (Server-Timing), whose clock is not the client's.
struct ServerDurations {
  std::int64_t parse_ns = 0;
  std::int64_t service_ns = 0;
  std::int64_t marshal_ns = 0;
  std::int64_t total() const { return parse_ns + service_ns + marshal_ns; }
};

// ---- Server-Timing: the server's phases for a client in another process ----

// The request header by which a client asks for them (any value); the
// reply then carries "Server-Timing: parse;dur=<ms>, service;dur=<ms>,
// marshal;dur=<ms>" (W3C Server Timing).
inline constexpr const char* kServerTimingRequestHeader = "X-Wsbench-Server-Timing";

// The header's value for these durations, in milliseconds.
std::string format_server_timing(const ServerDurations& d);
// The three phases from a Server-Timing value. Other metrics and
// parameters are ignored; nullopt if any of the three is missing,
// repeated, or has no non-negative finite duration.
std::optional<ServerDurations> parse_server_timing(std::string_view header);

// The phases of one request that asked for Server-Timing, recorded
// whether or not probes are on: from begin() (the request read whole)
// until end(), this thread's mark_server() calls land in the connection's
// probe slot if it has one, else in a slot of the recorder's own.
class ServerTimingRecorder {
 public:
  ServerTimingRecorder() = default;
  ~ServerTimingRecorder() { end(); }
  ServerTimingRecorder(const ServerTimingRecorder&) = delete;
  ServerTimingRecorder& operator=(const ServerTimingRecorder&) = delete;

  void begin(std::int64_t received_ns);
  bool active() const { return slot_ != nullptr; }
  // The header's value with marshal ending now; "" unless parse and
  // service were marked.
  std::string value() const;
  void end();

 private:
  ProbeSlot own_;
  ProbeSlot* slot_ = nullptr;
};

// Phases of a call to a remote server: the client's phases, the server's
// reported ones, and "request_transfer+response_transfer" for the rest of
// the wait (the network and whatever the server did outside its phases).
// Empty if the client's points do not allow it.
std::vector<Phase> phases_of(const Timeline& client, const ServerDurations& server);

// The checks that the phases explain the time they claim to (README,
// "Phases"): what an independent clock measured minus what the phases add
// up to. Positive: time the phases miss; negative: phases that overlap or
// were marked outside the measured region.
struct PhaseCheck {
  std::int64_t unexplained_ns = 0;
  double ratio = 0;     // phase sum / measured
  bool passed = false;  // |unexplained| within the tolerance below
};
// What the phases may leave unexplained: a few clock reads and calls at
// either end, or a small share of a long call.
inline constexpr std::int64_t kUnexplainedToleranceNs = 1'000;
inline constexpr double kUnexplainedToleranceShare = 0.05;
// The round trip: the client's phase sum against `elapsed_ns`, timed by
// the caller around the call with its own clock reads.
std::optional<PhaseCheck> check_round_trip(const std::vector<Phase>& phases,
                                           std::int64_t elapsed_ns);
// The server: its three phases (kRequestReceived..kMarshalled) against the
// elapsed time its connection code measured; nullopt unless `t` holds
// kRequestReceived and kMarshalled and `served_ns` > 0.
std::optional<PhaseCheck> check_server(const Timeline& t, std::int64_t served_ns);

}  // namespace wsb
