// The load driver's instruments: the histogram on known data, the open
// loop's intended-time correction on a server that stalls, error kinds on
// servers that refuse, reset, stall or answer wrongly, and every stack x
// codec under a small load through wsbench-server as a child process.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/codec.h"
#include "common/phases.h"
#include "common/transport.h"
#include "harness/loopback.h"
#include "load/driver.h"
#include "load/e8.h"
#include "load/histogram.h"
#include "load/server_process.h"
#include "stack_fixture.h"

namespace wsb::load {
namespace {

using namespace std::chrono_literals;

TEST(LoadHistogram, EveryBucketHoldsTheValuesItNames) {
  for (std::size_t i = 0; i < Histogram::index_of(~std::uint64_t{0}); i += 7) {
    EXPECT_EQ(Histogram::index_of(Histogram::lowest_in(i)), i);
    EXPECT_EQ(Histogram::index_of(Histogram::highest_in(i)), i);
    EXPECT_EQ(Histogram::index_of(Histogram::highest_in(i) + 1), i + 1);
  }
}

TEST(LoadHistogram, PercentilesOfKnownData) {
  Histogram h;
  for (std::uint64_t v = 1; v <= 100'000; ++v) h.record(v * 1000);  // 1 us .. 100 ms
  EXPECT_EQ(h.count(), 100'000u);
  EXPECT_EQ(h.min(), 1000u);
  EXPECT_EQ(h.max(), 100'000'000u);
  EXPECT_NEAR(h.mean(), 50'000'500.0, 1.0);
  EXPECT_NEAR(h.stddev(), 28'867'657.0, 2.0);  // (n^2 - 1) / 12, scaled, n - 1
  for (const double p : {50.0, 90.0, 99.0, 99.9}) {
    const double exact = p / 100 * 100'000 * 1000;
    EXPECT_GE(h.percentile(p), exact) << p;
    EXPECT_LE(h.percentile(p), exact * (1 + 1.0 / Histogram::kSubBuckets)) << p;
  }
  EXPECT_EQ(h.percentile(100), 100'000'000.0);
}

TEST(LoadHistogram, SmallValuesAreExactAndFewSamplesReportNoTail) {
  Histogram h;
  for (std::uint64_t v : {3, 1, 2, 200, 5}) h.record(v);
  EXPECT_EQ(h.percentile(50), 3.0);
  EXPECT_TRUE(std::isnan(h.percentile(90)));  // 5 samples: p90 would be the maximum renamed
  for (int i = 0; i < 5; ++i) h.record(7);
  EXPECT_EQ(h.percentile(90), 7.0);
  Histogram other;
  other.record(1'000'000);
  h.merge(other);
  EXPECT_EQ(h.count(), 11u);
  EXPECT_EQ(h.max(), 1'000'000u);
  EXPECT_EQ(h.min(), 1u);
}

TEST(LoadErrors, MessagesAreSortedIntoKinds) {
  EXPECT_EQ(classify_failure("beast: cannot connect to 127.0.0.1:9: Connection refused", true),
            ErrorKind::refused);
  EXPECT_EQ(classify_failure("anything while connecting", true), ErrorKind::refused);
  EXPECT_EQ(classify_failure("reading the response failed: Connection reset by peer", false),
            ErrorKind::reset);
  EXPECT_EQ(classify_failure("reading the response failed: end of stream", false),
            ErrorKind::reset);
  EXPECT_EQ(classify_failure("Operation timed out", false), ErrorKind::timeout);
  EXPECT_EQ(classify_failure("HTTP 500: boom", false), ErrorKind::wrong_reply);
}

// A tiny HTTP/1.1 server answering every request with the REST ping reply
// (or misbehaving as told), one thread per connection.
class TinyServer {
 public:
  enum class Behaviour { answer, wrong, reset, silent };

  explicit TinyServer(Behaviour behaviour, int stall_on_request = -1)
      : behaviour_(behaviour), stall_on_(stall_on_request) {
    auto codec = find_codec("json").make();
    std::string body;
    codec->encode(Payload{Text{behaviour == Behaviour::wrong ? "pung" : "pong"}}, body);
    reply_ = "HTTP/1.1 200 OK\r\nContent-Type: " + codec->content_type() +
             "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    listen_fd_ = listen_on_loopback(64, port_, "tiny server");
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~TinyServer() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    close_connections();
    acceptor_.join();
    for (auto& t : connections_) t.join();
    ::close(listen_fd_);
  }

  Endpoint endpoint() const { return {"127.0.0.1", port_}; }
  // Ends every open connection (clients blocked on a silent server).
  void close_connections() {
    const std::lock_guard lock(mutex_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
  }

 private:
  void accept_loop() {
    for (;;) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0 || stopping_) {
        if (fd >= 0) ::close(fd);
        return;
      }
      const std::lock_guard lock(mutex_);
      fds_.push_back(fd);
      connections_.emplace_back([this, fd] { serve(fd); });
    }
  }

  void serve(int fd) {
    std::string pending;
    char buffer[4096];
    for (;;) {
      const auto end = pending.find("\r\n\r\n");
      if (end == std::string::npos) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        pending.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      pending.erase(0, end + 4);  // a GET: no body
      if (behaviour_ == Behaviour::silent) continue;
      if (behaviour_ == Behaviour::reset) {
        const linger abort{1, 0};  // close with RST
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
        break;
      }
      if (requests_.fetch_add(1) == stall_on_) std::this_thread::sleep_for(100ms);
      if (!write_all(fd, reply_.data(), reply_.size())) break;
    }
    const std::lock_guard lock(mutex_);
    std::erase(fds_, fd);
    ::close(fd);
  }

  Behaviour behaviour_;
  int stall_on_;
  std::atomic<int> requests_{0};
  std::atomic<bool> stopping_{false};
  std::string reply_;
  std::uint16_t port_ = 0;
  int listen_fd_ = -1;
  std::mutex mutex_;
  std::vector<int> fds_;
  std::vector<std::thread> connections_;
  std::thread acceptor_;
};

Target ping(const Endpoint& server) {
  return stack_target("beast", "json", server, parse_operation("ping"));
}

TEST(LoadOpenLoop, LatencyCountsFromTheIntendedSendTime) {
  TinyServer server(TinyServer::Behaviour::answer, 100);
  LoadSpec spec;
  spec.arrivals = Arrivals::constant;
  spec.rate = 500;  // one call every 2 ms
  spec.duration = 1s;
  const auto result = run_load({ping(server.endpoint())}, spec).front();
  ASSERT_EQ(result.tally.failed(), 0u)
      << result.tally.first_error[0] << result.tally.first_error[1];
  // Every call due in the second was made, the ones the stall delayed too.
  EXPECT_EQ(result.tally.ok, 500u);
  // About 50 calls were due during the 100 ms stall and waited for it, from
  // 100 ms down to 0: the slowest 1% (5 calls) all waited 90 ms or more.
  // Timed from when each was actually sent, only the stalled one would be.
  EXPECT_GE(result.tally.latency.percentile(99), 80e6);
  EXPECT_GE(result.tally.latency.max(), 100'000'000u);
}

TEST(LoadOpenLoop, PoissonArrivalsKeepTheRate) {
  TinyServer server(TinyServer::Behaviour::answer);
  LoadSpec spec;
  spec.arrivals = Arrivals::poisson;
  spec.rate = 400;
  spec.clients = 2;
  spec.duration = 1s;
  const auto result = run_load({ping(server.endpoint())}, spec).front();
  EXPECT_EQ(result.tally.failed(), 0u);
  EXPECT_NEAR(static_cast<double>(result.tally.ok), 400.0, 4 * std::sqrt(400.0));
}

TEST(LoadErrors, RefusedConnections) {
  std::uint16_t port = 0;
  ::close(listen_on_loopback(1, port, "closed port"));  // nothing listens there now
  LoadSpec spec;
  spec.requests_per_client = 3;
  const auto result = run_load({ping({"127.0.0.1", port})}, spec).front();
  EXPECT_EQ(result.tally.ok, 0u);
  EXPECT_EQ(result.tally.errors[static_cast<int>(ErrorKind::refused)], 3u)
      << result.tally.first_error[static_cast<int>(ErrorKind::refused)];
}

TEST(LoadErrors, ResetConnections) {
  TinyServer server(TinyServer::Behaviour::reset);
  LoadSpec spec;
  spec.requests_per_client = 3;
  const auto result = run_load({ping(server.endpoint())}, spec).front();
  EXPECT_EQ(result.tally.ok, 0u);
  EXPECT_EQ(result.tally.errors[static_cast<int>(ErrorKind::reset)], 3u)
      << result.tally.first_error[static_cast<int>(ErrorKind::reset)]
      << result.tally.first_error[static_cast<int>(ErrorKind::wrong_reply)];
}

TEST(LoadErrors, WrongReplies) {
  TinyServer server(TinyServer::Behaviour::wrong);
  LoadSpec spec;
  spec.requests_per_client = 3;
  spec.clients = 2;
  const auto result = run_load({ping(server.endpoint())}, spec).front();
  EXPECT_EQ(result.tally.ok, 0u);
  EXPECT_EQ(result.tally.errors[static_cast<int>(ErrorKind::wrong_reply)], 6u);
  EXPECT_EQ(result.tally.first_error[static_cast<int>(ErrorKind::wrong_reply)],
            "ping returned 'pung'");
}

TEST(LoadErrors, StalledCallsAreTimeoutsAndTheRunStillEnds) {
  TinyServer server(TinyServer::Behaviour::silent);
  LoadSpec spec;
  spec.requests_per_client = 3;
  spec.timeout = 200ms;
  spec.max_time = 500ms;
  spec.on_overrun = [&server] { server.close_connections(); };
  const auto began = std::chrono::steady_clock::now();
  const auto result = run_load({ping(server.endpoint())}, spec).front();
  EXPECT_LT(std::chrono::steady_clock::now() - began, 5s);
  EXPECT_TRUE(result.overran);
  EXPECT_EQ(result.tally.ok, 0u);
  EXPECT_EQ(result.tally.errors[static_cast<int>(ErrorKind::timeout)], 1u);
  EXPECT_EQ(result.tally.failed(), 1u);  // no call starts after the hard bound
}

TEST(LoadServerProcess, UsageParsesProcFiles) {
  const std::string stat =
      "4242 (wsbench server) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 9 0 100 ";
  const std::string status = "Name:\twsbench\nVmHWM:\t   20480 kB\nVmRSS:\t   16384 kB\n";
  const auto usage = parse_usage(stat, status, 100);
  ASSERT_TRUE(usage);
  EXPECT_DOUBLE_EQ(usage->cpu_s, 3.0);
  EXPECT_EQ(usage->rss_kb, 16384u);
  EXPECT_EQ(usage->peak_rss_kb, 20480u);
  EXPECT_FALSE(parse_usage("4242 (x) S 1", status, 100));
  EXPECT_FALSE(parse_usage(stat, "Name:\tx\n", 100));
}

// ---- what a call is timed over ----

Clock::time_point at_ns(std::int64_t ns) {
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}

TEST(LoadTiming, TheSpanRunsFromTheWriteToTheLastByteRead) {
  const std::int64_t t0 = now_ns();
  Timeline t{};
  t.set(kInvoke, t0 + 100);
  t.set(kRequestWritten, t0 + 200);
  t.set(kResponseReceived, t0 + 900);
  t.set(kDecoded, t0 + 1500);
  const auto before = at_ns(t0), after = at_ns(t0 + 2000);
  auto span = span_of(t, before, after);
  EXPECT_EQ(span.from, at_ns(t0 + 200));
  EXPECT_EQ(span.to, at_ns(t0 + 900));
  EXPECT_STREQ(span.from_point, "request_written");
  EXPECT_STREQ(span.to_point, "response_received");

  // No write marked (xmlrpc-c): from the call's start.
  t.set(kRequestWritten, 0);
  span = span_of(t, before, after);
  EXPECT_EQ(span.from, at_ns(t0 + 100));
  EXPECT_STREQ(span.from_point, "invoke");

  // Nothing marked (probes off): around the client's call.
  span = span_of(Timeline{}, before, after);
  EXPECT_EQ(span.from, before);
  EXPECT_EQ(span.to, after);
  EXPECT_STREQ(span.from_point, "call_start");
  EXPECT_STREQ(span.to_point, "call_end");

  // Points left from an earlier call are not this one's.
  Timeline stale{};
  stale.set(kRequestWritten, t0 - 5000);
  stale.set(kResponseReceived, t0 - 4000);
  span = span_of(stale, before, after);
  EXPECT_EQ(span.from, before);
  EXPECT_EQ(span.to, after);
}

// A session whose connect takes 40 ms, whose call spends 2 ms between its
// write and its last byte read, and whose reply check takes 40 ms more.
Target slow_connect_and_check(std::atomic<int>& connects) {
  class Slow : public Session {
   public:
    CallSpan call() override {
      CallSpan span{Clock::now(), {}, "request_written", "response_received"};
      std::this_thread::sleep_for(2ms);
      span.to = Clock::now();
      std::this_thread::sleep_for(40ms);  // the check
      return span;
    }
  };
  return {"slow", [&connects]() -> std::unique_ptr<Session> {
            ++connects;
            std::this_thread::sleep_for(40ms);
            return std::make_unique<Slow>();
          }};
}

TEST(LoadTiming, ConnectsAndChecksStayOutOfTheCallsLatency) {
  std::atomic<int> connects{0};
  LoadSpec spec;
  spec.clients = 2;
  spec.requests_per_client = 3;
  const auto result = run_load({slow_connect_and_check(connects)}, spec).front();
  ASSERT_EQ(result.tally.ok, 6u);
  // Timed around connect() and call(), every latency would be 42 ms or more.
  EXPECT_GE(result.tally.latency.min(), 2'000'000u);
  EXPECT_LT(result.tally.latency.max(), 30'000'000u);
  EXPECT_EQ(result.tally.connects, 2u);
  EXPECT_EQ(connects.load(), 2);
  EXPECT_EQ(result.tally.connect_latency.count(), 2u);
  EXPECT_GE(result.tally.connect_latency.min(), 40'000'000u);
  EXPECT_STREQ(result.tally.timed_from, "request_written");
}

// Whether a stack's client opens its connection when it is made or in its
// first call (Target::connects_in_first_call): a listener that nobody
// accepts from becomes readable once a connection is made to it. The
// connect runs beside the check: a TLS client waits in its handshake, and
// gRPC's for the server's HTTP/2 settings, which nobody sends here; closing
// the listener then resets the queued connection and ends the wait.
TEST(LoadTiming, EachStackConnectsWhenTheDriverSaysItDoes) {
  for (const auto& stack : all_stacks()) {
    std::uint16_t port = 0;
    const int listener = listen_on_loopback(4, port, "connect probe");
    auto connecting = std::async(std::launch::async, [&stack, port] {
      try {
        return stack.connect({"127.0.0.1", port}, stack.codecs.front());
      } catch (const CallError&) {
        return std::unique_ptr<Client>{};  // its TCP connection was made all the same
      }
    });
    pollfd ready{listener, POLLIN, 0};
    const bool connected = ::poll(&ready, 1, 300) == 1;
    EXPECT_EQ(connected, !connects_in_first_call(stack.name)) << stack.name;
    ::close(listener);
    connecting.get();
  }
}

class LoadEveryStack : public ::testing::TestWithParam<testing::StackCodec> {};

// Four clients, 25 verified calls each, against wsbench-server as a child
// process on loopback, sampled while it serves.
TEST_P(LoadEveryStack, SmallClosedLoopThroughAChildServer) {
  const auto& [stack, codec] = GetParam();
  if (stack.ends_with("-tls"))
    GTEST_SKIP() << "a TLS client trusts only its own process's certificate (src/common/tls.h): "
                    "a child server's is another";
  ServerProcess server(WSBENCH_SERVER_BINARY, {stack}, std::nullopt);
  UsageSampler sampler(server.pid(), 50ms);
  LoadSpec spec;
  spec.clients = 4;
  spec.requests_per_client = 25;
  spec.max_time = 30s;
  const char* echo = find_codec(codec).texts_only ? "echo:text" : "echo:objects/200";
  for (const char* op : {"ping", echo}) {
    const auto result =
        run_load({stack_target(stack, codec, server.endpoint(stack), parse_operation(op))}, spec)
            .front();
    EXPECT_EQ(result.tally.ok, 100u) << op;
    for (std::size_t k = 0; k < kErrorKinds; ++k)
      EXPECT_EQ(result.tally.errors[k], 0u) << op << ": " << result.tally.first_error[k];
    EXPECT_EQ(result.tally.latency.count(), 100u);
    // One connect per client, timed apart; the calls timed from the
    // request's write where the stack marks it (every stack marks the
    // reply's arrival).
    EXPECT_EQ(result.tally.connects, 4u) << op;
    EXPECT_GT(result.tally.connect_latency.min(), 0u) << op;
    EXPECT_STREQ(result.tally.timed_from,
                 connects_in_first_call(stack) ? "invoke" : "request_written");
    EXPECT_STREQ(result.tally.timed_to, "response_received");
  }
  const auto figures = server_figures(sampler.finish());
  EXPECT_GE(figures.samples, 2u);
  EXPECT_GT(figures.peak_rss_kb, 1000u);
  EXPECT_GE(figures.peak_rss_kb, figures.steady_rss_kb);
}

// Not the TLS stacks: their certificate is made per process
// (common/tls.h), so a client here does not trust the child server's.
INSTANTIATE_TEST_SUITE_P(Stacks, LoadEveryStack,
                         ::testing::ValuesIn(testing::every_stack_codec([](const auto& combo) {
                           return !combo.stack.ends_with("-tls");
                         })),
                         [](const auto& p) { return testing::test_name(p.param); });

TEST(LoadMixed, TwoStacksAtOnceEachWithItsOwnFigures) {
  ServerProcess soap(WSBENCH_SERVER_BINARY, {"gsoap"}, std::nullopt);
  ServerProcess rest(WSBENCH_SERVER_BINARY, {"beast"}, std::nullopt);
  const auto op = parse_operation("primes:1000");
  LoadSpec spec;
  spec.clients = 3;
  spec.requests_per_client = 10;
  const auto results = run_load({stack_target("gsoap", "soap", soap.endpoint("gsoap"), op),
                                 stack_target("beast", "json", rest.endpoint("beast"), op)},
                                spec);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].label, "gsoap/soap primes:1000");
  EXPECT_EQ(results[1].label, "beast/json primes:1000");
  for (const auto& r : results) {
    EXPECT_EQ(r.tally.ok, 30u) << r.label;
    EXPECT_EQ(r.tally.failed(), 0u) << r.label;
  }
}

// The threads of process `pid` whose allowed CPUs are not just `cpu`
// (/proc/PID/task/*/status, Cpus_allowed_list).
int threads_off_cpu(pid_t pid, int cpu) {
  int off = 0;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line))
      if (line.starts_with("Cpus_allowed_list:"))
        off += line.substr(line.find(':') + 1) != "\t" + std::to_string(cpu);
  }
  return off;
}

