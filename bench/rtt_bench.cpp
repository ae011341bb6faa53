#include "rtt_bench.h"

#include <benchmark/benchmark.h>
#include <pthread.h>
#include <regex.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "common/clock.h"
#include "common/codec.h"
#include "common/phases.h"
#include "common/service.h"
#include "harness/byte_relay.h"
#include "harness/request_check.h"
#include "harness/stats.h"
#include "harness/tcp_floor.h"
#include "instruction_count.h"
#include "payload_cache.h"

// Google Benchmark 1.7 defines these flags in its library without
// declaring them in its header. 1.8 made min_time a string, which is
// another symbol: an upgrade fails to link here rather than misreading it.
namespace benchmark {
extern double FLAGS_benchmark_min_time;
extern bool FLAGS_benchmark_list_tests;
}  // namespace benchmark

namespace wsb::bench {
namespace {

enum class Op { ping, get, echo, register_client, send, receive, unregister, primes };

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
  }
  return "?";
}

struct RttCase {
  const StackEntry* stack;
  std::string codec;
  Op op;
  PayloadSpec spec;  // get, echo, send, receive
  std::uint32_t primes = 0;
  Placement placement;

  std::string name() const {
    std::string n = "rtt/" + stack->name + "/" + codec + "/" + op_name(op);
    if (op == Op::get || op == Op::echo || op == Op::send || op == Op::receive)
      n += "/" + spec.label();
    if (op == Op::primes) n += "/" + std::to_string(primes);
    return n + "/" + std::string(placement_name(placement));
  }
};

// In-process servers, one per (stack, placement), started on first use and
// kept for the whole run; all share one Service.
class ServerPool {
 public:
  explicit ServerPool(std::map<std::string, Endpoint> targets) : targets_(std::move(targets)) {}

  // Where `stack` is served under `placement`; starts it if needed.
  Endpoint endpoint(const StackEntry& stack, Placement placement) {
    if (const auto it = targets_.find(stack.name); it != targets_.end()) return it->second;
    const std::lock_guard lock(mutex_);
    const auto key = std::make_pair(stack.name, placement);
    auto& server = servers_[key];
    if (!server) {
      ServerOptions options;
      options.cpu = server_cpu(placement);
      server = stack.start_server(service_, options);
    }
    return server->endpoint();
  }

  bool in_process(const StackEntry& stack) const { return targets_.count(stack.name) == 0; }
  Service& service() { return service_; }

 private:
  std::map<std::string, Endpoint> targets_;
  Service service_;
  std::mutex mutex_;
  std::map<std::pair<std::string, Placement>, std::unique_ptr<Server>> servers_;
};

ServerPool* pool = nullptr;

void init_pool(const RttOptions& options) {
  static std::unique_ptr<ServerPool> servers;
  if (!servers) servers = std::make_unique<ServerPool>(options.targets);
  pool = servers.get();
}

// One operation as the kernel runs it: untimed set-up, the timed call, an
// untimed clean-up, and the check of what came back.
class OpRunner {
 public:
  OpRunner(Client& client, const RttCase& c)
      : client_(client), c_(c), fidelity_(find_codec(c.codec).make()->double_fidelity()) {
    if (c.op == Op::get || c.op == Op::echo || c.op == Op::send || c.op == Op::receive)
      payload_ = &cached_payload(c.spec);
    if (c.op == Op::send || c.op == Op::receive) {
      message_ = std::get_if<Message>(payload_);
      if (message_ == nullptr) throw std::invalid_argument("send/receive need a message payload");
    }
    if (c.op == Op::primes) expected_text_ = pool->service().primes(c.primes);
  }
  ~OpRunner() {
    if (!queue_.empty()) {
      try {
        client_.unregister_client(queue_);
      } catch (const std::exception&) {
        // The server may already be gone; nothing measured depends on it.
      }
    }
  }

  // Before the timed call.
  void set_up() {
    switch (c_.op) {
      case Op::send:
      case Op::receive:
      case Op::unregister:
        if (queue_.empty()) queue_ = client_.register_client();
        if (c_.op == Op::receive) client_.send_message(queue_, *message_);
        break;
      default:
        break;
    }
  }

  // One call as the benchmark sees it, before timing: set-up, call, check
  // and clean-up. Empty if the reply was right and the server received
  // what was sent, else what differed (the clean-up is skipped then: the
  // state it expects may not be there).
  std::string verify() {
    Service* service = pool->in_process(*c_.stack) ? &pool->service() : nullptr;
    std::string diff;
    {
      std::optional<RequestRecording> recording;
      if (service != nullptr) recording.emplace(*service);
      set_up();
      call();
      diff = check();
      if (diff.empty() && service != nullptr) diff = check_request(*service);
    }
    if (!diff.empty()) return diff;
    // The sent message comes back (untimed) and must be what was sent;
    // receiving it empties the queue, as clean_up() would.
    if (c_.op == Op::send) return check_queued(client_, queue_, *message_, fidelity_);
    clean_up();
    return diff;
  }

