// Round trips: every stack x codec x operation, with the raw TCP floor
// measured beside each case, percentiles and the phase decomposition.
// Implemented in the rtt_*.cpp files; rtt_internal.h says what each holds.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/placement.h"
#include "common/transport.h"
#include "sweep.h"

namespace wsb {
class NetworkLink;
namespace anchors {
struct AnchorEntry;
}
}  // namespace wsb

namespace wsb::bench {

struct RttOptions {
  Sweep sweep = Sweep::standard;
  std::vector<Placement> placements = {Placement::same};
  // Stacks served remotely (--remote, --target); the others run in-process.
  std::map<std::string, Endpoint> targets;
  // A wsbench-server's floor port (--remote-floor): the floor of remote
  // cases; without it they have none.
  std::optional<Endpoint> remote_floor;
  // --link: in-process servers and floors listen in the link's server
  // namespace, the benchmark thread runs in its client namespace. Null:
  // loopback.
  const NetworkLink* link = nullptr;
  // > 0: fixed iteration count (for instruction counting).
  std::int64_t iterations = 0;
  // How long a case's timed calls may take per repetition when fewer than
  // kMinSamples fit (--sampling-seconds): over a shaped link a 16 MiB body
  // takes over a second, and the floor beside it as long again.
  double sampling_seconds = 2.0;
  // E8's definitions: size_multiple x 128 bytes (define and put rows).
  unsigned dictionary_size = 1;
  // The stacks whose cases are registered and measured; null: every
  // registered stack (all_stacks()). Tests pass their own; it must outlive
  // the run.
  const std::vector<StackEntry>* stacks = nullptr;
  // The anchors run beside their stacks (anchor/<library>/... rows, for
  // each anchor whose stack and codec the run measures in-process); null:
  // every registered one (anchors::all_anchors()). Must outlive the run.
  const std::vector<anchors::AnchorEntry>* anchors = nullptr;
};

// Returns the sweep the round trips run: the full one when the filter
// selects only cases of it.
Sweep register_rtt_benchmarks(const RttOptions& options);

// Where each stack's server phases come from in this run, for the context:
// "beast=in-process probe,gsoap=...", each "in-process probe",
// "Server-Timing header" (a remote server that reports them) or "none".
std::string server_phase_sources(const RttOptions& options);

// bench --wire-sizes: the bytes of each operation's HTTP request and
// response, measured on the socket, for message-a and message-b, printed
// as a table (aihkisalo-paaso Table II), then the HTTP/2 (grpc) rows split
// into frame headers, HPACK, control frames, gRPC prefixes and messages.
// Returns a process exit code.
int print_wire_sizes(const RttOptions& options);

}  // namespace wsb::bench
