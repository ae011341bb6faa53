// The round-trip kernel: one case's benchmark. It verifies the reply,
// counts the case's bytes (on a TLS stack: checks what was negotiated),
// starts the floor beside it (TCP, or for TLS and new-connection rows the
// connection floor, tls_floor.h), makes one untimed warm-up call, then
// times each call (OpRunner::timed_call: on a new-connection row, connect,
// handshake, call and close) with the floor's blocks interleaved, and
// reports percentiles, bytes, the floor and the phase columns. The cases, the operation, the
// servers and the reports are in the files rtt_internal.h lists.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "anchors/anchors.h"
#include "common/clock.h"
#include "common/tls.h"
#include "harness/loopback.h"
#include "harness/network_link.h"
#include "harness/profiling.h"
#include "harness/stack_sockets.h"
#include "harness/stats.h"
#include "harness/tcp_floor.h"
#include "harness/tls_floor.h"
#include "rtt_internal.h"

namespace wsb::bench::rtt {
namespace {

// Floor exchanges per block, and case calls between two blocks; a case of
// fewer calls gets as many floor exchanges as calls.
constexpr std::size_t kFloorBlock = 10;

// A call at least this long skips the untimed warm-up call after set-up:
// first-use costs (heap, buffers) are noise beside it, and over a shaped
// link one such call of a 64 MiB body takes seconds.
constexpr std::int64_t kLongCallNs = 100'000'000;

// The floor's listening socket: over a link, on the server's address in
// the server's namespace, as the case's server listens.
FloorListener floor_listener(const NetworkLink* link) {
  if (link == nullptr) return {};
  return {NetworkLink::server_address(), [link](std::uint16_t& port) {
            int fd = -1;
            link->run_in(NetworkLink::Side::server, [&] {
              port = 0;
              fd = listen_on(NetworkLink::server_address().c_str(), 1, port, "tcp floor");
            });
            return fd;
          }};
}

// The floor of a row: TcpFloor for a plain kept-alive one, ConnectionFloor
// for TLS and new-connection rows (in-process, over loopback only).
struct Floor {
  std::optional<TcpFloor> tcp;
  std::optional<ConnectionFloor> connection;
  std::string missing;  // why a row that should have a floor has none
  explicit operator bool() const { return tcp || connection; }
  std::int64_t round_trip() { return tcp ? tcp->round_trip() : connection->round_trip(); }
  void warm_up() { tcp ? tcp->warm_up() : connection->warm_up(); }
  void wait_until_server_waits() const {
    tcp ? tcp->wait_until_server_waits() : connection->wait_until_server_waits();
  }
};

// `request` and `response`: the plaintext bytes of one call.
void start_floor(Floor& floor, const RttCase& c, bool in_process, std::uint64_t request,
                 std::uint64_t response) {
  const bool tls = is_tls(*c.stack);
  const ConnectionOptions sockets = stack_socket_options(c.socket_stack());
  if (!tls && !c.new_connection) {
    if (in_process) {
      floor.tcp.emplace(request, response, sockets, server_cpu(c.placement), TcpFloor::Route{},
                        floor_listener(pool->link()));
    } else if (const auto& remote_floor = pool->remote_floor()) {
      floor.tcp.emplace(remote_floor->host, remote_floor->port, request, response, sockets);
    }
    return;
  }
  if (!in_process || pool->link() != nullptr) {
    floor.missing = "no floor (the connection floor runs over loopback only)";
    return;
  }
  floor.connection.emplace(request, response, sockets, server_cpu(c.placement),
                           ConnectionFloor::Shape{tls, c.new_connection});
}

void run_rtt(benchmark::State& state, const RttCase& c, const std::optional<WireCount>& plain) {
  pin_current_thread(client_cpu(c.placement));
  const Endpoint server = pool->endpoint(*c.stack, c.placement);
  const bool in_process = pool->in_process(*c.stack);
  const auto client = connect_case(c, server);
  // An anchor has no probes: no phases, whatever --no-probes says; nor has
  // a new-connection row, whose client points start after its connect.
  const PhaseSource source = c.anchor != nullptr || c.new_connection
                                 ? PhaseSource::none
                                 : phase_source(in_process ? nullptr : client.get());
  OpRunner runner(*client, c);

  // A payload the codec cannot carry at all (text/plain and an array).
  if (!runner.unsupported().empty()) {
    state.SkipWithError(("unsupported: " + runner.unsupported()).c_str());
    return;
  }
  // Verify before timing: a wrong reply skips the case.
  const std::int64_t verify_start = now_ns();
  if (const std::string diff = runner.verify(); !diff.empty()) {
    state.SkipWithError(("verification failed: " + diff).c_str());
    return;
  }
  const std::int64_t verify_ns = now_ns() - verify_start;
  // After the first call: some clients open their connection lazily.
  ServerPointsReader server_points(server.port, client->local_port());

  // Counted once per case: every repetition sends the same bytes, and over
  // a shaped link one call of a 64 MiB body takes seconds.
  static std::map<std::string, WireCount> counted;
  // By the stack entry too: a test's stand-in may share a registered
  // stack's name.
  const std::string key =
      c.name() + "@" + std::to_string(reinterpret_cast<std::uintptr_t>(c.stack));
  auto known = counted.find(key);
  if (known == counted.end()) known = counted.emplace(key, count_wire(c, server)).first;
  const WireCount wire = known->second;
  // A TLS row negotiates what every TLS row does, or is not measured.
  if (plain) {
    if (const std::string diff = hello_mismatch(wire.hello, expected_hello(c.stack->name));
        !diff.empty()) {
      state.SkipWithError(("verification failed: " + diff).c_str());
      return;
    }
  }
  // The plaintext of one call: on a TLS row its plain counterpart's bytes.
  const WireCount& text = plain ? *plain : wire;
  // The floor: the same plaintext byte counts with the stack's socket
  // options, in blocks alternating with the case's calls (tcp_floor.h,
  // tls_floor.h).
  Floor exchanges;
  start_floor(exchanges, c, in_process, text.request, text.response);
  std::optional<InterleavedFloor> floor;
  if (exchanges) {
    exchanges.warm_up();
    floor.emplace(
        [&exchanges] {
          const CountedCall floor_counted(CountedCall::Threads::others_too, kCountingFloor);
          return exchanges.round_trip();
        },
        std::min<std::size_t>(kFloorBlock, static_cast<std::size_t>(state.max_iterations)));
  }
  // One untimed call after all set-up, so the first timed one finds the
  // heap and the buffers as every later one does.
  if (verify_ns < kLongCallNs) {
    runner.set_up();
    runner.call();
    runner.clean_up();
  }

  std::vector<std::int64_t> samples;
  samples.reserve(static_cast<std::size_t>(state.max_iterations));
  PhaseTally tally;
  // perf samples the case's blocks of calls, not the floor's.
  std::optional<SampledRegion> sampled;
  for (auto _ : state) {
    if (floor && floor->block_due()) {
      sampled.reset();
      floor->run_block();
      exchanges.wait_until_server_waits();
    }
    if (!sampled) sampled.emplace();
    if (floor) floor->count_call();
    runner.set_up();
    const std::int64_t elapsed = runner.timed_call();
    state.SetIterationTime(static_cast<double>(elapsed) * 1e-9);
    samples.push_back(elapsed);

    if (c.anchor == nullptr && !c.new_connection)
      tally.record(source, *client, server_points, elapsed);
    runner.clean_up();
  }
  sampled.reset();
  if (const std::string diff = runner.check(); !diff.empty()) {
    state.SkipWithError(("reply changed during timing: " + diff).c_str());
    return;
  }

  const Summary p = summarize(samples);
  const double us = 1e-3;
  // n: the samples every figure of the row is over. A percentile that
  // many samples cannot support (stats.h) is left out, not filled in.
  state.counters["n"] = static_cast<double>(p.n);
  state.counters["p50_us"] = p.median * us;
  if (!std::isnan(p.p90)) state.counters["p90_us"] = p.p90 * us;
  if (!std::isnan(p.p99)) state.counters["p99_us"] = p.p99 * us;
  state.counters["max_us"] = p.max * us;
  state.counters["request_bytes"] = static_cast<double>(wire.request);
  state.counters["response_bytes"] = static_cast<double>(wire.response);
  state.counters["request_body_bytes"] = static_cast<double>(text.request_http.bodies);
  state.counters["response_body_bytes"] = static_cast<double>(text.response_http.bodies);
  if (plain) {
    state.counters["request_plain_bytes"] = static_cast<double>(plain->request);
    state.counters["response_plain_bytes"] = static_cast<double>(plain->response);
  }
  if (c.new_connection) state.counters["new_connection"] = 1;
  if (floor) {
    const Summary f = summarize(floor->samples());
    state.counters["floor_n"] = static_cast<double>(f.n);
    state.counters["floor_p50_us"] = f.median * us;
    if (!std::isnan(f.p90)) state.counters["floor_p90_us"] = f.p90 * us;
    state.counters["ratio_p50"] = p.median / f.median;
  }
  if (const auto limit = wire_limit_ms(pool->link(), wire))
    state.counters["wire_limit_ms"] = *limit;
  tally.report(state);
  std::string where = in_process ? "in-process server" : "remote server";
  // The stacks' servers record what they received, and verification
  // checks it (OpRunner::verify); an anchor's records nothing, so its
  // reply alone is checked, and the label says so.
  if (c.anchor != nullptr)
    where = "in-process anchor server of " + c.anchor->stack + "/" + c.anchor->codec +
            "; request check: none (an anchor records no request)";
  if (pool->link() != nullptr) where += " over link " + pool->link()->spec().name;
  if (!exchanges.missing.empty()) {
    where += ", " + exchanges.missing;
  } else if (!in_process) {
    where += exchanges ? ", floor " + pool->remote_floor()->to_string() : std::string(", no floor");
  }
  if (plain && wire.hello) where += "; tls: " + describe(*wire.hello);
  state.SetLabel(where + "; server phases: " + source_name(source));
}

}  // namespace

void guarded_rtt(benchmark::State& state, const RttCase& c) {
  try {
    // Before the case's own scope: the plain counterpart's server is
    // started and stopped in a scope of its own.
    std::optional<WireCount> plain;
    if (is_tls(*c.stack)) plain = plain_wire(c);
    const CaseScope scope(c);
    run_rtt(state, c, plain);
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("round trip failed: ") + e.what()).c_str());
  }
}

}  // namespace wsb::bench::rtt
