#include "load/driver.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>

#include "common/clock.h"
#include "common/placement.h"
#include "harness/tcp_floor.h"

namespace wsb::load {
namespace {

bool contains(const std::string& haystack, const char* needle) {
  return haystack.find(needle) != std::string::npos;
}

class StackSession : public Session {
 public:
  StackSession(std::unique_ptr<Client> client, Call call)
      : client_(std::move(client)), call_(std::move(call)) {}
  CallSpan call() override {
    const auto before = Clock::now();
    call_.send(*client_);
    const auto after = Clock::now();
    const CallSpan span = span_of(client_->last_timeline(), before, after);
    // After the span: comparing the reply is the driver's work, not the call's.
    if (std::string diff = call_.check(); !diff.empty()) throw WrongReply(diff);
    return span;
  }

 private:
  std::unique_ptr<Client> client_;
  Call call_;
};

// No HTTP and no codec: the round trip is all there is to time.
class EchoSession : public Session {
 public:
  EchoSession(std::size_t bytes, std::optional<int> server_cpu)
      : floor_(bytes, bytes, ConnectionOptions{}, server_cpu) {}
  CallSpan call() override {
    const auto before = Clock::now();
    floor_.round_trip();
    return {before, Clock::now(), "call_start", "call_end"};
  }

 private:
  TcpFloor floor_;
};

std::uint64_t ns_of(Clock::duration d) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

// The series interval of the run a moment falls in.
std::size_t interval_of(Clock::time_point start, Clock::time_point t,
                        std::chrono::milliseconds interval) {
  return static_cast<std::size_t>((t - start) / interval);
}

void count_at(std::vector<std::uint64_t>& series, std::size_t second) {
  if (series.size() <= second) series.resize(second + 1, 0);
  ++series[second];
}

// A flag set once, with a wake-up for the threads waiting on it: E8's
// search starts thousands of clients whose turn comes late, and polling
// them would load the driver's vCPU while the ramp is being measured.
class Signal {
 public:
  bool is_set() const { return flag_.load(std::memory_order_relaxed); }
  void set() {
    {
      std::lock_guard lock(mutex_);
      flag_ = true;
    }
    wake_.notify_all();
  }
  // Until the flag is set or `deadline` passes; true if it is set.
  bool wait_until(Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return wake_.wait_until(lock, deadline, [this] { return flag_.load(); });
  }
  void wait() {
    std::unique_lock lock(mutex_);
    wake_.wait(lock, [this] { return flag_.load(); });
  }

 private:
  std::atomic<bool> flag_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
};

// One client's loop: calls until its count, the run's end or a stop.
class ClientLoop {
 public:
  ClientLoop(const Target& target, const LoadSpec& spec, Signal& stop, std::uint64_t seed,
             int index)
      : target_(target), spec_(spec), stop_(stop), random_(seed), index_(index) {}

  // The run's clock, set once every thread exists (creating a thousand
  // threads takes long enough to skew an open loop's first intended times).
  void run(Clock::time_point start, Clock::time_point end) {
    start_ = start;
    end_ = end;
    Clock::time_point intended =
        start_ +
        (spec_.client_starts.empty() ? index_ * spec_.ramp_interval : spec_.client_starts[index_]);
    // Woken by a stop: a run that stops early does not wait for late joiners.
    if (Clock::now() < intended) stop_.wait_until(intended);
    const bool open = spec_.arrivals != Arrivals::closed;
    // wrk2's scheme: each client sends at rate / clients; its own arrivals
    // are Poisson or evenly spaced, so together they are too.
    const double per_client = open ? spec_.rate / spec_.clients : 0;
    std::exponential_distribution<double> gaps(per_client > 0 ? per_client : 1);
    for (std::uint64_t n = 0; spec_.requests_per_client == 0 || n < spec_.requests_per_client;
         ++n) {
      if (open) {
        if (n > 0) {
          const double gap_s = spec_.arrivals == Arrivals::poisson ? gaps(random_) : 1 / per_client;
          intended +=
              std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gap_s));
        }
        if (intended >= end_) break;
        std::this_thread::sleep_until(intended);
      }
      // An open loop makes every call due before the end, even one a
      // stalled server made late: dropping it would hide the backlog.
      if (stop_.is_set() || (!open && Clock::now() >= end_)) break;
      one_call(open ? std::optional(intended) : std::nullopt);
    }
  }

