// What the round-trip files share; internal to bench/ (rtt_bench.h is the
// public side). A round trip's parts, one file each:
//   rtt_cases.cpp      the case table (standard and full sweeps) and its
//                      registration: the filter, the pilot that fixes each
//                      case's sample count
//   rtt_bench.cpp      the timed kernel: verify, warm up, the timed loop
//                      with the floor interleaved, the row's counters
//   rtt_op_runner.cpp  one operation: set-up, the timed call, clean-up and
//                      the checks of what came back
//   rtt_servers.cpp    the in-process servers and each case's isolation
//                      (CaseScope)
//   rtt_report.cpp     bytes on the wire (count_wire, --wire-sizes) and the
//                      server phases (PhaseTally, phase sources)
//   rtt_connections.cpp  TLS and new-connection rows: which stacks pair,
//                      the client that connects per call, the floors
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/payload.h"
#include "common/phases.h"
#include "common/placement.h"
#include "common/service.h"
#include "common/transport.h"
#include "harness/byte_relay.h"
#include "harness/phase_gaps.h"
#include "harness/process_state.h"
#include "rtt_bench.h"

namespace benchmark {
class State;
}  // namespace benchmark

namespace wsb::bench::rtt {

enum class Op {
  ping,
  get,
  echo,
  register_client,
  send,
  receive,
  unregister,
  primes,
  define,
  put,
  upload
};

// The stacks whose client maps E9's upload (Client::upload): the gSOAP
// stacks, where E9 runs.
bool maps_upload(const StackEntry& stack);

// E8's rows look up and write one word of the list, with its generated
// definition, so the database stays as built.
inline constexpr char kDictionaryWord[] = "protocol";

const char* op_name(Op op);

struct RttCase {
  // An anchor's case: its own StackEntry (anchor_stack), named
  // "anchor/<library>", that starts and connects the anchor.
  const StackEntry* stack;
  std::string codec;
  Op op;
  PayloadSpec spec;  // get, echo, send, receive, upload
  std::uint32_t primes = 0;
  Placement placement;
  unsigned size_multiple = 1;                    // define, put: the dictionary's definitions
  const anchors::AnchorEntry* anchor = nullptr;  // set in an anchor's case
  // A new connection per call: the timed call is connect (and, on a TLS
  // stack, the handshake), the call, and the close (NewConnectionClient).
  bool new_connection = false;

  // rtt/<stack>/<codec>/<op>/..., or anchor/<library>/<op>/...; a
  // new-connection case has "/new-connection" before the placement.
  std::string name() const;
  // The stack whose sockets the case's floor copies: the anchored stack's
  // for an anchor.
  const std::string& socket_stack() const;
};

// The stacks a run measures: RttOptions::stacks, or every registered one.
const std::vector<StackEntry>& stacks_of(const RttOptions& options);

// ---- rtt_servers.cpp ----

// In-process servers, one per (stack, placement), started on first use;
// all share one Service. Round-trip cases stop them when they end
// (CaseScope), so each case starts a fresh server.
class ServerPool {
 public:
  explicit ServerPool(const RttOptions& options);

  // Where `stack` is served under `placement`; starts it if needed.
  Endpoint endpoint(const StackEntry& stack, Placement placement);

  bool in_process(const StackEntry& stack) const { return targets_.count(stack.name) == 0; }
  const NetworkLink* link() const { return link_; }
  const std::optional<Endpoint>& remote_floor() const { return remote_floor_; }
  Service& service() { return service_; }

  // Stops every in-process server: closes its connections, joins its threads.
  void stop_servers();

  // Starts an in-process stack's server once per run, the first time it is
  // asked, makes one call to it and stops it: what its library makes on
  // first use and keeps for the process (gRPC's poller: an epoll set and
  // its eventfd; its TLS handshake threads) is then there before a case's
  // baseline, not counted as the case's leak.
  void warm_up(const StackEntry& stack, Placement placement);

 private:
  std::map<std::string, Endpoint> targets_;
  std::optional<Endpoint> remote_floor_;
  const NetworkLink* link_;
  Service service_;
  std::mutex mutex_;
  std::map<std::pair<std::string, Placement>, std::unique_ptr<Server>> servers_;
  std::set<std::string> warmed_;
};

// The run's pool, set by init_pool.
extern ServerPool* pool;

void init_pool(const RttOptions& options);

// Every round-trip run (and pilot) starts from the state the process had
// before it, taken once its stack has been warmed up (ServerPool::warm_up).
// The case's server is started first; on exit the thread's CPU
// mask is restored, the case's connections must be released (the server's
// threads and descriptors back to what it had idle, its threads' SQLite
// connections to the dictionary aside: they live as long as the threads),
// then the server is stopped, and the process must be back where it was,
// every descriptor counted (a difference is reported). Waiting for the
// connections first also spares Abyss its 2 s wait for connection threads
// in ServerTerminate. What carries over on purpose: the Service with its
// payload cache (payloads are made once per run, outside any timed
// region), its queues, emptied by each case's clean-up, and its
// dictionary, opened before a define or put case's baseline (its files
// named, no descriptor kept).
class CaseScope {
 public:
  explicit CaseScope(const RttCase& c);
  ~CaseScope();
  CaseScope(const CaseScope&) = delete;
  CaseScope& operator=(const CaseScope&) = delete;

 private:
  void report(const char* what, const ProcessState& expected, const ProcessState& seen) const;

