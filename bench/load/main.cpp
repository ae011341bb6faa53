// wsbench-load: many clients calling one or two stacks at once (closed or
// open loop, ramp, search for the most clients served), with the server as
// a child process whose CPU and memory are sampled; --experiment E7 runs
// the concurrency experiment, --experiment E8 the dictionary under ramping
// users. --help lists the options.
#include <sys/resource.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/dictionary.h"
#include "common/phases.h"
#include "common/placement.h"
#include "harness/environment.h"
#include "load/driver.h"
#include "load/e8.h"
#include "load/report.h"
#include "load/server_process.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace wsb::load;

namespace {

struct Options {
  std::vector<std::string> loads;  // STACK/CODEC
  std::vector<std::string> targets;
  std::string operation = "ping";
  std::string experiment;
  std::string arrivals = "closed";
  std::string placement = "split";
  std::string search;
  std::string out;
  std::string server_binary;
  int clients = 1;
  std::uint64_t requests = 0;
  double duration_s = 0;
  double rate = 0;
  double ramp_every_s = 0;
  int ramp_to = 0;
  int timeout_ms = 0;  // 0: the mode's default
  double max_time_s = 120;
  int repeat = 0;        // 0: the experiment's own count (E7 6, E8 3, else 1)
  int primes = 100'000;  // E7: primes(N)
  std::size_t echo_bytes = 0;
  // E8
  std::string sizes = "x1,x10,x15,x20";
  double hold_s = 0.5;
  unsigned define_percent = 90;
  std::string dictionary_dir;
  // Given to every server started (E8: its dictionary's size and folder).
  std::vector<std::string> server_args;
  int server_startup_s = 10;
};

const std::pair<int, int> kE7Shapes[] = {{10, 4}, {40, 1}, {20, 2}};
// E7's both-at-once column with SOAP and REST on one Beast server: a column
// of its own, as "SOAP+REST" holds beast/json beside gSOAP too.
constexpr const char* kE7MatchedMixed = "SOAP+REST on Beast";

// Where placement puts the driver's clients and the servers.
struct Cpus {
  std::optional<int> clients, server;
  std::string describe() const {
    auto name = [](const std::optional<int>& cpu) {
      return cpu ? "cpu " + std::to_string(*cpu) : std::string("unpinned");
    };
    return "driver " + name(clients) + ", server " + name(server);
  }
};

double process_cpu_s() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + tv.tv_usec * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

fs::path default_server_binary() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("wsbench-server") : self.parent_path() / "wsbench-server";
}

// The servers a set of stacks needs: one child process per stack (each
// library's CPU and memory its own; two encodings of one stack, as E7's
// SOAP and REST both on Beast, share its process and its I/O threads), or
// the endpoints given by --target.
class Servers {
 public:
  Servers(const Options& o, const std::vector<std::string>& stacks, const Cpus& cpus) {
    for (const auto& text : o.targets) {
      auto [stack, endpoint] = wsb::parse_stack_endpoint(text);
      remote_[stack] = endpoint;
    }
    const fs::path binary =
        o.server_binary.empty() ? default_server_binary() : fs::path(o.server_binary);
    std::map<std::string, std::shared_ptr<ServerProcess>> started;
    for (const auto& stack : stacks) {
      if (remote_.count(stack) != 0) {
        processes_.push_back(nullptr);
        continue;
      }
      auto& process = started[stack];
      if (!process)
        process =
            std::make_shared<ServerProcess>(binary, std::vector{stack}, cpus.server, o.server_args,
                                            std::chrono::seconds(o.server_startup_s));
      processes_.push_back(process);
    }
  }
  wsb::Endpoint endpoint(std::size_t i, const std::string& stack) const {
    return processes_[i] ? processes_[i]->endpoint(stack) : remote_.at(stack);
  }
  ServerProcess* process(std::size_t i) const { return processes_[i].get(); }
  void kill_all() {
    for (auto& p : processes_)
      if (p) p->kill_now();
  }

