#include "load/driver.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
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
  void call() override {
    const std::string diff = call_(*client_);
    if (!diff.empty()) throw WrongReply(diff);
  }

 private:
  std::unique_ptr<Client> client_;
  Call call_;
};

class EchoSession : public Session {
 public:
  EchoSession(std::size_t bytes, std::optional<int> server_cpu)
      : floor_(bytes, bytes, ConnectionOptions{}, server_cpu) {}
  void call() override { floor_.round_trip(); }

 private:
  TcpFloor floor_;
};

using Clock = std::chrono::steady_clock;

// The series interval of the run a moment falls in.
std::size_t interval_of(Clock::time_point start, Clock::time_point t,
                        std::chrono::milliseconds interval) {
  return static_cast<std::size_t>((t - start) / interval);
}

void count_at(std::vector<std::uint64_t>& series, std::size_t second) {
  if (series.size() <= second) series.resize(second + 1, 0);
  ++series[second];
}

// One client's loop: calls until its count, the run's end or a stop.
class ClientLoop {
 public:
  ClientLoop(const Target& target, const LoadSpec& spec, std::atomic<bool>& stop,
             std::uint64_t seed, int index)
      : target_(target), spec_(spec), stop_(stop), random_(seed), index_(index) {}

  // The run's clock, set once every thread exists (creating a thousand
  // threads takes long enough to skew an open loop's first intended times).
  void run(Clock::time_point start, Clock::time_point end) {
    start_ = start;
    end_ = end;
    Clock::time_point intended =
        start_ +
        (spec_.client_starts.empty() ? index_ * spec_.ramp_interval : spec_.client_starts[index_]);
    // Waits in slices: a run that stops early does not wait for late joiners.
    while (Clock::now() < intended && !stop_.load(std::memory_order_relaxed))
      std::this_thread::sleep_until(
          std::min(intended, Clock::now() + std::chrono::milliseconds(10)));
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
      } else {
        intended = Clock::now();
      }
      // An open loop makes every call due before the end, even one a
      // stalled server made late: dropping it would hide the backlog.
      if (stop_.load(std::memory_order_relaxed) || (!open && Clock::now() >= end_)) break;
      one_call(intended);
    }
  }

  Tally& tally() { return tally_; }

 private:
  void one_call(Clock::time_point sent) {
    bool connecting = false;
    std::string failure;
    ErrorKind kind = ErrorKind::wrong_reply;
    try {
      if (!session_) {
        connecting = true;
        session_ = target_.connect();
        connecting = false;
      }
      session_->call();
    } catch (const WrongReply& e) {
      failure = e.what();
    } catch (const std::exception& e) {
      failure = e.what();
      kind = classify_failure(failure, connecting);
      session_.reset();  // the next call opens a new connection
    }
    const auto done = Clock::now();
    const auto latency = done - sent;
    const std::size_t second = interval_of(start_, done, spec_.series_interval);
    if (latency > spec_.timeout || !failure.empty()) {
      const auto offset = std::chrono::duration_cast<std::chrono::nanoseconds>(sent - start_);
      if (!tally_.first_failure_sent || offset < *tally_.first_failure_sent)
        tally_.first_failure_sent = offset;
      if (spec_.stop_on_failure) stop_ = true;
    }
    if (latency > spec_.timeout) {
      tally_.add_error(ErrorKind::timeout, failure.empty() ? "a reply came after the timeout"
                                                           : "after the timeout: " + failure);
      count_at(tally_.failed_per_second, second);
      return;
    }
    if (!failure.empty()) {
      tally_.add_error(kind, failure);
      count_at(tally_.failed_per_second, second);
      // A refused connect answers at once: do not spin on it.
      if (connecting) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return;
    }
    ++tally_.ok;
    tally_.latency.record(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(latency).count()));
    count_at(tally_.ok_per_second, second);
  }

  const Target& target_;
  const LoadSpec& spec_;
  Clock::time_point start_, end_;
  std::atomic<bool>& stop_;
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

Target stack_target(const std::string& stack, const std::string& codec, const Endpoint& server,
                    const OperationChoice& operation) {
  const StackEntry& entry = find_stack(stack);
  if (std::find(entry.codecs.begin(), entry.codecs.end(), codec) == entry.codecs.end())
    throw std::invalid_argument("stack " + stack + " does not carry codec " + codec);
  CallFactory make_call = operation.operation->prepare(operation.argument, codec);
  return {stack + "/" + codec + " " + operation.label(),
          [&entry, server, codec, make_call]() -> std::unique_ptr<Session> {
            return std::make_unique<StackSession>(entry.connect(server, codec), make_call());
          }};
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

  std::atomic<bool> stop{false}, go{false};
  Clock::time_point start, end;
  std::vector<std::unique_ptr<ClientLoop>> loops;
  std::vector<std::thread> threads;
  std::atomic<int> running{0};
  for (std::size_t t = 0; t < targets.size(); ++t)
    for (int c = 0; c < spec.clients; ++c)
      loops.push_back(std::make_unique<ClientLoop>(targets[t], spec, stop,
                                                   spec.seed * 1000003 + t * 65537 + c, c));
  const std::optional<int> cpu = spec.client_cpu;
  try {
    for (auto& loop : loops) {
      threads.emplace_back([&loop, &running, &go, &start, &end, cpu] {
        pin_current_thread(cpu);
        while (!go.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
        loop->run(start, end);
        running.fetch_sub(1);
      });
      running.fetch_add(1);
    }
  } catch (const std::system_error& e) {
    // Out of threads (a client count beyond the process's limits): the
    // clients started so far leave without calling.
    stop = true;
    go = true;
    for (auto& thread : threads) thread.join();
    throw std::runtime_error("cannot start " + std::to_string(loops.size()) +
                             " client threads: " + e.what());
  }
  start = Clock::now() + std::chrono::milliseconds(5);
  end = start + spec.max_time;
  if (spec.duration.count() > 0) end = std::min(end, start + spec.duration);
  go = true;
  // A timeout past the run's end (its duration, or the hard bound), calls
  // still in progress are stuck.
  bool overran = false;
  const auto stuck_after = end + spec.timeout;
  while (running.load() > 0) {
    if (Clock::now() >= start + spec.max_time) stop = true;
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
