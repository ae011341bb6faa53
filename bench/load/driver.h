// The load driver's core: client threads calling targets in a closed loop
// (each calls again as soon as its reply arrives), an open loop (calls at
// intended times; latency counts from the intended time, so a stalled
// server cannot hide its queue: coordinated omission corrected as wrk2
// does), a ramp (one more client every interval), and the search for the
// most clients served without a failure.
//
// One thread per client: the stacks' clients (gSOAP's proxy, xmlrpc-c's
// curl transport, Beast's) are synchronous, one connection each, and a
// thread drives each of them the same way.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/phases.h"
#include "load/histogram.h"
#include "load/operations.h"

namespace wsb::load {

enum class ErrorKind { refused, reset, timeout, wrong_reply };
inline constexpr std::size_t kErrorKinds = 4;
const char* error_kind_name(ErrorKind kind);

// The stacks report transport failures as text (their libraries' messages);
// this sorts one into a kind. `connecting`: the failure came while opening
// the connection.
ErrorKind classify_failure(const std::string& message, bool connecting);

// A reply that arrived but was not the right one.
class WrongReply : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Clock = std::chrono::steady_clock;

// What one call is timed over: from the moment its request's first byte is
// handed to the kernel to the moment its reply's last byte has been read,
// where the client marks them (common/phases.h), with the names of the
// points that bound it.
struct CallSpan {
  Clock::time_point from, to;
  const char* from_point = "";  // "request_written", "invoke" or "call_start"
  const char* to_point = "";    // "response_received" or "call_end"
};

// A stack client's call span from its timeline: kRequestWritten, else
// kInvoke (the stack marks no write: xmlrpc-c), else `before` (probes
// off); kResponseReceived, else `after`. `before` and `after` are read
// around the client's call.
CallSpan span_of(const Timeline& timeline, Clock::time_point before, Clock::time_point after);

// One open connection: call() makes one call and returns its span; the
// reply is checked after the span ends (WrongReply), and a transport
// failure throws the transport's error.
class Session {
 public:
  virtual ~Session() = default;
  virtual CallSpan call() = 0;
};

// What the clients call. connect() opens a new connection (throws if it
// cannot); a client connects before its first call, and again after a
// failed call as a user would, each connect timed apart from the calls.
struct Target {
  std::string label;
  std::function<std::unique_ptr<Session>()> connect;
  // The client opens its TCP connection inside its first call (xmlrpc-c's
  // libcurl connects lazily), so connect() makes only the client and the
  // first call's span holds the TCP connect.
  bool connects_in_first_call = false;
};

// Whether `stack`'s client connects in its first call rather than when
// it is made (tests/load/load_test.cpp checks every stack's).
bool connects_in_first_call(const std::string& stack);

// A registered stack carrying `codec`, calling `operation` on `server`.
Target stack_target(const std::string& stack, const std::string& codec, const Endpoint& server,
                    const OperationChoice& operation);
// The driver's ceiling: a raw TCP exchange of `bytes` each way with an
// echo thread per connection (the harness's TCP floor), no HTTP, no codec.
Target echo_target(std::size_t bytes, std::optional<int> server_cpu);

enum class Arrivals { closed, constant, poisson };

// Each client is a thread with a 60 KB histogram of its own: beyond this
// many per target a run is refused rather than exhausting the machine.
inline constexpr int kMaxClients = 10'000;

struct LoadSpec {
  int clients = 1;  // per target
  // Stops each client after this many calls (0: no count) and the run
  // after `duration` (0: no limit); at least one of the two is set.
  std::uint64_t requests_per_client = 0;
  std::chrono::milliseconds duration{0};
  Arrivals arrivals = Arrivals::closed;
  double rate = 0;  // open loop: calls per second per target, over all its clients
  // A reply later than this counts as a timeout, not a success.
  std::chrono::milliseconds timeout{5000};
  // Ramp: client i starts at i * ramp_interval (0: all at once), or at
  // client_starts[i] when that is given (one entry per client): E8's ramp
  // and the search steps after it.
  std::chrono::milliseconds ramp_interval{0};
  std::vector<std::chrono::milliseconds> client_starts;
  // Stop the run (no call starts after it) at the first failed call.
  bool stop_on_failure = false;
  // The width of the per-interval series (ok_per_second, failed_per_second).
  std::chrono::milliseconds series_interval{1000};
  // The run's hard bound: past it no call starts. `on_overrun` (e.g.
  // stopping the server) runs if a client is still in a call a timeout
  // after the run's end (its duration, or this bound).
  std::chrono::milliseconds max_time{120'000};
  std::function<void()> on_overrun;
  std::optional<int> client_cpu;  // every client thread pinned here
  std::uint64_t seed = 1;
};

// What one target saw in one run.
struct Tally {
  Histogram latency;  // ns of the calls that succeeded in time (CallSpan)
  std::uint64_t ok = 0;
  // Connections opened and the ns each connect took (failed ones are
  // errors of their kind instead).
  Histogram connect_latency;
  std::uint64_t connects = 0;
  // The points that bound the calls' spans (of the first that succeeded).
  const char* timed_from = "";
  const char* timed_to = "";
  std::array<std::uint64_t, kErrorKinds> errors{};
  std::array<std::string, kErrorKinds> first_error;  // one message per kind
  // Completed calls and failures per series interval since the start
  // (ramps; LoadSpec::series_interval, a second unless set).
  std::vector<std::uint64_t> ok_per_second, failed_per_second;
  // When the earliest failed call was sent, since the run's start.
  std::optional<std::chrono::nanoseconds> first_failure_sent;

  void add_error(ErrorKind kind, const std::string& message);
  void merge(const Tally& other);
  std::uint64_t failed() const;
};

struct RunResult {
  std::string label;
  int clients = 0;
  double elapsed_s = 0;
  std::chrono::steady_clock::time_point started;  // the run's clock starts here
  bool overran = false;                           // on_overrun had to run
  bool connects_in_first_call = false;            // the target's (Target)
  Tally tally;
  double throughput() const { return elapsed_s > 0 ? tally.ok / elapsed_s : 0; }
};

// Runs `spec.clients` clients on every target at once (two targets: a
// mixed run), one result per target. Throws std::invalid_argument for a
// spec that would not stop by itself.
std::vector<RunResult> run_load(const std::vector<Target>& targets, const LoadSpec& spec);

// Raises the client count from `first` by `step` up to `last`, running
// `spec` at each, until a run has a failure; the runs and the largest
// count served without one (0 if the first failed).
struct SearchResult {
  std::vector<std::vector<RunResult>> runs;
  int max_clean_clients = 0;
};
SearchResult search_max_clients(const std::vector<Target>& targets, LoadSpec spec, int first,
                                int step, int last);

}  // namespace wsb::load
