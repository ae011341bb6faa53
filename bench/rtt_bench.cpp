// The round-trip kernel: one case's benchmark. It verifies the reply,
// counts the case's bytes, starts the TCP floor beside it, makes one
// untimed warm-up call, then times each call (OpRunner::timed_call) with
// the floor's blocks interleaved, and reports percentiles, bytes, the
// floor and the phase columns. The cases, the operation, the servers and
// the reports are in the files rtt_internal.h lists.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "anchors/anchors.h"
#include "common/clock.h"
#include "harness/loopback.h"
#include "harness/network_link.h"
#include "harness/profiling.h"
#include "harness/stack_sockets.h"
#include "harness/stats.h"
#include "harness/tcp_floor.h"
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

void run_rtt(benchmark::State& state, const RttCase& c) {
  pin_current_thread(client_cpu(c.placement));
  const Endpoint server = pool->endpoint(*c.stack, c.placement);
  const bool in_process = pool->in_process(*c.stack);
  const auto client = c.stack->connect(server, c.codec);
  // An anchor has no probes: no phases, whatever --no-probes says.
  const PhaseSource source =
      c.anchor != nullptr ? PhaseSource::none : phase_source(in_process ? nullptr : client.get());
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
  const std::string key = c.name();
  auto known = counted.find(key);
  if (known == counted.end()) known = counted.emplace(key, count_wire(c, server)).first;
  const WireCount wire = known->second;
  // The floor: the same byte counts with the stack's socket options, in
  // blocks alternating with the case's calls (tcp_floor.h).
  std::optional<TcpFloor> tcp;
  std::optional<InterleavedFloor> floor;
  if (in_process) {
    tcp.emplace(wire.request, wire.response, stack_socket_options(c.socket_stack()),
                server_cpu(c.placement), TcpFloor::Route{}, floor_listener(pool->link()));
  } else if (const auto& remote_floor = pool->remote_floor()) {
    tcp.emplace(remote_floor->host, remote_floor->port, wire.request, wire.response,
                stack_socket_options(c.socket_stack()));
  }
  if (tcp) {
    tcp->warm_up();
    floor.emplace(
        [&tcp] { return tcp->round_trip(); },
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
      tcp->wait_until_server_waits();
    }
    if (!sampled) sampled.emplace();
    if (floor) floor->count_call();
    runner.set_up();
    const std::int64_t elapsed = runner.timed_call();
    state.SetIterationTime(static_cast<double>(elapsed) * 1e-9);
    samples.push_back(elapsed);

    if (c.anchor == nullptr) tally.record(source, *client, server_points, elapsed);
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
  state.counters["request_body_bytes"] = static_cast<double>(wire.request_http.bodies);
  state.counters["response_body_bytes"] = static_cast<double>(wire.response_http.bodies);
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
  if (!in_process)
    where += tcp ? ", floor " + pool->remote_floor()->to_string() : std::string(", no floor");
  state.SetLabel(where + "; server phases: " + source_name(source));
}

}  // namespace

void guarded_rtt(benchmark::State& state, const RttCase& c) {
  try {
    const CaseScope scope(c);
    run_rtt(state, c);
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("round trip failed: ") + e.what()).c_str());
  }
}

}  // namespace wsb::bench::rtt
