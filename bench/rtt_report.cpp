// What a round trip reports beside its times: the bytes it puts on the
// wire (count_wire, wire_limit_ms, bench --wire-sizes) and its server
// phases (PhaseTally, where they come from).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/byte_relay.h"
#include "harness/network_link.h"
#include "rtt_internal.h"

namespace wsb::bench {
namespace rtt {

// ---- bytes on the wire ----

WireCount count_wire(const RttCase& c, const Endpoint& server) {
  ByteRelay relay(server);
  relay.set_capture(true);
  const auto client = connect_case(c, relay.endpoint());
  OpRunner runner(*client, c);
  WireCount w;
  const bool tls = is_tls(*c.stack);
  if (tls && !c.new_connection) {
    // A kept-alive TLS connection: one call first, so the handshake (made
    // at connect or, by a lazy client, at its first call) is behind the
    // counted call; its ServerHello opens what the server sent.
    runner.set_up();
    runner.call();
    runner.clean_up();
    w.hello = server_hello(relay.captured_to_client());
  }
  const auto counted_call = [&] {
    runner.set_up();
    relay.reset();
    runner.call();
    // A new connection is counted to its end: the client has closed it, and
    // its last bytes (a TLS close_notify) are on the way through the relay.
    if (c.new_connection && !relay.wait_until_closed(2000))
      throw std::runtime_error("a new connection's close did not reach the server in 2 s");
    // One snapshot of each direction: HTTP/2 may still send a control frame
    // (WINDOW_UPDATE, a PING's ack) after the reply, which a count read
    // apart from the capture could hold and the capture not, or the reverse.
    const std::string to_server = relay.captured_to_server();
    const std::string to_client = relay.captured_to_client();
    w.request = to_server.size();
    w.response = to_client.size();
    if (tls) {
      if (c.new_connection) w.hello = server_hello(to_client);
    } else {
      w.request_http = http_sizes(to_server);
      w.response_http = http_sizes(to_client);
    }
    runner.clean_up();
  };
  counted_call();
  // HTTP/2 on a new connection per call is counted as it is timed: the
  // connection's first call, HPACK's table empty.
  if (w.request_http.is_http2 && !c.new_connection) {
    w.first_request = w.request;
    w.first_response = w.response;
    w.first_request_http = w.request_http;
    w.first_response_http = w.response_http;
    counted_call();
  }
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

namespace {

// An HTTP/2 row's bytes, split: frame headers + HPACK header blocks +
// control (preface, SETTINGS, PING, WINDOW_UPDATE) + gRPC's message
// prefixes + the messages = the total the relay counted.
struct Http2Row {
  std::string who;
  const char* operation;
  const char* direction;
  const char* call;  // "first" on the connection, or the "next" (as the timed loop's)
  Http2Split split;
  std::uint64_t counted;
};

void print_http2_rows(const std::vector<Http2Row>& rows) {
  if (rows.empty()) return;
  std::printf(
      "\nHTTP/2 rows split: frame headers (9 bytes each) + HPACK header blocks + "
      "control frames + gRPC message prefixes (5 bytes each) + messages = total; the "
      "connection's first call (empty HPACK table) and the next (the one "
      "above, as timed)\n");
  std::printf("%-22s %-10s %-9s %-5s %7s %7s %8s %7s %9s %9s\n", "stack/codec", "operation",
              "direction", "call", "frames", "HPACK", "control", "prefix", "message", "total");
  for (const auto& r : rows) {
    const auto n = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
    std::printf("%-22s %-10s %-9s %-5s %7llu %7llu %8llu %7llu %9llu %9llu\n", r.who.c_str(),
                r.operation, r.direction, r.call, n(r.split.frame_headers),
                n(r.split.header_blocks), n(r.split.control), n(r.split.prefixes),
                n(r.split.messages), n(r.counted));
  }
}

}  // namespace

int print_wire_sizes(const RttOptions& options) {
  using rtt::Op;
  rtt::init_pool(options);
  const std::vector<PayloadSpec> messages = {{Kind::message_a, 100}, {Kind::message_b, 128 * 1024}};
  int failures = 0;
  for (const auto& spec : messages) {
    std::printf("\nBytes on the wire, %s (HTTP total / body; measured on the socket)\n",
                spec.label().c_str());
    std::printf("%-22s %-10s %17s %17s\n", "stack/codec", "operation", "request", "response");
    std::vector<Http2Row> http2_rows;
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
            // The split must account for every byte the relay counted.
            if (!http2_split_matches(w.request_http, w.request) ||
                !http2_split_matches(w.response_http, w.response))
              throw std::runtime_error("the HTTP/2 split does not add up to the bytes counted");
            if (!http2_split_matches(w.first_request_http, w.first_request) ||
                !http2_split_matches(w.first_response_http, w.first_response))
              throw std::runtime_error("the HTTP/2 split does not add up to the bytes counted");
            if (w.request_http.is_http2) {
              const char* name = rtt::op_name(op);
              http2_rows.push_back(
                  {who, name, "request", "first", w.first_request_http.http2, w.first_request});
              http2_rows.push_back({who, name, "request", "next", w.request_http.http2, w.request});
              http2_rows.push_back(
                  {who, name, "response", "first", w.first_response_http.http2, w.first_response});
              http2_rows.push_back(
                  {who, name, "response", "next", w.response_http.http2, w.response});
            }
          } catch (const std::exception& e) {
            std::printf("%-22s %-10s failed: %s\n", who.c_str(), rtt::op_name(op), e.what());
            ++failures;
          }
        }
      }
    }
    print_http2_rows(http2_rows);
  }
  std::fflush(stdout);
  return failures == 0 ? 0 : 1;
}

}  // namespace wsb::bench
