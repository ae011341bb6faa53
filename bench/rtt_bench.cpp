#include "rtt_bench.h"

#include <benchmark/benchmark.h>
#include <regex.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "common/clock.h"
#include "common/codec.h"
#include "common/dictionary.h"
#include "common/phases.h"
#include "common/service.h"
#include "harness/byte_relay.h"
#include "harness/loopback.h"
#include "harness/network_link.h"
#include "harness/phase_gaps.h"
#include "harness/process_state.h"
#include "harness/profiling.h"
#include "harness/request_check.h"
#include "harness/stack_sockets.h"
#include "harness/stats.h"
#include "harness/tcp_floor.h"
#include "payload_cache.h"

// Google Benchmark 1.7 defines this flag in its library without declaring
// it in its header.
namespace benchmark {
extern bool FLAGS_benchmark_list_tests;
}  // namespace benchmark

namespace wsb::bench {
namespace {

enum class Op { ping, get, echo, register_client, send, receive, unregister, primes, define, put };

// E8's rows look up and write one word of the list, with its generated
// definition, so the database stays as built.
constexpr char kDictionaryWord[] = "protocol";

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
  unsigned size_multiple = 1;  // define, put: the dictionary's definitions

  std::string name() const {
    std::string n = "rtt/" + stack->name + "/" + codec + "/" + op_name(op);
    if (op == Op::get || op == Op::echo || op == Op::send || op == Op::receive)
      n += "/" + spec.label();
    if (op == Op::primes) n += "/" + std::to_string(primes);
    if (op == Op::define || op == Op::put) n += "/x" + std::to_string(size_multiple);
    return n + "/" + std::string(placement_name(placement));
  }
};

DictionaryOptions dictionary_options(unsigned size_multiple) {
  DictionaryOptions options;
  options.size_multiple = size_multiple;
  return options;
}

// In-process servers, one per (stack, placement), started on first use;
// all share one Service. Round-trip cases stop them when they end
// (CaseScope), so each case starts a fresh server.
class ServerPool {
 public:
  explicit ServerPool(const RttOptions& options)
      : targets_(options.targets),
        remote_floor_(options.remote_floor),
        link_(options.link),
        service_({}, {}, dictionary_options(options.dictionary_size)) {}

  // Where `stack` is served under `placement`; starts it if needed.
  Endpoint endpoint(const StackEntry& stack, Placement placement) {
    if (const auto it = targets_.find(stack.name); it != targets_.end()) return it->second;
    const std::lock_guard lock(mutex_);
    const auto key = std::make_pair(stack.name, placement);
    auto& server = servers_[key];
    if (!server) {
      ServerOptions options;
      options.cpu = server_cpu(placement);
      if (link_ == nullptr) {
        server = stack.start_server(service_, options);
      } else {
        // Its listening socket is made in the server's namespace, and
        // keeps it; so do the connections it accepts.
        options.listen = Endpoint{NetworkLink::server_address(), 0};
        link_->run_in(NetworkLink::Side::server,
                      [&] { server = stack.start_server(service_, options); });
      }
    }
    return server->endpoint();
  }

  bool in_process(const StackEntry& stack) const { return targets_.count(stack.name) == 0; }
  const NetworkLink* link() const { return link_; }
  const std::optional<Endpoint>& remote_floor() const { return remote_floor_; }
  Service& service() { return service_; }

  // Stops every in-process server: closes its connections, joins its threads.
  void stop_servers() {
    const std::lock_guard lock(mutex_);
    servers_.clear();
  }

 private:
  std::map<std::string, Endpoint> targets_;
  std::optional<Endpoint> remote_floor_;
  const NetworkLink* link_;
  Service service_;
  std::mutex mutex_;
  std::map<std::pair<std::string, Placement>, std::unique_ptr<Server>> servers_;
};

ServerPool* pool = nullptr;

void init_pool(const RttOptions& options) {
  static std::unique_ptr<ServerPool> servers;
  if (!servers) servers = std::make_unique<ServerPool>(options);
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
    if (payload_ != nullptr) unsupported_ = find_codec(c.codec).make()->unsupported(*payload_);
    if (c.op == Op::primes) expected_text_ = pool->service().primes(c.primes);
    if (c.op == Op::define || c.op == Op::put)
      expected_text_ = generated_definition(kDictionaryWord, c.size_multiple);
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
    // What was put is read back (untimed) and must be what was sent.
    if (c_.op == Op::put && client_.define(kDictionaryWord) != expected_text_)
      return "put: the word's definition read back differs";
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
  // are outside. Under callgrind the call alone is counted.
  std::int64_t timed_call() {
    const std::int64_t start = now_ns();
    {
      const CountedCall counted(CountedCall::Threads::others_too);
      call();
    }
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
      case Op::define:
        text_ = client_.define(kDictionaryWord);
        break;
      case Op::put:
        client_.put(kDictionaryWord, expected_text_);
        break;
    }
  }