  // Empty if the in-process server received what the call sent.
  std::string check_request(const Service& service) const {
    if (c_.op == Op::echo) return check_received(service, *payload_, fidelity_);
    if (c_.op == Op::send) return check_received(service, *message_, fidelity_);
    return "";
  }

  // The timed region, in nanoseconds: the whole call as the application
  // sees it: client marshal, request transfer, server parse + service +
  // marshal, response transfer, client parse. Set-up and clean-up calls
  // are outside.
  std::int64_t timed_call() {
    const std::int64_t start = now_ns();
    call();
    return now_ns() - start;
  }

  // The call under measurement.
  void call() {
    switch (c_.op) {
      case Op::ping:
        text_ = client_.ping();
        break;
      case Op::get:
        client_.get(c_.spec, out_);
        break;
      case Op::echo:
        client_.echo(*payload_, out_);
        break;
      case Op::register_client:
        text_ = client_.register_client();
        break;
      case Op::send:
        client_.send_message(queue_, *message_);
        break;
      case Op::receive:
        client_.receive_messages(queue_, messages_);
        break;
      case Op::unregister:
        client_.unregister_client(queue_);
        queue_.clear();
        break;
      case Op::primes:
        text_ = client_.primes(c_.primes);
        break;
    }
  }

  // After the timed call: keeps the server's state bounded.
  void clean_up() {
    if (c_.op == Op::register_client) client_.unregister_client(text_);
    if (c_.op == Op::send) client_.receive_messages(queue_, messages_);
  }

  // Empty if the last call returned what it should.
  std::string check() const {
    switch (c_.op) {
      case Op::ping:
        return text_ == kPingReply ? "" : "ping returned '" + text_ + "'";
      case Op::get:
      case Op::echo:
        return describe_difference(*payload_, out_, fidelity_);
      case Op::register_client:
        return text_.empty() ? "empty queue id" : "";
      case Op::receive:
        if (messages_.size() != 1)
          return "received " + std::to_string(messages_.size()) + " messages, not 1";
        return describe_difference(*message_, messages_.front(), fidelity_);
      case Op::primes:
        return text_ == expected_text_ ? "" : "primes reply differs";
      default:
        return "";
    }
  }

 private:
  Client& client_;
  const RttCase& c_;
  DoubleFidelity fidelity_;  // what the codec's library can carry
  const Payload* payload_ = nullptr;
  const Message* message_ = nullptr;
  std::string expected_text_;
  std::string queue_;
  std::string text_;
  Payload out_;
  std::vector<Message> messages_;
};

struct WireCount {
  std::uint64_t request = 0, response = 0;
  HttpSizes request_http, response_http;
};

// One call through a counting relay: the bytes it put on the socket.
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
  w.request_http = http_sizes(relay.captured_to_server());
  w.response_http = http_sizes(relay.captured_to_client());
  runner.clean_up();
  return w;
}