 private:
  std::map<std::string, wsb::Endpoint> remote_;
  std::vector<std::shared_ptr<ServerProcess>> processes_;
};

std::pair<std::string, std::string> split_load(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos)
    throw std::invalid_argument("--load takes STACK/CODEC (beast/json), not '" + text + "'");
  return {text.substr(0, slash), text.substr(slash + 1)};
}

// One verified call per target before anything is timed.
void verify(const std::vector<Target>& targets) {
  for (const auto& target : targets) {
    try {
      target.connect()->call();
    } catch (const std::exception& e) {
      throw std::runtime_error("verification failed for " + target.label + ": " + e.what());
    }
  }
}

// Which repetition of a run this is, of how many.
struct Repetition {
  int index = 0, count = 1;
};

// Runs `spec` once on every load against servers started for this run
// alone (fresh processes: no repetition inherits another's state), with
// the servers sampled; one record per load.
std::vector<RunRecord> sampled_run(const Options& o, const std::vector<std::string>& loads,
                                   LoadSpec spec, const Cpus& cpus, Repetition repetition,
                                   const std::function<void(RunRecord&, std::size_t)>& label) {
  std::vector<std::string> stacks;
  for (const auto& l : loads) stacks.push_back(split_load(l).first);
  Servers servers(o, stacks, cpus);
  const auto operation = parse_operation(o.operation);
  std::vector<Target> targets;
  if (o.echo_bytes > 0) targets.push_back(echo_target(o.echo_bytes, cpus.server));
  for (std::size_t i = 0; i < loads.size(); ++i) {
    const auto [stack, codec] = split_load(loads[i]);
    targets.push_back(stack_target(stack, codec, servers.endpoint(i, stack), operation));
  }
  verify(targets);
  spec.on_overrun = [&servers] { servers.kill_all(); };
  spec.client_cpu = cpus.clients;
  spec.seed = static_cast<std::uint64_t>(repetition.index + 1);
  // One sampler per process: loads sharing a server share its samples.
  std::vector<std::shared_ptr<UsageSampler>> samplers;
  for (std::size_t i = 0; i < loads.size(); ++i) {
    std::shared_ptr<UsageSampler> sampler;
    for (std::size_t j = 0; j < i && servers.process(i); ++j)
      if (servers.process(j) == servers.process(i)) sampler = samplers[j];
    if (!sampler && servers.process(i))
      sampler =
          std::make_shared<UsageSampler>(servers.process(i)->pid(), std::chrono::milliseconds(100));
    samplers.push_back(sampler);
  }
  UsageSampler driver_sampler(::getpid(), std::chrono::milliseconds(100));
  const double driver_cpu_before = process_cpu_s();
  auto results = run_load(targets, spec);
  // The driver's own CPU (its clients' calls and checks, bookkeeping), per
  // call over every target of the run.
  const double driver_cpu_s = process_cpu_s() - driver_cpu_before;
  std::uint64_t calls = 0;
  for (const auto& r : results) calls += r.tally.ok + r.tally.failed();
  const auto driver_samples = driver_sampler.finish();
  // Each sampler's samples, taken once, and the calls its server answered.
  std::map<const UsageSampler*, std::vector<UsageSampler::Sample>> samples_of;
  std::map<const UsageSampler*, std::uint64_t> calls_of;
  const std::size_t first_load = o.echo_bytes > 0 ? 1 : 0;
  for (std::size_t t = first_load; t < results.size(); ++t)
    if (const auto* sampler = samplers[t - first_load].get())
      calls_of[sampler] += results[t].tally.ok + results[t].tally.failed();
  for (auto& sampler : samplers)
    if (sampler && samples_of.count(sampler.get()) == 0)
      samples_of[sampler.get()] = sampler->finish();
  std::vector<RunRecord> records;
  for (std::size_t t = 0; t < results.size(); ++t) {
    RunRecord record;
    record.driver_cpu_ms_per_call = calls > 0 ? driver_cpu_s * 1e3 / static_cast<double>(calls) : 0;
    record.run = std::move(results[t]);
    record.requests_per_client = spec.requests_per_client;
    record.rate = spec.rate;
    record.placement = cpus.describe();
    record.series_interval_s = std::chrono::duration<double>(spec.series_interval).count();
    record.repetition = repetition.index;
    record.repetitions = repetition.count;
    record.driver_samples = driver_samples;
    record.driver_samples_offset_s =
        std::chrono::duration<double>(record.run.started - driver_sampler.start()).count();
    record.driver_cpus = cpus.clients ? 1 : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    const std::size_t server_index = t - first_load;
    if (t >= first_load && samplers[server_index]) {
      const auto* sampler = samplers[server_index].get();
      record.server_pid = servers.process(server_index)->pid();
      record.samples_offset_s =
          std::chrono::duration<double>(record.run.started - sampler->start()).count();
      record.server_samples = samples_of[sampler];
      record.server = server_figures(record.server_samples);
      const auto own = record.run.tally.ok + record.run.tally.failed();
      if (calls_of[sampler] != own) record.server_calls = calls_of[sampler];
    }
    label(record, t);
    records.push_back(std::move(record));
  }
  return records;
}