  Tally& tally() { return tally_; }

 private:
  // One call, after a connect if the client has none. A closed loop's call
  // is timed over its span; an open loop's from `intended`, when it was
  // due, so a wait for the previous call or a reconnect is charged to it.
  void one_call(std::optional<Clock::time_point> intended) {
    if (!session_ && !connect(intended)) return;
    const auto started = Clock::now();
    CallSpan span;
    try {
      span = session_->call();
    } catch (const WrongReply& e) {
      finish(intended.value_or(started), Clock::now(), Failure{ErrorKind::wrong_reply, e.what()});
      return;
    } catch (const std::exception& e) {
      session_.reset();  // the next call opens a new connection
      finish(intended.value_or(started), Clock::now(),
             Failure{classify_failure(e.what(), false), e.what()});
      return;
    }
    finish(intended.value_or(span.from), span.to, {});
    if (*tally_.timed_from == '\0') {
      tally_.timed_from = span.from_point;
      tally_.timed_to = span.to_point;
    }
  }

  // Opens a connection, timed apart from the calls. A connect that fails
  // is a failed call, as its user would see it.
  bool connect(std::optional<Clock::time_point> intended) {
    const auto began = Clock::now();
    try {
      session_ = target_.connect();
    } catch (const std::exception& e) {
      finish(intended.value_or(began), Clock::now(),
             Failure{classify_failure(e.what(), true), e.what()});
      // A refused connect answers at once: do not spin on it.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return false;
    }
    ++tally_.connects;
    tally_.connect_latency.record(ns_of(Clock::now() - began));
    return true;
  }

  struct Failure {
    ErrorKind kind;
    std::string message;
  };

  // Counts a call sent at `sent` that ended at `done`: a success, or a
  // failure (whatever the outcome, one past the timeout is a timeout).
  void finish(Clock::time_point sent, Clock::time_point done, std::optional<Failure> failure) {
    const auto latency = done - sent;
    const std::size_t second = interval_of(start_, done, spec_.series_interval);
    if (latency > spec_.timeout || failure) {
      const auto offset = std::chrono::duration_cast<std::chrono::nanoseconds>(sent - start_);
      if (!tally_.first_failure_sent || offset < *tally_.first_failure_sent)
        tally_.first_failure_sent = offset;
      if (spec_.stop_on_failure && !stop_.is_set()) stop_.set();
      if (latency > spec_.timeout)
        tally_.add_error(ErrorKind::timeout, failure ? "after the timeout: " + failure->message
                                                     : "a reply came after the timeout");
      else
        tally_.add_error(failure->kind, failure->message);
      count_at(tally_.failed_per_second, second);
      return;
    }
    ++tally_.ok;
    tally_.latency.record(ns_of(latency));
    count_at(tally_.ok_per_second, second);
  }

  const Target& target_;
  const LoadSpec& spec_;
  Clock::time_point start_, end_;
  Signal& stop_;
  std::mt19937_64 random_;
  int index_;
  std::unique_ptr<Session> session_;
  Tally tally_;
};

}  // namespace

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::refused:
      return "refused";
    case ErrorKind::reset:
      return "reset";
    case ErrorKind::timeout:
      return "timeout";
    case ErrorKind::wrong_reply:
      return "wrong_reply";
  }
  return "?";
}