// gRPC starts and places its own threads, out of ServerOptions::cpu's
// reach: wsbench-server pins its whole process, so every one of them,
// grown under load, runs on the server's vCPU. Without the pin (the fault)
// the check finds threads free to run anywhere.
TEST(LoadServerProcess, EveryThreadOfAGrpcServerRunsOnItsCpu) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 2) GTEST_SKIP() << "one vCPU: every thread runs on it anyway";
  const int cpu = static_cast<int>(cpus - 1);
  const auto load = [](const ServerProcess& server) {
    LoadSpec spec;
    spec.clients = 8;
    spec.requests_per_client = 20;
    const auto results = run_load(
        {stack_target("grpc", "protobuf", server.endpoint("grpc"), parse_operation("ping"))}, spec);
    EXPECT_EQ(results.at(0).tally.ok, 160u);
  };
  ServerProcess pinned(WSBENCH_SERVER_BINARY, {"grpc"}, cpu);
  load(pinned);
  EXPECT_EQ(threads_off_cpu(pinned.pid(), cpu), 0);
  ServerProcess unpinned(WSBENCH_SERVER_BINARY, {"grpc"}, std::nullopt);
  load(unpinned);
  EXPECT_GT(threads_off_cpu(unpinned.pid(), cpu), 0) << "the check cannot see an unpinned thread";
}

