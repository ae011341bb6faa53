// The round-trip cases and their registration: every stack x codec x
// operation of the standard or full sweep, named as the filter sees them,
// each with the sample count its pilot plans.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <optional>

#include "anchors/anchors.h"
#include "common/clock.h"
#include "common/codec.h"
#include "harness/stats.h"
#include "name_filter.h"
#include "rtt_internal.h"

// Google Benchmark 1.7 defines this flag in its library without declaring
// it in its header.
namespace benchmark {
extern bool FLAGS_benchmark_list_tests;
}  // namespace benchmark

namespace wsb::bench {
namespace rtt {

const char* op_name(Op op) {
  switch (op) {
    case Op::ping:
      return "ping";
    case Op::get:
      return "get";
    case Op::echo:
      return "echo";
    case Op::register_client:
      return "register";
    case Op::send:
      return "send";
    case Op::receive:
      return "receive";
    case Op::unregister:
      return "unregister";
    case Op::primes:
      return "primes";
    case Op::define:
      return "define";
    case Op::put:
      return "put";
    case Op::upload:
      return "upload";
  }
  return "?";
}

bool maps_upload(const StackEntry& stack) { return stack.name.starts_with("gsoap"); }

std::string RttCase::name() const {
  std::string n = anchor != nullptr ? "anchor/" + anchor->library + "/" + op_name(op)
                                    : "rtt/" + stack->name + "/" + codec + "/" + op_name(op);
  if (op == Op::get || op == Op::echo || op == Op::send || op == Op::receive || op == Op::upload)
    n += "/" + spec.label();
  if (op == Op::primes) n += "/" + std::to_string(primes);
  if (op == Op::define || op == Op::put) n += "/x" + std::to_string(size_multiple);
  if (new_connection) n += "/new-connection";
  return n + "/" + std::string(placement_name(placement));
}

const std::string& RttCase::socket_stack() const {
  return anchor != nullptr ? anchor->stack : stack->name;
}

const std::vector<StackEntry>& stacks_of(const RttOptions& options) {
  return options.stacks != nullptr ? *options.stacks : all_stacks();
}

namespace {

const std::vector<anchors::AnchorEntry>& anchors_of(const RttOptions& options) {
  return options.anchors != nullptr ? *options.anchors : anchors::all_anchors();
}

// An anchor as the kernel runs a stack: its server ignores the Service
// (it records nothing) and its client the codec (it has one). Made anew by
// each registration (RttOptions::anchors may differ) and kept for the
// process: the cases registered point at it.
const StackEntry& anchor_stack(const anchors::AnchorEntry& anchor) {
  static std::deque<StackEntry> stacks;
  return stacks.emplace_back(StackEntry{
      "anchor/" + anchor.library,
      anchor.description,
      {anchor.codec},
      [&anchor](Service&, const ServerOptions& options) { return anchor.start_server(options); },
      [&anchor](const Endpoint& server, const std::string&) { return anchor.connect(server); },
      anchor.library_thread_pool});
}

// True if an anchor of the run anchors this stack and codec.
bool anchored(const RttOptions& options, const StackEntry& stack, const std::string& codec) {
  return std::any_of(
      anchors_of(options).begin(), anchors_of(options).end(),
      [&](const anchors::AnchorEntry& a) { return a.stack == stack.name && a.codec == codec; });
}

// The anchors whose stack and codec the run measures, in-process: an
// anchor runs in-process only, beside a stack served here.
std::vector<const anchors::AnchorEntry*> run_anchors(const RttOptions& options) {
  std::vector<const anchors::AnchorEntry*> run;
  for (const auto& anchor : anchors_of(options)) {
    if (options.targets.count(anchor.stack) != 0) continue;
    for (const auto& stack : stacks_of(options))
      if (stack.name == anchor.stack &&
          std::find(stack.codecs.begin(), stack.codecs.end(), anchor.codec) != stack.codecs.end())
        run.push_back(&anchor);
  }
  return run;
}

// The TLS rows of the standard sweep: each TLS stack with its first codec
// (beast-tls json, gsoap-tls soap, grpc-tls protobuf), one per protocol
// and library. beast-tls's other codecs and their plain partners' 128 KiB
// and new-connection calls are --full's: they were the longest rows of the
// default run (XML-RPC's alone about a minute of it on two loaded vCPUs).
bool standard_tls(const RttOptions& options, const StackEntry& stack, const std::string& codec) {
  const std::string tls_stack = is_tls(stack) ? stack.name : stack.name + "-tls";
  return std::any_of(stacks_of(options).begin(), stacks_of(options).end(),
                     [&](const StackEntry& s) {
                       return s.name == tls_stack && !s.codecs.empty() && s.codecs.front() == codec;
                     });
}

std::vector<RttCase> rtt_cases(const RttOptions& options) {
  const bool full = options.sweep == Sweep::full;
  const std::vector<PayloadSpec> messages = {{Kind::message_a, 100}, {Kind::message_b, 128 * 1024}};
  // The anchors' echo, and their stacks' in the standard sweep (the full
  // one has it anyway).
  const PayloadSpec anchor_echo{Kind::message_b, 128 * 1024};
  std::vector<PayloadSpec> get_payloads;
  std::vector<PayloadSpec> echo_payloads;
  if (full) {
    get_payloads = codec_payloads(Sweep::full);
    echo_payloads = get_payloads;
  } else {
    // One case per experiment, so six repetitions (each collecting enough
    // samples for its percentiles) fit in the default run: E1's ping, E3's
    // largest int array, E5's message-a both ways, E7's primes. The queue
    // operations are in --full.
    get_payloads = {{Kind::ints, 3200}};
    echo_payloads = {{Kind::message_a, 100}};
  }
  std::vector<std::pair<const anchors::AnchorEntry*, const StackEntry*>> anchor_stacks;
  for (const auto* anchor : run_anchors(options))
    anchor_stacks.emplace_back(anchor, &anchor_stack(*anchor));
  std::vector<RttCase> cases;
  for (const Placement placement : options.placements) {
    for (const auto& stack : stacks_of(options)) {
      for (const auto& codec : stack.codecs) {
        // A library alternative's rows answer the verdicts of the full runs
        // (CodecEntry::alternative_of); the standard sweep stays small.
        if (!full && !find_codec(codec).alternative_of.empty()) continue;
        auto add = [&](Op op, PayloadSpec spec = {}, std::uint32_t n = 0) {
          cases.push_back(RttCase{&stack, codec, op, spec, n, placement, options.dictionary_size});
        };
        const bool texts_only = find_codec(codec).texts_only;
        const bool tls = is_tls(stack);
        const PayloadSpec message_a{Kind::message_a, 100};
        const PayloadSpec message_b{Kind::message_b, 128 * 1024};
        if (tls && !full && !standard_tls(options, stack, codec)) continue;
        // A plain stack whose TLS variant the run measures with this codec.
        const bool tls_partner = has_tls_variant(stacks_of(options), stack, codec) &&
                                 (full || standard_tls(options, stack, codec));
        if (tls && !full) {
          // A TLS stack's standard sweep: the calls its TLS ratios are
          // read from, each also as a new connection below.
          add(Op::ping);
          add(Op::echo, message_a);
          add(Op::echo, message_b);
        } else {
          add(Op::ping);
          // The standard sweep's other calls are those of the stacks and
          // codecs an anchor or a TLS variant stands beside; the rest (the
          // attachment codecs, text/plain) ping only, their calls in --full,
          // so that the default run fits in five minutes on two vCPUs.
          if (!full && !anchored(options, stack, codec) &&
              !has_tls_variant(stacks_of(options), stack, codec))
            continue;
          if (texts_only) {
            // text/plain carries texts only: E1's REST text row.
            add(Op::get, {Kind::text});
            add(Op::echo, {Kind::text});
          } else {
            for (const auto& s : get_payloads) add(Op::get, s);
            for (const auto& s : echo_payloads) add(Op::echo, s);
            // E9's uploads, the paper's direction, where the client maps
            // them: its binaries and GML, on the plain stack E9 runs on.
            if (full && !tls && maps_upload(stack))
              for (const auto& s : get_payloads)
                if (s.kind == Kind::binary || s.kind == Kind::gml) add(Op::upload, s);
            if (!full && anchored(options, stack, codec)) add(Op::echo, anchor_echo);
          }
          if (full && !texts_only) {
            add(Op::register_client);
            for (const auto& s : messages) {
              add(Op::send, s);
              add(Op::receive, s);
            }
            add(Op::unregister);
          }
          add(Op::primes, {}, full ? 100'000 : 1'000);
          add(Op::define);
          add(Op::put);
          // A plain stack beside its TLS variant: the steady row the TLS
          // sweep has and the standard one lacks.
          if (!full && !tls && !anchored(options, stack, codec) && tls_partner)
            add(Op::echo, message_b);
        }
        // New-connection rows: every TLS stack's, and their plain partners.
        if (tls || tls_partner) {
          for (const auto& [op, spec] :
               {std::pair{Op::ping, PayloadSpec{}}, std::pair{Op::echo, message_a},
                std::pair{Op::echo, message_b}}) {
            add(op, spec);
            cases.back().new_connection = true;
          }
        }
      }
    }
    // Registered with the stacks' cases, so their repetitions interleave
    // with them in bench's random order, as every case's do.
    for (const auto& [anchor, stack] : anchor_stacks) {
      for (const Op op : {Op::ping, Op::echo}) {
        RttCase c{
            stack,     anchor->codec,          op, op == Op::echo ? anchor_echo : PayloadSpec{}, 0,
            placement, options.dictionary_size};
        c.anchor = anchor;
        cases.push_back(c);
      }
    }
  }
  return cases;
}

// Every round trip gets kMinSamples samples, or as many as
// RttOptions::sampling_seconds of calls allow if fewer: enough for a p99.
// Google Benchmark's min_time promises no count: it reports the first trial
// whose calls add up to min_time, so a burst of load during a trial of 100
// calls reports 100 samples. A fixed count is taken only at registration;
// so each case the filter selects gets a short untimed pilot here, and a
// fixed ->Iterations() of that many samples. A fixed case's name carries
// "/iterations:N", as any fixed count's does.
constexpr std::int64_t kMinSamples = 200;
constexpr std::size_t kPilotCalls = 10;
constexpr std::int64_t kPilotBudgetNs = 250'000'000;

// The median time of a few timed calls after a verified one; nullopt if
// the reply is wrong (the case itself then reports why).
std::optional<double> pilot_call_ns(const RttCase& c) {
  const CaseScope scope(c);
  pin_current_thread(client_cpu(c.placement));
  const auto client = connect_case(c, pool->endpoint(*c.stack, c.placement));
  OpRunner runner(*client, c);
  const std::int64_t verify_start = now_ns();
  if (!runner.verify().empty()) return std::nullopt;
  // A call as long as the budget is its own estimate: over a shaped link
  // one call of a 64 MiB body takes seconds.
  if (const std::int64_t verify_ns = now_ns() - verify_start; verify_ns >= kPilotBudgetNs)
    return static_cast<double>(verify_ns);
  std::vector<std::int64_t> times;
  const std::int64_t deadline = now_ns() + kPilotBudgetNs;
  while (times.size() < kPilotCalls && (times.empty() || now_ns() < deadline)) {
    runner.set_up();
    times.push_back(runner.timed_call());
    runner.clean_up();
  }
  return summarize(times).median;
}

// The fixed iteration count of a case, or nullopt to leave it to min_time.
std::optional<std::int64_t> planned_iterations(const RttCase& c, const NameFilter& filter,
                                               double sampling_ns) {
  const std::string name = c.name();
  if (benchmark::FLAGS_benchmark_list_tests || !filter.selects(name + "/manual_time"))
    return std::nullopt;
  std::optional<double> call_ns;
  try {
    call_ns = pilot_call_ns(c);
  } catch (const std::exception&) {
    return std::nullopt;  // the case fails the same way and reports it
  }
  if (!call_ns || !(*call_ns > 0)) return std::nullopt;
  const std::int64_t n =
      std::clamp(static_cast<std::int64_t>(sampling_ns / *call_ns), std::int64_t{1}, kMinSamples);
  if (!filter.selects(name + "/iterations:" + std::to_string(n) + "/manual_time")) {
    std::fprintf(stderr,
                 "bench: the filter excludes %s/iterations:%lld, so min_time alone sets its "
                 "samples\n",
                 name.c_str(), static_cast<long long>(n));
    return std::nullopt;
  }
  return n;
}

}  // namespace
}  // namespace rtt

Sweep register_rtt_benchmarks(const RttOptions& options) {
  using rtt::RttCase;
  rtt::init_pool(options);
  static std::vector<RttCase> cases;
  cases = rtt::rtt_cases(options);
  const NameFilter filter;
  Sweep swept = options.sweep;
  // A filter that names only cases of the full sweep (say rtt/.*/binary)
  // gets them: running nothing would look like a broken filter.
  if (options.sweep == Sweep::standard && !benchmark::GetBenchmarkFilter().empty()) {
    const auto selected = [&](const std::vector<RttCase>& all) {
      return std::any_of(all.begin(), all.end(), [&](const RttCase& c) {
        return filter.selects(c.name() + "/manual_time");
      });
    };
    if (!selected(cases)) {
      RttOptions full = options;
      full.sweep = Sweep::full;
      auto wider = rtt::rtt_cases(full);
      if (selected(wider)) {
        std::fprintf(stderr,
                     "bench: the filter selects round trips of the full sweep only: "
                     "running those (--full runs every case)\n");
        cases = std::move(wider);
        swept = Sweep::full;
      }
    }
  }
  for (const auto& c : cases) {
    auto* b = benchmark::RegisterBenchmark(c.name().c_str(),
                                           [&c](benchmark::State& s) { rtt::guarded_rtt(s, c); });
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (options.iterations > 0) {
      b->Iterations(options.iterations);
    } else if (const auto n = rtt::planned_iterations(c, filter, options.sampling_seconds * 1e9)) {
      b->Iterations(*n);
    }
  }
  return swept;
}

}  // namespace wsb::bench