void run_rtt(benchmark::State& state, const RttCase& c) {
  pin_current_thread(client_cpu(c.placement));
  const Endpoint server = pool->endpoint(*c.stack, c.placement);
  const bool in_process = pool->in_process(*c.stack);
  const auto client = c.stack->connect(server, c.codec);
  OpRunner runner(*client, c);

  // Verify before timing: a wrong reply skips the case.
  if (const std::string diff = runner.verify(); !diff.empty()) {
    state.SkipWithError(("verification failed: " + diff).c_str());
    return;
  }

  const WireCount wire = count_wire(c, server);
  Summary floor;
  if (in_process) {
    TcpFloor tcp(server_cpu(c.placement));
    floor = tcp.measure(wire.request, wire.response, 2000, 200'000'000);
  }

  std::vector<std::int64_t> samples;
  samples.reserve(static_cast<std::size_t>(state.max_iterations));
  std::map<std::string, std::int64_t> phase_totals;
  std::int64_t phase_sum = 0;
  std::int64_t disordered = 0;  // calls whose points came out of order
  Timeline t{};
  std::optional<CountedRegion> counted(std::in_place);
  for (auto _ : state) {
    runner.set_up();
    if (in_process) server_probe().begin_request();
    const std::int64_t elapsed = runner.timed_call();
    state.SetIterationTime(static_cast<double>(elapsed) * 1e-9);
    samples.push_back(elapsed);

    t = client->last_timeline();
    if (in_process) server_probe().collect(t);
    if (!in_order(t)) ++disordered;
    for (const auto& phase : phases_of(t)) {
      phase_totals[phase.name] += phase.ns;
      phase_sum += phase.ns;
    }
    runner.clean_up();
  }
  counted.reset();
  if (const std::string diff = runner.check(); !diff.empty()) {
    state.SkipWithError(("reply changed during timing: " + diff).c_str());
    return;
  }

  std::int64_t total = 0;
  for (const auto s : samples) total += s;
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
  if (floor.n > 0) {
    state.counters["floor_p50_us"] = floor.median * us;
    state.counters["floor_n"] = static_cast<double>(floor.n);
    state.counters["ratio_p50"] = p.median / floor.median;
  }
  const double n = static_cast<double>(samples.size());
  for (const auto& [name, ns] : phase_totals)
    state.counters["phase:" + name + "_us"] = static_cast<double>(ns) / n * us;
  // Phases measured inside the call against the call as timed around it:
  // should be within a few percent of 1.
  if (total > 0) state.counters["phase_sum_ratio"] = static_cast<double>(phase_sum) / total;
  if (disordered > 0) state.counters["phase_disordered"] = static_cast<double>(disordered) / n;
  state.SetLabel(in_process ? "in-process server" : "remote server, no floor");
}

void guarded_rtt(benchmark::State& state, const RttCase& c) {
  try {
    run_rtt(state, c);
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("round trip failed: ") + e.what()).c_str());
  }
}

std::vector<RttCase> rtt_cases(const RttOptions& options) {
  const bool full = options.sweep == Sweep::full;
  const std::vector<PayloadSpec> messages = {{Kind::message_a, 100}, {Kind::message_b, 128 * 1024}};
  std::vector<PayloadSpec> get_payloads;
  std::vector<PayloadSpec> echo_payloads;
  if (full) {
    get_payloads = codec_payloads(Sweep::full);
    echo_payloads = get_payloads;
  } else {
    // One case per experiment, so five repetitions of every stack x codec
    // (each collecting enough samples for its percentiles) fit in the
    // default run: E1's ping, E3's largest int array, E5's message-a both
    // ways, E7's primes. The queue operations are in --full.
    get_payloads = {{Kind::ints, 3200}};
    echo_payloads = {{Kind::message_a, 100}};
  }
  std::vector<RttCase> cases;
  for (const Placement placement : options.placements) {
    for (const auto& stack : all_stacks()) {
      for (const auto& codec : stack.codecs) {
        auto add = [&](Op op, PayloadSpec spec = {}, std::uint32_t n = 0) {
          cases.push_back(RttCase{&stack, codec, op, spec, n, placement});
        };
        add(Op::ping);
        for (const auto& s : get_payloads) add(Op::get, s);
        for (const auto& s : echo_payloads) add(Op::echo, s);
        if (full) {
          add(Op::register_client);
          for (const auto& s : messages) {
            add(Op::send, s);
            add(Op::receive, s);
          }
          add(Op::unregister);
        }
        add(Op::primes, {}, full ? 100'000 : 1'000);
      }
    }
  }
  return cases;
}

// Every round trip gets at least kMinSamples samples, or as many as
// kMaxSamplingNs of calls allow if fewer: enough for a p99. Google
// Benchmark stops at min_time (a 5 ms call gets 20 samples in 0.1 s) and
// takes a fixed count only at registration. So each case the filter
// selects gets a short untimed pilot here, and a fixed ->Iterations() of
// that many samples unless min_time clearly gives more. A fixed case's
// name carries "/iterations:N", as any fixed count's does.
constexpr std::int64_t kMinSamples = 200;
constexpr double kMaxSamplingNs = 2e9;
constexpr std::size_t kPilotCalls = 10;
constexpr std::int64_t kPilotBudgetNs = 250'000'000;

// Google Benchmark's filter as it applies it: a POSIX extended regex
// searched for in the full name; empty or "all" selects everything, a
// leading '-' negates.
class NameFilter {
 public:
  NameFilter() {
    std::string spec = benchmark::GetBenchmarkFilter();
    if (spec.empty() || spec == "all") spec = ".";
    if (spec.front() == '-') {
      negate_ = true;
      spec.erase(0, 1);
    }
    // A bad regex selects nothing here; Google Benchmark reports it.
    compiled_ = regcomp(&re_, spec.c_str(), REG_EXTENDED | REG_NOSUB) == 0;
  }
  ~NameFilter() {
    if (compiled_) regfree(&re_);
  }
  NameFilter(const NameFilter&) = delete;
  NameFilter& operator=(const NameFilter&) = delete;