// "45s", "4m12s" or "1h05m".
std::string duration_text(double seconds) {
  const long s = std::lround(seconds);
  char text[32];
  if (s < 60)
    std::snprintf(text, sizeof text, "%lds", s);
  else if (s < 3600)
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, s % 3600 / 60);
  return text;
}

// A line on stderr per finished cell of E7 or E8, which run for minutes
// and print their tables (stdout) only at the end: how far, how long so
// far, and the time left at the mean pace of the cells done.
class CellProgress {
 public:
  CellProgress(std::string experiment, int total)
      : experiment_(std::move(experiment)), total_(total) {}
  void done(const std::string& cell) {
    ++done_;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string left;
    if (done_ < total_)
      left = ", about " + duration_text(elapsed / done_ * (total_ - done_)) + " left";
    std::fprintf(stderr, "wsbench-load: %s [%d/%d] %s done, elapsed %s%s\n", experiment_.c_str(),
                 done_, total_, cell.c_str(), duration_text(elapsed).c_str(), left.c_str());
  }

 private:
  std::string experiment_;
  int total_, done_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Repetitions of every E7 cell and every E8 protocol x size unless
// --repeat says otherwise: each an independent run (servers of its own),
// so the spread of their results is the unit of an interval.
constexpr int kE7Repetitions = 6;
constexpr int kE8Repetitions = 3;

int repetitions(const Options& o, int experiment_default) {
  return o.repeat > 0 ? o.repeat : experiment_default;
}

std::vector<RunRecord> run_e7(Options o, const Cpus& cpus) {
  o.operation = "primes:" + std::to_string(o.primes);
  o.echo_bytes = 0;
  // Each library's own server (gSOAP's thread per connection, Beast's I/O
  // thread), then SOAP on Beast's with the same I/O thread as REST: the
  // concurrency model matched, so a gap between the two SOAP rows is the
  // threading model's, not the encoding's (docs/load.md).
  const std::vector<std::pair<std::string, std::vector<std::string>>> columns = {
      {"SOAP", {"gsoap/soap"}},
      {"REST", {"beast/json"}},
      {"SOAP+REST", {"gsoap/soap", "beast/json"}},
      {"SOAP", {"beast/soap"}},
      {kE7MatchedMixed, {"beast/soap", "beast/json"}},
      // Beyond the paper: gRPC alone, on the same shapes (its own rows).
      {"gRPC", {"grpc/protobuf"}}};
  const int count = repetitions(o, kE7Repetitions);
  CellProgress progress("E7", count * static_cast<int>(columns.size() * std::size(kE7Shapes)));
  std::vector<RunRecord> records;
  // Every cell's repetition r before any cell's r + 1: a drift of the
  // machine over the experiment falls on all cells alike.
  for (int r = 0; r < count; ++r) {
    for (const auto& [column, loads] : columns) {
      for (const auto& [threads, calls] : kE7Shapes) {
        LoadSpec spec;
        spec.clients = threads;
        spec.requests_per_client = static_cast<std::uint64_t>(calls);
        // 40 primes(100000) calls queue on one server vCPU for seconds (the
        // paper saw 30-260 s under Java): a 5 s timeout would hide the very
        // latency E7 measures.
        spec.timeout = std::chrono::milliseconds(o.timeout_ms > 0 ? o.timeout_ms : 60'000);
        spec.max_time = std::chrono::milliseconds(static_cast<long>(o.max_time_s * 1000));
        const std::string shape = std::to_string(threads) + "x" + std::to_string(calls);
        auto cell =
            sampled_run(o, loads, spec, cpus, {r, count}, [&](RunRecord& record, std::size_t) {
              record.experiment = "E7";
              record.column = column;
              record.shape = shape;
              record.mode = loads.size() > 1 ? "mixed" : "closed";
            });
        for (auto& record : cell) records.push_back(std::move(record));
        progress.done(column + " (" + loads.front() +
                      (loads.size() > 1 ? ", " + loads.back() : "") + ") " + shape +
                      ", repetition " + std::to_string(r + 1) + " of " + std::to_string(count));
      }
    }
  }
  return records;
}

// The protocols E8 loads unless --load names others: SOAP, XML-RPC and
// REST in both of its text encodings on their libraries' servers, SOAP and
// XML-RPC again on Beast's (every encoding on the same I/O threads, so
// memory and users served compare encodings, not threading models), then
// gRPC beyond the paper.
const std::vector<std::string> kE8Loads = {"gsoap/soap",   "xmlrpc-c/xmlrpc", "beast/json",
                                           "beast/xml",    "beast/soap",      "beast/xmlrpc",
                                           "grpc/protobuf"};

E8Plan e8_plan(const Options& o) {
  E8Plan plan;
  if (o.ramp_to > 0) plan.ramp_to = o.ramp_to;
  if (o.ramp_every_s > 0)
    plan.ramp_every = std::chrono::milliseconds(std::lround(o.ramp_every_s * 1000));
  // Up by half each step until a call fails or the load side's limit: a
  // fixed bound every stack reached decided nothing.
  auto search =
      parse_search(o.search.empty() ? "24:x1.5:max" : o.search, plan.ramp_to, load_side_limit());
  plan.search_users = std::move(search.users);
  plan.bound = std::move(search.bound);
  plan.search_hold = std::chrono::milliseconds(std::lround(o.hold_s * 1000));
  if (o.define_percent > 100) throw std::invalid_argument("--define-percent is at most 100");
  plan.define_percent = o.define_percent;
  return plan;
}

std::vector<unsigned> parse_sizes(const std::string& text) {
  std::vector<unsigned> sizes;
  std::size_t at = 0;
  while (at <= text.size()) {
    const auto comma = std::min(text.find(',', at), text.size());
    sizes.push_back(wsb::parse_size_multiple(text.substr(at, comma - at)));
    at = comma + 1;
  }
  return sizes;
}

std::vector<RunRecord> run_e8(Options o, const Cpus& cpus, const E8Plan& plan) {
  if (!o.targets.empty())
    throw std::invalid_argument("E8 samples the servers it starts: --target does not apply");
  const auto loads = o.loads.empty() ? kE8Loads : o.loads;
  LoadSpec spec = e8_spec(plan);
  spec.timeout = std::chrono::milliseconds(o.timeout_ms > 0 ? o.timeout_ms : 5000);
  spec.max_time = std::chrono::milliseconds(std::lround(o.max_time_s * 1000));
  if (spec.max_time < spec.duration)
    throw std::invalid_argument("E8's steps take longer than --max-time");
  o.echo_bytes = 0;
  // A server checks its database before it serves: x20's took up to 3 s.
  o.server_startup_s = 120;
  std::vector<RunRecord> records;
  const auto sizes = parse_sizes(o.sizes);
  for (const unsigned size : sizes) {
    wsb::DictionaryOptions dictionary;
    dictionary.size_multiple = size;
    dictionary.cache_dir = o.dictionary_dir;
    // Built here if missing, so no server's figures carry a build.
    std::fprintf(stderr, "wsbench-load: dictionary x%u: %s\n", size,
                 wsb::Dictionary(dictionary).how_opened().c_str());
  }
  const int count = repetitions(o, kE8Repetitions);
  CellProgress progress("E8", count * static_cast<int>(sizes.size() * loads.size()));
  // Every protocol x size's repetition r before any one's r + 1, as E7's.
  for (int r = 0; r < count; ++r) {
    for (const unsigned size : sizes) {
      o.server_args = {"--dictionary-size=x" + std::to_string(size)};
      if (!o.dictionary_dir.empty())
        o.server_args.push_back("--dictionary-dir=" + o.dictionary_dir);
      o.operation =
          "dictionary:x" + std::to_string(size) + ":" + std::to_string(plan.define_percent);
      for (const auto& load : loads) {
        auto cell =
            sampled_run(o, {load}, spec, cpus, {r, count}, [&](RunRecord& record, std::size_t) {
              record.experiment = "E8";
              record.mode = "ramp";
              record.column = load;
              record.shape = "x" + std::to_string(size);
              record.size_multiple = size;
            });
        for (auto& record : cell) {
          add_e8_steps(record, plan);
          records.push_back(std::move(record));
        }
        progress.done(load + " x" + std::to_string(size) + ", repetition " + std::to_string(r + 1) +
                      " of " + std::to_string(count));
      }
    }
  }
  return records;
}

std::vector<RunRecord> run_plain(const Options& o, const Cpus& cpus) {
  LoadSpec spec;
  spec.clients = o.clients;
  spec.requests_per_client = o.requests;
  spec.duration = std::chrono::milliseconds(static_cast<long>(o.duration_s * 1000));
  spec.rate = o.rate;
  spec.timeout = std::chrono::milliseconds(o.timeout_ms > 0 ? o.timeout_ms : 5000);
  spec.max_time = std::chrono::milliseconds(static_cast<long>(o.max_time_s * 1000));
  if (o.arrivals == "poisson")
    spec.arrivals = Arrivals::poisson;
  else if (o.arrivals == "constant")
    spec.arrivals = Arrivals::constant;
  else if (o.arrivals != "closed")
    throw std::invalid_argument("--arrivals takes closed, constant or poisson");
  std::string mode = o.arrivals == "closed" ? "closed" : "open-" + o.arrivals;
  if (o.ramp_to > 0) {
    // One more client every interval up to ramp_to, all running to the end.
    spec.clients = o.ramp_to;
    spec.ramp_interval = std::chrono::milliseconds(static_cast<long>(o.ramp_every_s * 1000));
    if (spec.duration.count() == 0) spec.duration = spec.ramp_interval * o.ramp_to;
    mode = "ramp";
  }
  if (o.loads.size() > 1) mode = "mixed";
  const auto label = [&](RunRecord& r, std::size_t) {
    r.mode = mode;
    r.shape = "c=" + std::to_string(r.run.clients);
  };
  if (o.search.empty()) {
    std::vector<RunRecord> records;
    const int count = repetitions(o, 1);
    for (int r = 0; r < count; ++r)
      for (auto& record : sampled_run(o, o.loads, spec, cpus, {r, count}, label))
        records.push_back(std::move(record));
    return records;
  }
  if (o.repeat > 1) throw std::invalid_argument("--repeat does not apply to --search");

  // FIRST:STEP:LAST; each step a fresh server, so one failure cannot leak.
  int first = 0, step = 0, last = 0;
  if (std::sscanf(o.search.c_str(), "%d:%d:%d", &first, &step, &last) != 3 || first < 1 ||
      step < 1 || last < first)
    throw std::invalid_argument("--search takes FIRST:STEP:LAST, e.g. 1:4:64");
  if (last > kMaxClients)
    throw std::invalid_argument("--search goes to at most " + std::to_string(kMaxClients) +
                                " clients");
  std::vector<RunRecord> records;
  int max_clean = 0;
  for (int clients = first; clients <= last; clients += step) {
    spec.clients = clients;
    auto step_records = sampled_run(o, o.loads, spec, cpus, {}, [&](RunRecord& r, std::size_t) {
      r.mode = "search";
      r.shape = "c=" + std::to_string(clients);
    });
    bool clean = true;
    for (auto& r : step_records) {
      clean = clean && r.run.tally.failed() == 0;
      records.push_back(std::move(r));
    }
    if (!clean) break;
    max_clean = clients;
  }
  std::printf("search: the most clients served without a failed, dropped or late call: %d%s\n",
              max_clean, max_clean == last ? " (the search's upper bound)" : "");
  return records;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  po::options_description options("wsbench-load options");
  options.add_options()("help,h", "show this help")(
      "load", po::value(&o.loads)->composing(),
      "STACK/CODEC to load (beast/json, gsoap/soap, xmlrpc-c/xmlrpc); twice for a mixed run")(
      "op", po::value(&o.operation)->default_value(o.operation),
      "operation[:argument]: ping, primes:N, echo:LABEL, get:LABEL, dictionary:SIZE[:DEFINE%]")(
      "clients,c", po::value(&o.clients)->default_value(o.clients),
      "concurrent clients per load, each with its own connection")(
      "requests,n", po::value(&o.requests)->default_value(o.requests),
      "calls per client (closed loop), 0: until --duration")(
      "duration,d", po::value(&o.duration_s)->default_value(o.duration_s), "seconds to run")(
      "rate", po::value(&o.rate)->default_value(o.rate),
      "open loop: calls per second per load (with --arrivals constant or poisson)")(
      "arrivals", po::value(&o.arrivals)->default_value(o.arrivals), "closed, constant or poisson")(
      "ramp-every", po::value(&o.ramp_every_s)->default_value(o.ramp_every_s),
      "seconds between one client and the next (with --ramp-to)")(
      "ramp-to", po::value(&o.ramp_to)->default_value(o.ramp_to), "clients at the ramp's end")(
      "search", po::value(&o.search),
      "FIRST:STEP:LAST: raise the clients until a call fails, report the most served (E8: STEP "
      "xF grows by a factor, LAST max: up to the load side's limit; default 24:x1.5:max)")(
      "timeout-ms", po::value(&o.timeout_ms)->default_value(o.timeout_ms),
      "a reply later than this is a timeout (default 5000; E7: 60000)")(
      "max-time", po::value(&o.max_time_s)->default_value(o.max_time_s),
      "hard bound on one run, seconds")("repeat", po::value(&o.repeat)->default_value(o.repeat),
                                        "repetitions, each against servers of its own and its "
                                        "own record (0: E7 6, E8 3, other runs 1)")(
      "primes", po::value(&o.primes)->default_value(o.primes),
      "E7: the primes each call asks for (the paper's 100000)")(
      "echo", po::value(&o.echo_bytes),
      "BYTES: also load a raw TCP echo of this size (the driver's ceiling)")(
      "target", po::value(&o.targets)->composing(),
      "STACK=HOST:PORT: load a server already running there instead of starting one")(
      "server", po::value(&o.server_binary),
      "the wsbench-server binary (default: beside this one)")(
      "placement", po::value(&o.placement)->default_value(o.placement),
      "split: driver and servers on disjoint vCPUs; none: unpinned")(
      "experiment", po::value(&o.experiment),
      "E7: the concurrency experiment; E8: the dictionary under ramping users")(
      "sizes", po::value(&o.sizes)->default_value(o.sizes), "E8: the definitions' sizes")(
      "hold", po::value(&o.hold_s)->default_value(o.hold_s),
      "E8: seconds each search step holds its users")(
      "define-percent", po::value(&o.define_percent)->default_value(o.define_percent),
      "E8: the share of define calls (the rest put)")(
      "dictionary-dir", po::value(&o.dictionary_dir),
      "E8: folder of the dictionary databases (default: the servers' cache folder)")(
      "out,o", po::value(&o.out), "write the runs and their context as JSON here");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "wsbench-load: " << e.what() << "\n" << options;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  const std::vector<std::string> command_line(argv, argv + argc);
  try {
    if (o.experiment.empty() && o.loads.empty() && o.echo_bytes == 0)
      throw std::invalid_argument(
          "nothing to load: give --load STACK/CODEC, --echo or --experiment");
    if (!o.experiment.empty() && o.experiment != "E7" && o.experiment != "E8")
      throw std::invalid_argument("unknown experiment '" + o.experiment + "' (known: E7, E8)");
    // E8 loads its protocols one after another, the others at once.
    if (o.loads.size() > 2 && o.experiment != "E8")
      throw std::invalid_argument("at most two --load at once");
    if (o.repeat < 0) throw std::invalid_argument("--repeat must be at least 1 (0: the default)");
    if (o.primes < 1) throw std::invalid_argument("--primes must be at least 1");
    const wsb::Placement placement = wsb::parse_placement(o.placement);
    // "same" would put the clients on the server's vCPU: not a load test.
    if (placement == wsb::Placement::same)
      throw std::invalid_argument("--placement takes split or none");
    const Cpus cpus = sysconf(_SC_NPROCESSORS_ONLN) >= 2 && placement == wsb::Placement::split
                          ? Cpus{wsb::client_cpu(placement), wsb::server_cpu(placement)}
                          : Cpus{};
    // The clients' points bound each call's timed span (CallSpan). No
    // server runs in this process, so a point costs one clock read.
    wsb::set_probes_enabled(true);
    auto context = wsb::environment(command_line);
    context.emplace_back("load_placement", cpus.describe());
    const std::optional<E8Plan> e8 =
        o.experiment == "E8" ? std::optional<E8Plan>(e8_plan(o)) : std::nullopt;
    if (e8) {
      context.emplace_back("e8_define_percent", std::to_string(e8->define_percent));
      context.emplace_back("e8_ramp", std::to_string(e8->ramp_to) + " users, one every " +
                                          std::to_string(e8->ramp_every.count()) + " ms");
      context.emplace_back("e8_search",
                           e8->search_users.empty()
                               ? "none"
                               : std::to_string(e8->search_users.front()) + " to " +
                                     std::to_string(e8->search_users.back()) + " users in " +
                                     std::to_string(e8->search_users.size()) + " steps of " +
                                     std::to_string(e8->search_hold.count()) +
                                     " ms, bound: " + e8->bound);
    }
    wsb::RunAftermath aftermath;
    aftermath.ticks_before = wsb::read_cpu_ticks();
    aftermath.calibration_before_ns = wsb::calibrate(wsb::kCalibrationSamples, cpus.clients);
    const auto records = o.experiment == "E7" ? run_e7(o, cpus)
                         : e8                 ? run_e8(o, cpus, *e8)
                                              : run_plain(o, cpus);
    aftermath.calibration_after_ns = wsb::calibrate(wsb::kCalibrationSamples, cpus.clients);
    aftermath.ticks_after = wsb::read_cpu_ticks();
    std::printf("placement: %s\n", cpus.describe().c_str());
    print_runs(stdout, records);
    if (o.experiment == "E7") print_e7(stdout, records);
    if (e8) print_e8(stdout, records, *e8);
    if (!o.out.empty()) {
      if (const auto error = write_json(o.out, context, records, aftermath); !error.empty()) {
        std::cerr << "wsbench-load: " << error << "\n";
        return 1;
      }
      std::printf("wrote %s\n", o.out.c_str());
    }
    bool failed = false;
    for (const auto& r : records) failed = failed || r.run.tally.failed() > 0;
    return failed && o.search.empty() && !e8 ? 3 : 0;
  } catch (const std::exception& e) {
    std::cerr << "wsbench-load: " << e.what() << "\n";
    return 1;
  }
}