  // After the timed call: keeps the server's state bounded.
  void clean_up() {
    if (c_.op == Op::register_client) client_.unregister_client(text_);
    if (c_.op == Op::send) client_.receive_messages(queue_, messages_);
  }

  // Why the codec cannot carry the case's payload, or empty.
  const std::string& unsupported() const { return unsupported_; }

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
      case Op::define:
        return text_ == expected_text_ ? "" : "define reply differs";
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
  std::string unsupported_;
  std::string expected_text_;
  std::string queue_;
  std::string text_;
  Payload out_;
  std::vector<Message> messages_;
};

// Every round-trip run (and pilot) starts from the state the process had
// before it. The case's server is started first; on exit the thread's CPU
// mask is restored, the case's connections must be released (the server's
// threads and descriptors back to what it had idle), then the server is
// stopped, and the process must be back where it was (a difference is
// reported). Waiting for the connections first also spares Abyss its
// 2 s wait for connection threads in ServerTerminate. What carries over
// on purpose: the Service with its payload cache (payloads are made once
// per run, outside any timed region) and its queues, emptied by each
// case's clean-up.
class CaseScope {
 public:
  explicit CaseScope(const RttCase& c) : name_(c.name()), before_(ProcessState::now()) {
    pool->endpoint(*c.stack, c.placement);
    idle_server_ = ProcessState::now();
  }
  ~CaseScope() {
    affinity_.restore();
    const auto timeout = std::chrono::seconds(2);
    const ProcessState released = wait_for_state(idle_server_, timeout);
    if (!(released == idle_server_)) report("its connections", idle_server_, released);
    pool->stop_servers();
    const ProcessState after = wait_for_state(before_, timeout);
    if (!(after == before_)) report("the process", before_, after);
  }
  CaseScope(const CaseScope&) = delete;
  CaseScope& operator=(const CaseScope&) = delete;

 private:
  void report(const char* what, const ProcessState& expected, const ProcessState& seen) const {
    std::fprintf(stderr, "bench: %s: %s not released: expected %s, found %s\n", name_.c_str(), what,
                 expected.describe().c_str(), seen.describe().c_str());
  }