ErrorKind classify_failure(const std::string& message, bool connecting) {
  std::string text = message;
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (contains(text, "timed out") || contains(text, "timeout")) return ErrorKind::timeout;
  if (connecting || contains(text, "refused") || contains(text, "couldn't connect"))
    return ErrorKind::refused;
  // Boost: "Connection reset by peer", "end of stream", "Broken pipe";
  // curl: "Recv failure", "Empty reply"; gSOAP: "EOF was reached".
  for (const char* reset : {"reset", "end of stream", "broken pipe", "eof", "closed",
                            "recv failure", "empty reply", "no connection"})
    if (contains(text, reset)) return ErrorKind::reset;
  return ErrorKind::wrong_reply;
}

void Tally::add_error(ErrorKind kind, const std::string& message) {
  const auto i = static_cast<std::size_t>(kind);
  if (errors[i]++ == 0) first_error[i] = message;
}

void Tally::merge(const Tally& other) {
  latency.merge(other.latency);
  ok += other.ok;
  connect_latency.merge(other.connect_latency);
  connects += other.connects;
  if (*timed_from == '\0') {
    timed_from = other.timed_from;
    timed_to = other.timed_to;
  }
  if (other.first_failure_sent &&
      (!first_failure_sent || *other.first_failure_sent < *first_failure_sent))
    first_failure_sent = other.first_failure_sent;
  for (std::size_t i = 0; i < kErrorKinds; ++i) {
    if (errors[i] == 0) first_error[i] = other.first_error[i];
    errors[i] += other.errors[i];
  }
  for (auto [mine, theirs] : {std::pair{&ok_per_second, &other.ok_per_second},
                              std::pair{&failed_per_second, &other.failed_per_second}}) {
    if (mine->size() < theirs->size()) mine->resize(theirs->size(), 0);
    for (std::size_t s = 0; s < theirs->size(); ++s) (*mine)[s] += (*theirs)[s];
  }
}

std::uint64_t Tally::failed() const {
  std::uint64_t n = 0;
  for (auto e : errors) n += e;
  return n;
}

CallSpan span_of(const Timeline& timeline, Clock::time_point before, Clock::time_point after) {
  CallSpan span{before, after, "call_start", "call_end"};
  // A point outside the call (a timeline left from an earlier one) is not
  // this call's.
  const auto point = [&](Mark m) -> std::optional<Clock::time_point> {
    const Clock::time_point at{
        std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(timeline[m]))};
    if (timeline[m] == 0 || at < before || at > after) return std::nullopt;
    return at;
  };
  if (const auto written = point(kRequestWritten)) {
    span.from = *written;
    span.from_point = "request_written";
  } else if (const auto invoked = point(kInvoke)) {
    span.from = *invoked;
    span.from_point = "invoke";
  }
  if (const auto received = point(kResponseReceived); received && *received >= span.from) {
    span.to = *received;
    span.to_point = "response_received";
  }
  return span;
}

bool connects_in_first_call(const std::string& stack) { return stack == "xmlrpc-c"; }

Target stack_target(const std::string& stack, const std::string& codec, const Endpoint& server,
                    const OperationChoice& operation) {
  const StackEntry& entry = find_stack(stack);
  if (std::find(entry.codecs.begin(), entry.codecs.end(), codec) == entry.codecs.end())
    throw std::invalid_argument("stack " + stack + " does not carry codec " + codec);
  CallFactory make_call = operation.operation->prepare(operation.argument, codec);
  return {stack + "/" + codec + " " + operation.label(),
          [&entry, server, codec, make_call]() -> std::unique_ptr<Session> {
            return std::make_unique<StackSession>(entry.connect(server, codec), make_call());
          },
          connects_in_first_call(stack)};
}

Target echo_target(std::size_t bytes, std::optional<int> server_cpu) {
  return {"tcp-echo " + std::to_string(bytes) + " B", [bytes, server_cpu] {
            return std::unique_ptr<Session>(std::make_unique<EchoSession>(bytes, server_cpu));
          }};
}

