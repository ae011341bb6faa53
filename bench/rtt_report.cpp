// What a round trip reports beside its times: the bytes it puts on the
// wire (count_wire, wire_limit_ms, bench --wire-sizes) and its server
// phases (PhaseTally, where they come from).
#include <benchmark/benchmark.h>

#include <cstdio>

#include "harness/byte_relay.h"
#include "harness/network_link.h"
#include "rtt_internal.h"

namespace wsb::bench {
namespace rtt {

// ---- bytes on the wire ----

WireCount count_wire(const RttCase& c, const Endpoint& server) {
  ByteRelay relay(server);
  relay.set_capture(true);
  const auto client = c.stack->connect(relay.endpoint(), c.codec);
  OpRunner runner(*client, c);
  runner.set_up();
  relay.reset();
  runner.call();
  WireCount w;
  w.request = relay.counts().to_server;
  w.response = relay.counts().to_client;
  // A TLS stack's bytes are TLS records: no HTTP header and body to tell
  // apart (the body counters stay 0).
  if (!c.stack->name.ends_with("-tls")) {
    w.request_http = http_sizes(relay.captured_to_server());
    w.response_http = http_sizes(relay.captured_to_client());
  }
  runner.clean_up();
  return w;
}

std::optional<double> wire_limit_ms(const NetworkLink* link, const WireCount& wire) {
  if (link == nullptr || link->shaping().applied_rate_bps == 0) return std::nullopt;
  const double bits = 8.0 * static_cast<double>(wire.request + wire.response);
  return bits / static_cast<double>(link->shaping().applied_rate_bps) * 1e3 +
         2 * link->shaping().applied_one_way_delay_ms;
}

// ---- server phases ----

const char* source_name(PhaseSource source) {
  switch (source) {
    case PhaseSource::probe:
      return "in-process probe";
    case PhaseSource::server_timing:
      return "Server-Timing header";
    case PhaseSource::none:
      return "none";
  }
  return "?";
}

PhaseSource phase_source(Client* remote_client) {
  if (!probes_enabled()) return PhaseSource::none;
  if (remote_client == nullptr) return PhaseSource::probe;
  return remote_client->request_server_timing() ? PhaseSource::server_timing : PhaseSource::none;
}

void PhaseTally::record(PhaseSource source, const Client& client, ServerPointsReader& server_points,
                        std::int64_t elapsed_ns) {
  if (!probes_enabled()) return;
  Timeline t = client.last_timeline();
  if (source == PhaseSource::probe) {
    // Until the connection's slot is found (phases.h), the call's server
    // points are unknown: left out, not merged.
    if (const auto served = server_points.collect(t)) {
      add(phases_of(t), elapsed_ns, in_order(t));
      if (const auto check = check_server(t, *served)) server_gaps_.add(*check);
    }
  } else if (const auto remote = client.last_server_timing()) {
    add(phases_of(t, *remote), elapsed_ns, in_order(t));
  } else {
    add(phases_of(t), elapsed_ns, in_order(t));  // the client's phases only
  }
}

void PhaseTally::report(benchmark::State& state) const {
  if (calls_ == 0) return;
  const double us = 1e-3;
  for (const auto& [name, ns] : totals_)
    state.counters["phase:" + name + "_us"] = static_cast<double>(ns) / calls_ * us;
  for (const auto& [name, value] : round_trip_gaps_.counters("phase_gap"))
    state.counters[name] = value;
  for (const auto& [name, value] : server_gaps_.counters("server_gap"))
    state.counters[name] = value;
  if (disordered_ > 0)
    state.counters["phase_disordered"] = static_cast<double>(disordered_) / calls_;
}

void PhaseTally::add(const std::vector<Phase>& phases, std::int64_t elapsed_ns, bool ordered) {
  if (phases.empty()) return;
  ++calls_;
  if (!ordered) ++disordered_;
  for (const auto& phase : phases) totals_[phase.name] += phase.ns;
  if (const auto check = check_round_trip(phases, elapsed_ns)) round_trip_gaps_.add(*check);
}

}  // namespace rtt

std::string server_phase_sources(const RttOptions& options) {
  using rtt::PhaseSource;
  std::string sources;
  for (const auto& stack : all_stacks()) {
    PhaseSource source = PhaseSource::none;
    if (const auto it = options.targets.find(stack.name); it == options.targets.end()) {
      source = rtt::phase_source(nullptr);
    } else {
      try {
        source = rtt::phase_source(stack.connect(it->second, stack.codecs.front()).get());
      } catch (const std::exception&) {
        // Unreachable now: its cases fail and say why.
      }
    }
    sources += (sources.empty() ? "" : ",") + stack.name + "=" + rtt::source_name(source);
  }
  return sources;
}

int print_wire_sizes(const RttOptions& options) {
  using rtt::Op;
  rtt::init_pool(options);
  const std::vector<PayloadSpec> messages = {{Kind::message_a, 100}, {Kind::message_b, 128 * 1024}};
  int failures = 0;
  for (const auto& spec : messages) {
    std::printf("\nBytes on the wire, %s (HTTP total / body; measured on the socket)\n",
                spec.label().c_str());
    std::printf("%-22s %-10s %17s %17s\n", "stack/codec", "operation", "request", "response");
    for (const auto& stack : rtt::stacks_of(options)) {
      for (const auto& codec : stack.codecs) {
        for (const Op op :
             {Op::register_client, Op::send, Op::receive, Op::unregister, Op::ping, Op::echo}) {
          const rtt::RttCase c{&stack, codec, op, spec, 0, options.placements.front()};
          const std::string who = stack.name + "/" + codec;
          try {
            const Endpoint server = rtt::pool->endpoint(stack, c.placement);
            const rtt::WireCount w = rtt::count_wire(c, server);
            std::printf("%-22s %-10s %8llu / %-6llu %8llu / %-6llu\n", who.c_str(),
                        rtt::op_name(op), static_cast<unsigned long long>(w.request),
                        static_cast<unsigned long long>(w.request_http.bodies),
                        static_cast<unsigned long long>(w.response),
                        static_cast<unsigned long long>(w.response_http.bodies));
          } catch (const std::exception& e) {
            std::printf("%-22s %-10s failed: %s\n", who.c_str(), rtt::op_name(op), e.what());
            ++failures;
          }
        }
      }
    }
  }
  std::fflush(stdout);
  return failures == 0 ? 0 : 1;
}

}  // namespace wsb::bench