  std::string name_;
  ScopedAffinity affinity_;
  ProcessState before_;
  ProcessState idle_server_;
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

// Floor exchanges per block, and case calls between two blocks; a case of
// fewer calls gets as many floor exchanges as calls.
constexpr std::size_t kFloorBlock = 10;

// A call at least this long skips the untimed warm-up call after set-up:
// first-use costs (heap, buffers) are noise beside it, and over a shaped
// link one such call of a 64 MiB body takes seconds.
constexpr std::int64_t kLongCallNs = 100'000'000;

// Where a case's server phases come from (the row's label and the
// context say which).
enum class PhaseSource { probe, server_timing, none };

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

// In-process: the probe. Remote (`client` set): Server-Timing, asked for
// here, where the stack can.
PhaseSource phase_source(Client* remote_client) {
  if (!probes_enabled()) return PhaseSource::none;
  if (remote_client == nullptr) return PhaseSource::probe;
  return remote_client->request_server_timing() ? PhaseSource::server_timing : PhaseSource::none;
}

// The phase columns of one row: mean phases over the calls that had them,
// and the two checks (phases.h) per call: the phases' sum against the
// round trip timed around the call and against the server's served time.
class PhaseTally {
 public:
  // The call just made, timed around by the benchmark as `elapsed_ns`
  // with clock reads of its own (OpRunner::timed_call).
  void record(PhaseSource source, const Client& client, ServerPointsReader& server_points,
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

  // phase:<name>_us; phase_gap_* and server_gap_* (phase_gaps.h), where
  // the check ran; phase_disordered when some call's points were.
  void report(benchmark::State& state) const {
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

 private:
  void add(const std::vector<Phase>& phases, std::int64_t elapsed_ns, bool ordered) {
    if (phases.empty()) return;
    ++calls_;
    if (!ordered) ++disordered_;
    for (const auto& phase : phases) totals_[phase.name] += phase.ns;
    if (const auto check = check_round_trip(phases, elapsed_ns)) round_trip_gaps_.add(*check);
  }

  double calls_ = 0;
  std::int64_t disordered_ = 0;  // calls whose points came out of order
  std::map<std::string, std::int64_t> totals_;
  GapSamples round_trip_gaps_;
  GapSamples server_gaps_;
};

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

// The time the link itself needs for a call: its bytes at the applied
// rate plus the applied one-way delay each way; nullopt without a rate.
std::optional<double> wire_limit_ms(const NetworkLink* link, const WireCount& wire) {
  if (link == nullptr || link->shaping().applied_rate_bps == 0) return std::nullopt;
  const double bits = 8.0 * static_cast<double>(wire.request + wire.response);
  return bits / static_cast<double>(link->shaping().applied_rate_bps) * 1e3 +
         2 * link->shaping().applied_one_way_delay_ms;
}

void run_rtt(benchmark::State& state, const RttCase& c) {
  pin_current_thread(client_cpu(c.placement));
  const Endpoint server = pool->endpoint(*c.stack, c.placement);
  const bool in_process = pool->in_process(*c.stack);
  const auto client = c.stack->connect(server, c.codec);
  const PhaseSource source = phase_source(in_process ? nullptr : client.get());
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
    tcp.emplace(wire.request, wire.response, stack_socket_options(c.stack->name),
                server_cpu(c.placement), TcpFloor::Route{}, floor_listener(pool->link()));
  } else if (const auto& remote_floor = pool->remote_floor()) {
    tcp.emplace(remote_floor->host, remote_floor->port, wire.request, wire.response,
                stack_socket_options(c.stack->name));
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
  if (pool->link() != nullptr) where += " over link " + pool->link()->spec().name;
  if (!in_process)
    where += tcp ? ", floor " + pool->remote_floor()->to_string() : std::string(", no floor");
  state.SetLabel(where + "; server phases: " + source_name(source));
}

void guarded_rtt(benchmark::State& state, const RttCase& c) {
  try {
    const CaseScope scope(c);
    run_rtt(state, c);
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("round trip failed: ") + e.what()).c_str());
  }
}

const std::vector<StackEntry>& stacks_of(const RttOptions& options) {
  return options.stacks != nullptr ? *options.stacks : all_stacks();
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
    for (const auto& stack : stacks_of(options)) {
      for (const auto& codec : stack.codecs) {
        auto add = [&](Op op, PayloadSpec spec = {}, std::uint32_t n = 0) {
          cases.push_back(RttCase{&stack, codec, op, spec, n, placement, options.dictionary_size});
        };
        const bool texts_only = find_codec(codec).texts_only;
        add(Op::ping);
        if (texts_only) {
          // text/plain carries texts only: E1's REST text row.
          add(Op::get, {Kind::text});
          add(Op::echo, {Kind::text});
        } else {
          for (const auto& s : get_payloads) add(Op::get, s);
          for (const auto& s : echo_payloads) add(Op::echo, s);
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

// The median time of a few timed calls after a verified one; nullopt if
// the reply is wrong (the case itself then reports why).
std::optional<double> pilot_call_ns(const RttCase& c) {
  const CaseScope scope(c);
  pin_current_thread(client_cpu(c.placement));
  const auto client = c.stack->connect(pool->endpoint(*c.stack, c.placement), c.codec);
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

Sweep register_rtt_benchmarks(const RttOptions& options) {
  init_pool(options);
  static std::vector<RttCase> cases;
  cases = rtt_cases(options);
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
      auto wider = rtt_cases(full);
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
                                           [&c](benchmark::State& s) { guarded_rtt(s, c); });
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (options.iterations > 0) {
      b->Iterations(options.iterations);
    } else if (const auto n = planned_iterations(c, filter, options.sampling_seconds * 1e9)) {
      b->Iterations(*n);
    }
  }
  return swept;
}

std::string server_phase_sources(const RttOptions& options) {
  std::string sources;
  for (const auto& stack : all_stacks()) {
    PhaseSource source = PhaseSource::none;
    if (const auto it = options.targets.find(stack.name); it == options.targets.end()) {
      source = phase_source(nullptr);
    } else {
      try {
        source = phase_source(stack.connect(it->second, stack.codecs.front()).get());
      } catch (const std::exception&) {
        // Unreachable now: its cases fail and say why.
      }
    }
    sources += (sources.empty() ? "" : ",") + stack.name + "=" + source_name(source);
  }
  return sources;
}

int print_wire_sizes(const RttOptions& options) {
  init_pool(options);
  const std::vector<PayloadSpec> messages = {{Kind::message_a, 100}, {Kind::message_b, 128 * 1024}};
  int failures = 0;
  for (const auto& spec : messages) {
    std::printf("\nBytes on the wire, %s (HTTP total / body; measured on the socket)\n",
                spec.label().c_str());
    std::printf("%-22s %-10s %17s %17s\n", "stack/codec", "operation", "request", "response");
    for (const auto& stack : stacks_of(options)) {
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
