// The phase model of a request/response cycle (aihkisalo-paaso II.B, E6).
//
// Eight points on one steady clock; a phase runs from one point to the
// next. Each point keeps two reads: the one that ends the phase arriving at
// it and the one that starts the phase leaving it. A point marked as it
// should be takes one clock read for both, so the phases meet end to start;
// the checks (below) add the phases up interval by interval and compare the
// sum with a clock that no point shares, so a phase never ended (left out
// of the sum) or one started too early (counting the time before it twice)
// shows as a gap. A stack that does not expose a point leaves both reads 0,
// and the phases either side of it are merged (and named as merged) instead
// of guessed. Probes can be switched off (bench --no-probes): then no point
// costs a clock read.
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

// The points of one call. 0: not read.
struct Timeline {
  std::array<std::int64_t, kPointCount> end{};    // ends the phase arriving at the point
  std::array<std::int64_t, kPointCount> start{};  // starts the phase leaving it

  // The point's time: its end read, or its start read if it has no end.
  std::int64_t operator[](std::size_t p) const { return end[p] != 0 ? end[p] : start[p]; }
  bool marked(std::size_t p) const { return end[p] != 0 || start[p] != 0; }
  // A point marked as it should be: one read ends a phase and starts the next.
  void set(std::size_t p, std::int64_t ns) { end[p] = start[p] = ns; }
};

// ---- a test hook: marking faults ----

// The faults the checks are there to catch, injected into the marking code
// every client and server runs (tests/bench/phase_attribution_test.cpp).
enum class MarkFault : std::uint8_t {
  none,
  unclosed,     // the phase arriving at the point is never ended: it drops out
  early_start,  // the phase leaving the point starts where the one arriving at
                // it started: that one is counted twice
};

// Applies `fault` to every later marking of `point` in this process (one
// fault at a time; MarkFault::none clears it). early_start needs the
// previous point where `point` is recorded (the client's timeline or the
// server's slot), so it changes nothing at kInvoke, kRequestReceived or
// kResponseReceived.
void inject_mark_fault(Mark point, MarkFault fault);

// ---- the switch ----

namespace detail {
inline std::atomic<bool> probes_on{true};
// The injected fault as point << 8 | MarkFault; 0 when none.
inline std::atomic<std::uint32_t> mark_fault{0};

// A point's two reads of `ns` as the injected fault leaves them;
// `previous_start` is the previous point's start read (0 if unknown).
struct PointReads {
  std::int64_t end = 0, start = 0;
};
PointReads faulty_reads(Mark point, std::int64_t ns, std::int64_t previous_start);
}  // namespace detail

// Whether clients and servers mark points. Set before servers start and
// clients connect; a connection keeps what it saw when it was opened.
inline bool probes_enabled() { return detail::probes_on.load(std::memory_order_relaxed); }
void set_probes_enabled(bool on);

// A client's point: one clock read, or none with probes off.
inline void mark(Timeline& t, Mark point) {
  if (!probes_enabled()) return;
  const std::int64_t ns = now_ns();
  if (detail::mark_fault.load(std::memory_order_relaxed) == 0) return t.set(point, ns);
  const auto reads = detail::faulty_reads(point, ns, point > kInvoke ? t.start[point - 1] : 0);
  t.end[point] = reads.end;
  t.start[point] = reads.start;
}

// ---- server points ----

// The server points of one connection's latest request, and the time its
// connection code served it. Written by the connection's thread only; read by
// the client after the reply has arrived, when the request's writes are
// done (one request is outstanding per connection). Atomics, not a lock:
// a reader never blocks the server.
class ProbeSlot {
 public:
  // A request was read whole at `received_ns`: clears the other points.
  void begin_request(std::int64_t received_ns);
  void mark(Mark point, std::int64_t ns);
  // The time the connection code served the request (see ConnectionProbe),
  // stored last.
  void set_served(std::int64_t ns);
  // Copies kRequestReceived..kMarshalled into `t`; returns the served time
  // (0 if none was recorded).
  std::int64_t collect(Timeline& t) const;

 private:
  static constexpr std::size_t kPoints = kMarshalled - kRequestReceived + 1;
  std::array<std::atomic<std::int64_t>, kPoints> ends_{};
  std::array<std::atomic<std::int64_t>, kPoints> starts_{};
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

  // The served time, which the server check compares with the server's
  // phases, is measured by the connection code with clock reads no point
  // shares. It starts here, where the connection code has the whole
  // request, before the read that marks kRequestReceived. (gSOAP cannot
  // tell its last read of a request: it calls this after every read, and
  // the last call before request_read stands.)
  void serving_starts();
  // The request was read whole at `received_ns` (the connection code's own
  // clock read, after serving_starts): marks kRequestReceived.
  void request_read(std::int64_t received_ns);
  // The reply is about to be handed to the socket: ends the served time
  // with a clock read of its own, after kMarshalled. Called for every block
  // of a reply that is written in blocks; the last one stands.
  void reply_handed();

 private:
  std::shared_ptr<ProbeSlot> slot_;
  std::uint16_t client_port_ = 0;
  std::uint16_t server_port_ = 0;
  std::int64_t next_start_ns_ = 0;  // serving_starts' latest read
  std::int64_t start_ns_ = 0;       // the current request's
};

namespace detail {
inline thread_local ProbeSlot* current_slot = nullptr;
}

// Marks a point of the request this thread is serving (one clock read
// ends the phase before it and starts the next); a null check and nothing
// else when probes are off or the connection has no probe.
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

// True if the reads present are in timeline order (each point's end, then
// its start). A point out of order means a stack marks it at the wrong
// moment (or a remote clock); the benchmark reports how often it happened.
bool in_order(const Timeline& t);

// Phases of one call: each from its first point's start read to its last
// point's end read. A point with neither read is not exposed: the phases
// either side are merged. A phase whose start or end read is missing is
// left out, not guessed; one whose end comes before its start merges
// across that point, as a remote clock's can. Empty if kInvoke's start or
// kDecoded's end is missing.
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

// The checks that the phases explain the time they claim to (docs/methodology.md,
// "Phases"): the gap is what a clock no point shares measured minus what
// the phases add up to. Positive: time no phase holds (a phase left out,
// work before the first point or after the last); negative: time counted
// twice (phases that overlap) or phases marked outside the measured region.
struct PhaseCheck {
  std::int64_t measured_ns = 0;
  std::int64_t gap_ns = 0;
  bool passed = false;  // |gap| within the tolerance below
  // The gap as a share of the measured time, sign kept.
  double share() const { return static_cast<double>(gap_ns) / static_cast<double>(measured_ns); }
};
// What the phases may leave unexplained: a few clock reads and calls at
// either end, or a small share of a long call.
inline constexpr std::int64_t kGapToleranceNs = 1'000;
inline constexpr double kGapToleranceShare = 0.05;
// The round trip: the client's phase sum against `elapsed_ns`, timed by
// the caller around the call with its own clock reads.
std::optional<PhaseCheck> check_round_trip(const std::vector<Phase>& phases,
                                           std::int64_t elapsed_ns);
// The server: its phases from kRequestReceived's start read to
// kMarshalled's end read, summed as phases_of sums them, against the time
// its connection code served the request (ConnectionProbe); nullopt
// unless `t` holds both reads and `served_ns` > 0.
std::optional<PhaseCheck> check_server(const Timeline& t, std::int64_t served_ns);

}  // namespace wsb