TEST(LoadRamp, ClientsJoinOneByOne) {
  TinyServer server(TinyServer::Behaviour::answer);
  LoadSpec spec;
  spec.clients = 3;
  spec.ramp_interval = 300ms;
  spec.duration = 900ms;
  const auto result = run_load({ping(server.endpoint())}, spec).front();
  EXPECT_EQ(result.tally.failed(), 0u);
  EXPECT_GT(result.tally.ok, 0u);
}

TEST(LoadSearch, StopsAtTheFirstFailure) {
  TinyServer server(TinyServer::Behaviour::wrong);
  LoadSpec spec;
  spec.requests_per_client = 2;
  const auto search = search_max_clients({ping(server.endpoint())}, spec, 1, 1, 4);
  EXPECT_EQ(search.max_clean_clients, 0);
  EXPECT_EQ(search.runs.size(), 1u);

  TinyServer good(TinyServer::Behaviour::answer);
  const auto clean = search_max_clients({ping(good.endpoint())}, spec, 1, 2, 5);
  EXPECT_EQ(clean.max_clean_clients, 5);
  EXPECT_EQ(clean.runs.size(), 3u);
}

TEST(LoadRamp, AFailureStopsTheRunWithoutWaitingForLateJoiners) {
  TinyServer server(TinyServer::Behaviour::wrong);
  LoadSpec spec;
  spec.clients = 2;
  spec.client_starts = {0ms, 20s};
  spec.duration = 30s;
  spec.stop_on_failure = true;
  const auto began = std::chrono::steady_clock::now();
  const auto result = run_load({ping(server.endpoint())}, spec).front();
  EXPECT_LT(std::chrono::steady_clock::now() - began, 10s);
  EXPECT_EQ(result.tally.failed(), 1u);
  ASSERT_TRUE(result.tally.first_failure_sent);
  EXPECT_LT(*result.tally.first_failure_sent, 1s);
}