  std::string name_;
  bool threads_by_load_;  // StackEntry::library_thread_pool
  ScopedAffinity affinity_;
  std::vector<std::filesystem::path> dictionary_files_;
  ProcessState before_;
  ProcessState idle_server_;
};

// ---- rtt_op_runner.cpp ----

// One operation as the kernel runs it: untimed set-up, the timed call, an
// untimed clean-up, and the check of what came back.
class OpRunner {
 public:
  OpRunner(Client& client, const RttCase& c);
  ~OpRunner();

  // Before the timed call.
  void set_up();

  // One call as the benchmark sees it, before timing: set-up, call, check
  // and clean-up. Empty if the reply was right and the server received
  // what was sent, else what differed (the clean-up is skipped then: the
  // state it expects may not be there).
  std::string verify();

  // Empty if the in-process server received what the call sent.
  std::string check_request(const Service& service) const;

  // The timed region, in nanoseconds: the whole call as the application
  // sees it (rtt_op_runner.cpp).
  std::int64_t timed_call();

  // The call under measurement.
  void call();

  // After the timed call: keeps the server's state bounded.
  void clean_up();

  // Why the codec cannot carry the case's payload, or empty.
  const std::string& unsupported() const { return unsupported_; }

  // Empty if the last call returned what it should.
  std::string check() const;

 private:
  Client& client_;
  const RttCase& c_;
  DoubleFidelity fidelity_;  // what the codec's library can carry
  const Payload* payload_ = nullptr;
  const Message* message_ = nullptr;
  std::string unsupported_;
  std::string expected_text_;
  std::string queue_;
  std::string text_;
  Payload out_;
  std::vector<Message> messages_;
};

// ---- rtt_bench.cpp ----

// One case's benchmark: its CaseScope around the timed kernel; an
// exception skips the case with its message.
void guarded_rtt(benchmark::State& state, const RttCase& c);

// ---- rtt_connections.cpp ----

// A TLS stack: its name ends in "-tls" (src/common/tls.h's configuration).
bool is_tls(const StackEntry& stack);
// A TLS stack's plain counterpart (its name without "-tls"), registered
// (all_stacks()); null if there is none.
const StackEntry* plain_counterpart(const StackEntry& tls_stack);
// True if `stacks` holds `stack`'s TLS variant carrying `codec`.
bool has_tls_variant(const std::vector<StackEntry>& stacks, const StackEntry& stack,
                     const std::string& codec);

// The case's client: the stack's own, or for a new-connection case one
// that connects per call (NewConnectionClient).
std::unique_ptr<Client> connect_case(const RttCase& c, const Endpoint& server);

struct WireCount;
// A TLS case's plain counterpart's bytes for the same call, kept alive
// (the plaintext its TLS records carry), counted once in a CaseScope of
// its own: call it before the TLS case's. Throws std::runtime_error if the
// stack has no plain counterpart.
WireCount plain_wire(const RttCase& c);

// ---- rtt_report.cpp ----

struct WireCount {
  // Bytes on the socket: on a TLS stack, TLS records; on a new-connection
  // case, with the handshake and the close.
  std::uint64_t request = 0, response = 0;
  // Plain stacks only: the HTTP split (TLS records hide it).
  HttpSizes request_http, response_http;
  // TLS stacks: what the server chose, from its ServerHello.
  std::optional<ServerHello> hello;
  // HTTP/2: the connection's first call, whose HPACK table was empty (the
  // fields above are then a second call's, as the timed loop's calls are);
  // 0 otherwise.
  std::uint64_t first_request = 0, first_response = 0;
  HttpSizes first_request_http, first_response_http;
};

// One call through a counting relay: the bytes it put on the socket. Over
// HTTP/2 the same call is made again on the connection and counted as the
// call (HPACK indexes headers it has sent: later calls send fewer bytes).
WireCount count_wire(const RttCase& c, const Endpoint& server);

// The time the link itself needs for a call: its bytes at the applied
// rate plus the applied one-way delay each way; nullopt without a rate.
std::optional<double> wire_limit_ms(const NetworkLink* link, const WireCount& wire);

// Where a case's server phases come from (the row's label and the
// context say which).
enum class PhaseSource { probe, server_timing, none };

const char* source_name(PhaseSource source);

// In-process: the probe. Remote (`client` set): Server-Timing, asked for
// here, where the stack can.
PhaseSource phase_source(Client* remote_client);

// The phase columns of one row: mean phases over the calls that had them,
// and the two checks (phases.h) per call: the phases' sum against the
// round trip timed around the call and against the server's served time.
class PhaseTally {
 public:
  // The call just made, timed around by the benchmark as `elapsed_ns`
  // with clock reads of its own (OpRunner::timed_call).
  void record(PhaseSource source, const Client& client, ServerPointsReader& server_points,
              std::int64_t elapsed_ns);

  // phase:<name>_us; phase_gap_* and server_gap_* (phase_gaps.h), where
  // the check ran; phase_disordered when some call's points were.
  void report(benchmark::State& state) const;

 private:
  void add(const std::vector<Phase>& phases, std::int64_t elapsed_ns, bool ordered);

  double calls_ = 0;
  std::int64_t disordered_ = 0;  // calls whose points came out of order
  std::map<std::string, std::int64_t> totals_;
  GapSamples round_trip_gaps_;
  GapSamples server_gaps_;
};

}  // namespace wsb::bench::rtt