std::vector<RunResult> run_load(const std::vector<Target>& targets, const LoadSpec& spec) {
  if (spec.clients < 1 || spec.clients > kMaxClients)
    throw std::invalid_argument("clients must be 1 to " + std::to_string(kMaxClients) + ", not " +
                                std::to_string(spec.clients));
  if (spec.requests_per_client == 0 && spec.duration.count() <= 0)
    throw std::invalid_argument("a run needs a request count or a duration");
  if (spec.arrivals != Arrivals::closed && (spec.rate <= 0 || spec.duration.count() <= 0))
    throw std::invalid_argument("an open loop needs a rate and a duration");
  if (!spec.client_starts.empty() &&
      spec.client_starts.size() != static_cast<std::size_t>(spec.clients))
    throw std::invalid_argument("client_starts needs one start per client");
  if (spec.series_interval.count() <= 0)
    throw std::invalid_argument("the series interval must be positive");

  Signal stop, go;
  Clock::time_point start, end;
  std::vector<std::unique_ptr<ClientLoop>> loops;
  std::vector<std::thread> threads;
  std::atomic<int> running{0}, waiting{0};
  for (std::size_t t = 0; t < targets.size(); ++t)
    for (int c = 0; c < spec.clients; ++c)
      loops.push_back(std::make_unique<ClientLoop>(targets[t], spec, stop,
                                                   spec.seed * 1000003 + t * 65537 + c, c));
  const std::optional<int> cpu = spec.client_cpu;
  try {
    for (auto& loop : loops) {
      threads.emplace_back([&loop, &running, &waiting, &go, &start, &end, cpu] {
        pin_current_thread(cpu);
        waiting.fetch_add(1);
        go.wait();
        loop->run(start, end);
        running.fetch_sub(1);
      });
      running.fetch_add(1);
    }
  } catch (const std::system_error& e) {
    // Out of threads (a client count beyond the process's limits): the
    // clients started so far leave without calling.
    stop.set();
    go.set();
    for (auto& thread : threads) thread.join();
    throw std::runtime_error("cannot start " + std::to_string(loops.size()) +
                             " client threads: " + e.what());
  }
  // The clock starts once every thread has run up to the gate: thousands
  // of new threads still queued for their first slice on the clients'
  // vCPU would starve the first users' calls (E8's ramp) for seconds.
  while (waiting.load() < static_cast<int>(loops.size()))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  start = Clock::now() + std::chrono::milliseconds(5);
  end = start + spec.max_time;
  if (spec.duration.count() > 0) end = std::min(end, start + spec.duration);
  go.set();
  // A timeout past the run's end (its duration, or the hard bound), calls
  // still in progress are stuck.
  bool overran = false;
  const auto stuck_after = end + spec.timeout;
  while (running.load() > 0) {
    if (Clock::now() >= start + spec.max_time && !stop.is_set()) stop.set();
    if (Clock::now() >= stuck_after && !overran) {
      overran = true;
      if (spec.on_overrun) spec.on_overrun();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto& thread : threads) thread.join();
  const auto finished = Clock::now();

  std::vector<RunResult> results;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    RunResult r;
    r.label = targets[t].label;
    r.clients = spec.clients;
    r.overran = overran;
    r.connects_in_first_call = targets[t].connects_in_first_call;
    r.started = start;
    r.elapsed_s = std::chrono::duration<double>(finished - start).count();
    for (int c = 0; c < spec.clients; ++c) r.tally.merge(loops[t * spec.clients + c]->tally());
    results.push_back(std::move(r));
  }
  return results;
}

SearchResult search_max_clients(const std::vector<Target>& targets, LoadSpec spec, int first,
                                int step, int last) {
  if (first < 1 || step < 1 || last < first)
    throw std::invalid_argument("search needs 1 <= first <= last and step >= 1");
  SearchResult result;
  for (int clients = first; clients <= last; clients += step) {
    spec.clients = clients;
    result.runs.push_back(run_load(targets, spec));
    bool clean = true;
    for (const auto& run : result.runs.back()) clean = clean && run.tally.failed() == 0;
    if (!clean) break;
    result.max_clean_clients = clients;
  }
  return result;
}

}  // namespace wsb::load