// Users 1, 2, 3 a second each, then 5 for a second; the server's CPU grows
// by half a second per second and its RSS by 1 MB per second.
E8Plan small_plan() {
  E8Plan plan;
  plan.ramp_to = 3;
  plan.ramp_every = 1000ms;
  plan.search_users = {5};
  plan.search_hold = 1000ms;
  return plan;
}

RunRecord ramp_record(double elapsed_s) {
  RunRecord r;
  r.run.elapsed_s = elapsed_s;
  r.samples_offset_s = 0.2;
  for (int i = 0; i <= 10; ++i) {
    const double t = 0.5 * i;
    r.server_samples.push_back(
        {t, ProcessUsage{0.5 * t, static_cast<std::uint64_t>(1024 * (10 + t)), 0}});
  }
  // 50 ms intervals: 20 calls a second, and two more after the run's end
  // (calls that were still out).
  r.run.tally.ok_per_second.assign(static_cast<std::size_t>(std::lround(elapsed_s / 0.05)) + 2, 1);
  return r;
}

TEST(LoadE8, TheSpecStartsEachUserAtItsStep) {
  const auto spec = e8_spec(small_plan());
  EXPECT_EQ(spec.clients, 5);
  EXPECT_EQ(spec.client_starts, (std::vector<std::chrono::milliseconds>{0ms, 1s, 2s, 3s, 3s}));
  EXPECT_EQ(spec.duration, 4s);
  EXPECT_TRUE(spec.stop_on_failure);
  EXPECT_EQ(parse_search_users("24:8:48", 21), (std::vector<int>{24, 32, 40, 48}));
  EXPECT_THROW(parse_search_users("8:8:48", 21), std::invalid_argument);
  EXPECT_THROW(parse_search_users("24-48", 21), std::invalid_argument);
}