  bool selects(const std::string& name) const {
    return compiled_ && (regexec(&re_, name.c_str(), 0, nullptr, 0) == 0) != negate_;
  }

 private:
  regex_t re_{};
  bool compiled_ = false;
  bool negate_ = false;
};

// The main thread's CPU mask, restored on exit: pilots pin the thread as
// their cases do, and the codec cases, which run first, must not inherit it.
class SavedAffinity {
 public:
  SavedAffinity() { ok_ = pthread_getaffinity_np(pthread_self(), sizeof set_, &set_) == 0; }
  ~SavedAffinity() {
    if (ok_) pthread_setaffinity_np(pthread_self(), sizeof set_, &set_);
  }
  SavedAffinity(const SavedAffinity&) = delete;
  SavedAffinity& operator=(const SavedAffinity&) = delete;

 private:
  cpu_set_t set_{};
  bool ok_ = false;
};

// The median time of a few timed calls after a verified one; nullopt if
// the reply is wrong (the case itself then reports why).
std::optional<double> pilot_call_ns(const RttCase& c) {
  pin_current_thread(client_cpu(c.placement));
  const auto client = c.stack->connect(pool->endpoint(*c.stack, c.placement), c.codec);
  OpRunner runner(*client, c);
  if (!runner.verify().empty()) return std::nullopt;
  std::vector<std::int64_t> times;
  const std::int64_t deadline = now_ns() + kPilotBudgetNs;
  while (times.size() < kPilotCalls && (times.empty() || now_ns() < deadline)) {
    runner.set_up();
    times.push_back(runner.timed_call());
    runner.clean_up();
  }
  return summarize(times).median;
}

// The fixed iteration count a case needs, or nullopt to leave it to min_time.
std::optional<std::int64_t> planned_iterations(const RttCase& c, const NameFilter& filter) {
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
  const std::int64_t n = std::clamp(static_cast<std::int64_t>(kMaxSamplingNs / *call_ns),
                                    std::int64_t{1}, kMinSamples);
  // min_time alone gives at least min_time / (mean call) samples; 1.5x is
  // the margin for the run's mean being above the pilot's median.
  const double min_time_samples = benchmark::FLAGS_benchmark_min_time * 1e9 / *call_ns;
  if (min_time_samples >= 1.5 * static_cast<double>(n)) return std::nullopt;
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

void register_rtt_benchmarks(const RttOptions& options) {
  init_pool(options);
  static std::vector<RttCase> cases;
  cases = rtt_cases(options);
  const NameFilter filter;
  const SavedAffinity affinity;
  for (const auto& c : cases) {
    auto* b = benchmark::RegisterBenchmark(c.name().c_str(),
                                           [&c](benchmark::State& s) { guarded_rtt(s, c); });
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (options.iterations > 0) {
      b->Iterations(options.iterations);
    } else if (const auto n = planned_iterations(c, filter)) {
      b->Iterations(*n);
    }
  }
}

int print_wire_sizes(const RttOptions& options) {
  init_pool(options);
  const std::vector<PayloadSpec> messages = {{Kind::message_a, 100}, {Kind::message_b, 128 * 1024}};
  int failures = 0;
  for (const auto& spec : messages) {
    std::printf("\nBytes on the wire, %s (HTTP total / body; measured on the socket)\n",
                spec.label().c_str());
    std::printf("%-22s %-10s %17s %17s\n", "stack/codec", "operation", "request", "response");
    for (const auto& stack : all_stacks()) {
      for (const auto& codec : stack.codecs) {
        for (const Op op :
             {Op::register_client, Op::send, Op::receive, Op::unregister, Op::ping, Op::echo}) {
          const RttCase c{&stack, codec, op, spec, 0, options.placements.front()};
          const std::string who = stack.name + "/" + codec;
          try {
            const Endpoint server = pool->endpoint(stack, c.placement);
            const WireCount w = count_wire(c, server);
            std::printf("%-22s %-10s %8llu / %-6llu %8llu / %-6llu\n", who.c_str(), op_name(op),
                        static_cast<unsigned long long>(w.request),
                        static_cast<unsigned long long>(w.request_http.bodies),
                        static_cast<unsigned long long>(w.response),
                        static_cast<unsigned long long>(w.response_http.bodies));
          } catch (const std::exception& e) {
            std::printf("%-22s %-10s failed: %s\n", who.c_str(), op_name(op), e.what());
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