TEST(LoadE8, StepsCarryTheServersCpuAndRss) {
  auto r = ramp_record(4.0);
  add_e8_steps(r, small_plan());
  ASSERT_EQ(r.steps.size(), 4u);
  for (const auto& s : r.steps) {
    EXPECT_NEAR(s.cpu_percent, 50, 1e-6) << s.users;
    EXPECT_EQ(s.ok, s.users == 5 ? 22u : 20u) << s.users;
  }
  // Step 2 spans 1.0-2.0 s of the run, 1.2-2.2 s of the samples: the
  // largest RSS sampled in it is at 2.0 s, 12 MB.
  EXPECT_DOUBLE_EQ(r.steps[1].rss_mb, 12);
  EXPECT_EQ(r.max_users, 5);
  EXPECT_TRUE(r.max_users_at_bound);
}

TEST(LoadE8, TheMostUsersServedIsTheStepBeforeTheFirstFailedCall) {
  auto r = ramp_record(2.6);
  r.run.tally.first_failure_sent = 2500ms;  // sent with 3 users
  add_e8_steps(r, small_plan());
  ASSERT_EQ(r.steps.size(), 3u);  // the run stopped before the fourth step
  EXPECT_EQ(r.max_users, 2);
  EXPECT_FALSE(r.max_users_at_bound);
  // Calls still out when the run stopped belong to its last step.
  EXPECT_EQ(r.steps[2].ok, 14u);

  // Calls stuck past the timeout with none failed: the clients or the
  // server were starved, and nothing is known to have been served.
  auto stalled = ramp_record(4.0);
  stalled.run.overran = true;
  add_e8_steps(stalled, small_plan());
  EXPECT_EQ(stalled.max_users, 0);
  EXPECT_FALSE(stalled.max_users_at_bound);

  auto first = ramp_record(0.3);
  first.run.tally.first_failure_sent = 100ms;
  add_e8_steps(first, small_plan());
  EXPECT_EQ(first.max_users, 0);
}

}  // namespace
}  // namespace wsb::load
