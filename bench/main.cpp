// bench: wsbench's benchmark driver. Google Benchmark's own flags
// (--benchmark_filter, --benchmark_repetitions, --benchmark_out, ...) work
// as usual; --help lists wsbench's flags, then Google Benchmark's.
#include <alloca.h>
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "codec_bench.h"
#include "common/codec.h"
#include "common/dictionary.h"
#include "common/phases.h"
#include "common/placement.h"
#include "common/server_concurrency.h"
#include "common/service.h"
#include "common/tls.h"
#include "harness/build_info.h"
#include "harness/environment.h"
#include "harness/heap_policy.h"
#include "harness/network_link.h"
#include "rtt_bench.h"
#include "server_limits.h"

extern char** environ;

namespace po = boost::program_options;

namespace {

// The repetitions of all cases run interleaved, so Google Benchmark prints a
// case only when its last repetition ends, near the end of the run: without
// a line a minute a default sweep is minutes of silence. The thread sleeps
// between lines, so it takes no time from the cases.
class Heartbeat {
 public:
  explicit Heartbeat(std::chrono::seconds every)
      : thread_([every](std::stop_token stop) {
          const auto start = std::chrono::steady_clock::now();
          std::mutex mutex;
          std::condition_variable_any wake;
          std::unique_lock lock(mutex);
          while (!wake.wait_for(lock, stop, every, [&stop] { return stop.stop_requested(); })) {
            const auto s = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::steady_clock::now() - start)
                               .count();
            std::fprintf(stderr,
                         "bench: running, %lldm%02llds elapsed (repetitions are interleaved: "
                         "the cases' lines come together at the end)\n",
                         static_cast<long long>(s / 60), static_cast<long long>(s % 60));
          }
        }) {}

 private:
  std::jthread thread_;
};

const po::options_description* help_options = nullptr;

// Google Benchmark handles --help inside Initialize and exits; this is the
// printer it calls, so both sets of flags are listed.
void print_help() {
  std::cout << *help_options
            << "\nwsbench passes --benchmark_repetitions=6, --benchmark_min_time=0.03,\n"
               "--benchmark_enable_random_interleaving=true,\n"
               "--benchmark_report_aggregates_only=false and "
               "--benchmark_display_aggregates_only=true\nunless you give your own.\n\n"
               "Google Benchmark's flags:\n"
            << std::flush;
  benchmark::PrintDefaultHelp();
  std::fflush(stdout);
}

// "--name" or "--name=..." given at all.
bool has_flag(const std::vector<char*>& args, std::string_view name) {
  return std::any_of(args.begin(), args.end(), [&](const char* a) {
    const std::string_view arg(a);
    return arg == name || (arg.starts_with(name) && arg.substr(name.size()).starts_with("="));
  });
}

// The value of the last "--name=value" (Google Benchmark lets the last win).
std::string flag_value(const std::vector<char*>& args, std::string_view name) {
  std::string value;
  for (const char* a : args) {
    const std::string_view arg(a);
    if (arg.starts_with(name) && arg.substr(name.size()).starts_with("="))
      value = arg.substr(name.size() + 1);
  }
  return value;
}

// A run on a terminal that names no output file keeps its JSON, as
// scripts/bench does, so that it can end with the summary: Google
// Benchmark's console lines alone are an aggregate per case in the order the
// interleaved repetitions finished. Scripts and pipes name their own file,
// or want none, and are left as they were.
bool keeps_json(const std::vector<char*>& args) {
  for (const char* name : {"--benchmark_out", "--benchmark_out_format", "--benchmark_list_tests",
                           "--help", "-h", "--list-codecs", "--wire-sizes"})
    if (has_flag(args, name)) return false;
  return isatty(STDOUT_FILENO) == 1;
}

// A new folder results/bench/<UTC time>/ (under $WSBENCH_RESULTS instead of
// results/ when set) with results/bench/latest pointing at it: the layout
// of scripts/deps.sh's wsbench_outdir. Empty if none can be made.
std::filesystem::path new_result_folder() {
  const char* results = std::getenv("WSBENCH_RESULTS");
  const auto root =
      std::filesystem::path(results != nullptr && *results != '\0' ? results : "results") / "bench";
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  char stamp[32];
  if (ec || gmtime_r(&now, &utc) == nullptr ||
      std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc) == 0)
    return {};
  for (int n = 1; n < 100; ++n) {
    const std::string name = n == 1 ? stamp : std::string(stamp) + "-" + std::to_string(n);
    if (!std::filesystem::create_directory(root / name, ec)) {
      if (ec) return {};
      continue;  // a run in the same second has it
    }
    std::filesystem::remove(root / "latest", ec);
    std::filesystem::create_directory_symlink(name, root / "latest", ec);
    return root / name;
  }
  return {};
}

// The folder of a run that ended before measuring anything holds nothing
// worth keeping, and "latest" no longer points at it.
struct RemoveIfEmpty {
  std::filesystem::path folder;
  ~RemoveIfEmpty() {
    std::error_code ec;
    if (folder.empty() || !std::filesystem::is_empty(folder, ec) ||
        !std::filesystem::remove(folder, ec))
      return;
    const auto latest = folder.parent_path() / "latest";
    if (std::filesystem::read_symlink(latest, ec) == folder.filename())
      std::filesystem::remove(latest, ec);
  }
};

// scripts/summarize.py on the run's JSON, from the checkout the binary was
// built from; where that cannot run, the command that would.
void print_summary(const std::filesystem::path& json) {
  const auto script = wsb::checkout_dir() / "scripts" / "summarize.py";
  std::string python = "python3", script_arg = script.string(), json_arg = json.string();
  char* child_argv[] = {python.data(), script_arg.data(), json_arg.data(), nullptr};
  std::error_code ec;
  pid_t pid = 0;
  int status = 0;
  std::fflush(stdout);
  if (std::filesystem::is_regular_file(script, ec) &&
      posix_spawnp(&pid, "python3", nullptr, nullptr, child_argv, environ) == 0 &&
      waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return;
  std::cerr << "bench: results in " << json_arg << "; the summary tables: python3 " << script_arg
            << " " << json_arg << "\n";
}

// Mytkowicz et al. (ASPLOS 2009): where the stack starts moves results by
// several percent. scripts/bench --randomize-layout sets this per process.
std::size_t stack_offset_from_environment() {
  const char* text = std::getenv("WSBENCH_STACK_OFFSET");
  if (text == nullptr) return 0;
  std::size_t offset = 0;
  const std::string_view s(text);
  if (std::from_chars(s.data(), s.data() + s.size(), offset).ptr != s.data() + s.size()) return 0;
  return std::min<std::size_t>(offset, 64 * 1024);
}

[[gnu::noinline]] int run(int argc, char** argv, std::size_t stack_offset) {
  // Each case's console line leaves as it is printed, even into a pipe
  // (scripts/e9 counts them for its progress lines). Lines are printed
  // between cases, never inside a timed loop.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  const std::vector<std::string> command_line(argv, argv + argc);

  // Defaults for a citable run, each applied only if the user gave none:
  // six repetitions (the fewest for which a distribution-free 95% interval
  // of the median exists), every one kept in the JSON (the summary computes
  // its statistics from them) while the console shows only their
  // aggregates; the repetitions of all cases run in one random order, so a
  // drift in the machine's load reaches every case alike (rows compared
  // with each other, such as encode against bind + write, see the same
  // conditions); 0.03 s per repetition keeps the default sweep under five
  // minutes on two cores.
  std::vector<char*> args(argv, argv + argc);
  std::vector<std::string> added;
  for (const auto& [name, value] : {std::pair{"--benchmark_repetitions", "6"},
                                    {"--benchmark_min_time", "0.03"},
                                    {"--benchmark_enable_random_interleaving", "true"},
                                    {"--benchmark_report_aggregates_only", "false"},
                                    {"--benchmark_display_aggregates_only", "true"}})
    if (!has_flag(args, name)) added.push_back(std::string(name) + "=" + value);
  RemoveIfEmpty result_folder;
  if (keeps_json(args)) {
    result_folder.folder = new_result_folder();
    if (!result_folder.folder.empty()) {
      added.push_back("--benchmark_out=" + (result_folder.folder / "bench.json").string());
      added.push_back("--benchmark_out_format=json");
    }
  }
  for (auto& flag : added) args.insert(args.begin() + 1, flag.data());
  const std::string out_file = flag_value(args, "--benchmark_out");
  const std::string out_format = flag_value(args, "--benchmark_out_format");
  const std::string list_tests = flag_value(args, "--benchmark_list_tests");
  const std::string filter = flag_value(args, "--benchmark_filter");
  const bool listing =
      has_flag(args, "--benchmark_list_tests") && list_tests != "false" && list_tests != "0";
  argc = static_cast<int>(args.size());
  argv = args.data();

  po::options_description options("wsbench options");
  std::vector<std::string> targets;
  std::string placements = "same";
  std::int64_t iterations = 0;
  std::string strings = "plain";
  std::string dictionary_size = "x1";
  options.add_options()("help,h", "show this help, then Google Benchmark's flags")(
      "dictionary-size", po::value(&dictionary_size)->default_value(dictionary_size),
      "E8's definitions for the define and put round trips: x1, x10, x15 or x20 times 128 "
      "bytes (the database is built on first use; docs/reference/operations.md)")(
      "full", "run the whole catalogue, including 16-64 MiB binaries and gml/5000, gml/10000")(
      "placement", po::value(&placements)->default_value("same"),
      "CPU placement of client and server threads for round trips: same (one vCPU), split "
      "(two vCPUs), none (unpinned); a comma-separated list runs each")(
      "remote,target", po::value(&targets)->composing(),
      "STACK=HOST:PORT: use a running wsbench-server (another host) for that stack instead "
      "of an in-process one (repeatable; --target is the same)")(
      "remote-floor", po::value<std::string>(),
      "HOST:PORT: that wsbench-server's floor port (it prints 'floor HOST:PORT'), the raw TCP "
      "floor of the remote cases")(
      "link", po::value<std::string>()->default_value("loopback"),
      "round trips over loopback, or over a link between two network namespaces shaped with "
      "tc (needs root): lan1g, lan100, wlan, or custom:rate=R,delay=D,jitter=J,loss=L% "
      "(docs/servers/links.md)")(
      "sampling-seconds", po::value<double>()->default_value(2.0),
      "how long a round-trip case's timed calls may take per repetition when fewer than 200 "
      "fit (scripts/e9 takes 0.5: over lan100 a 16 MiB call takes 1.4 s)")(
      "iterations", po::value(&iterations)->default_value(0),
      "run every case for exactly this many iterations (0: Google Benchmark decides); "
      "scripts/count uses it")("wire-sizes",
                               "print the bytes on the wire of every operation for message-a and "
                               "message-b, then exit")(
      "list-codecs", "list the registered codecs and stacks and exit")(
      "no-probes",
      "mark no phase points in clients and servers (no clock reads): rows carry no phase "
      "columns; measures what the probes cost")(
      "strings", po::value(&strings)->default_value("plain"),
      "text of the codec cases' generated strings: plain (ASCII, as in the studies) or escaped "
      "(every 8th string with XML specials and multi-byte UTF-8; labels get ':escaped'); round "
      "trips and --wire-sizes always use plain");
  // Heap and allocation policies (docs/methodology.md).
  std::string heap = "retain";
  std::string alloc = "reuse";
  options.add_options()("heap", po::value(&heap)->default_value("retain"),
                        "retain: freed memory stays in the process (mallopt M_MMAP_MAX=0, "
                        "M_TRIM_THRESHOLD=1 GiB), so no case faults pages in per iteration; "
                        "glibc-default: glibc's own thresholds")(
      "alloc", po::value(&alloc)->default_value("reuse"),
      "allocation policy of the codec rows: reuse (steady state: keep messages, documents, "
      "contexts and parsers across calls) or fresh (make them anew per call, as typical "
      "user code does)");
  help_options = &options;

  // Google Benchmark consumes its flags first and leaves ours.
  benchmark::Initialize(&argc, argv, print_help);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "bench: " << e.what() << "\n" << options;
    return 2;
  }
  if (vm.count("help")) {
    print_help();
    return 0;
  }
  if (vm.count("list-codecs")) {
    for (const auto& codec : wsb::all_codecs())
      std::cout << "codec\t" << codec.name << "\t" << codec.description << "\n";
    for (const auto& stack : wsb::all_stacks())
      std::cout << "stack\t" << stack.name << "\t" << stack.description << "\n";
    return 0;
  }

  wsb::HeapPolicy heap_policy{};
  wsb::Allocation allocation{};
  try {
    heap_policy = wsb::parse_heap_policy(heap);
    if (alloc != "reuse" && alloc != "fresh")
      throw std::invalid_argument("unknown allocation policy '" + alloc +
                                  "' (expected reuse or fresh)");
    allocation = alloc == "fresh" ? wsb::Allocation::fresh : wsb::Allocation::reuse;
    wsb::apply_heap_policy(heap_policy);
  } catch (const std::exception& e) {
    std::cerr << "bench: " << e.what() << "\n";
    return 2;
  }
  benchmark::AddCustomContext("heap_policy", wsb::describe_heap_policy(heap_policy));
  benchmark::AddCustomContext("alloc_policy", alloc);

  const auto sweep = vm.count("full") ? wsb::bench::Sweep::full : wsb::bench::Sweep::standard;
  wsb::bench::RttOptions rtt;
  wsb::LinkSpec link_spec;
  rtt.sweep = sweep;
  rtt.iterations = iterations;
  rtt.sampling_seconds = vm["sampling-seconds"].as<double>();
  if (!(rtt.sampling_seconds > 0)) {
    std::fprintf(stderr, "bench: --sampling-seconds takes a positive number\n");
    return 2;
  }
  benchmark::AddCustomContext("wsbench_rtt_sampling_s", std::to_string(rtt.sampling_seconds));
  wsb::Strings string_shape = wsb::Strings::plain;
  try {
    string_shape = wsb::strings_from_name(strings);
    rtt.dictionary_size = wsb::parse_size_multiple(dictionary_size);
    rtt.placements.clear();
    for (std::size_t start = 0; start <= placements.size();) {
      const auto comma = std::min(placements.find(',', start), placements.size());
      rtt.placements.push_back(wsb::parse_placement(placements.substr(start, comma - start)));
      start = comma + 1;
    }
    for (const auto& target : targets) {
      auto [stack, endpoint] = wsb::parse_stack_endpoint(target);
      rtt.targets[stack] = std::move(endpoint);
    }
    if (vm.count("remote-floor"))
      rtt.remote_floor = wsb::parse_endpoint(vm["remote-floor"].as<std::string>());
    link_spec = wsb::parse_link(vm["link"].as<std::string>());
    if (!link_spec.loopback() && !rtt.targets.empty())
      throw std::invalid_argument(
          "--link shapes the path to in-process servers; it does not "
          "combine with --remote");
    // Fail now, not in the middle of a run, if a placement cannot be had.
    for (const auto p : rtt.placements) wsb::server_cpu(p);
  } catch (const std::exception& e) {
    std::cerr << "bench: " << e.what() << "\n";
    return 2;
  }
  // Before any server starts or client connects: connections keep what
  // they saw when they opened.
  wsb::set_probes_enabled(vm.count("no-probes") == 0);
  // The link lives until run() returns; this thread (the benchmarks' own)
  // moves into its client namespace. Without the rights the round trips
  // are left out and the codec cases still run.
  std::unique_ptr<wsb::NetworkLink> link;
  bool skip_round_trips = false;
  if (!link_spec.loopback() && !listing) {
    if (const auto reason = wsb::link_unavailable_reason()) {
      std::cerr << "bench: --link=" << link_spec.name << ": " << *reason
                << "; the round-trip cases are skipped\n";
      skip_round_trips = true;
      benchmark::AddCustomContext("link", link_spec.name + " unavailable: " + *reason);
    } else {
      try {
        if (const int removed = wsb::remove_stale_links(); removed > 0)
          std::cerr << "bench: removed " << removed << " namespaces of earlier runs\n";
        link = std::make_unique<wsb::NetworkLink>(link_spec);
        link->enter(wsb::NetworkLink::Side::client);
      } catch (const std::exception& e) {
        std::cerr << "bench: " << e.what() << "\n";
        return 1;
      }
      rtt.link = link.get();
      benchmark::AddCustomContext("link", link_spec.name);
      benchmark::AddCustomContext("link_shaping", link->shaping().describe());
      benchmark::AddCustomContext(
          "link_addresses", "client " + wsb::NetworkLink::client_address() + " in " +
                                link->namespace_name(wsb::NetworkLink::Side::client) + ", server " +
                                wsb::NetworkLink::server_address() + " in " +
                                link->namespace_name(wsb::NetworkLink::Side::server));
    }
  } else {
    benchmark::AddCustomContext("link", link_spec.name);
  }
  if (vm.count("wire-sizes")) return wsb::bench::print_wire_sizes(rtt);
  for (const auto& [key, value] : wsb::build_info()) benchmark::AddCustomContext(key, value);
  benchmark::AddCustomContext("wsbench_sweep",
                              sweep == wsb::bench::Sweep::full ? "full" : "standard");
  benchmark::AddCustomContext("wsbench_payload_seed", std::to_string(wsb::kDefaultSeed));
  benchmark::AddCustomContext("wsbench_payload_strings",
                              std::string(wsb::strings_name(string_shape)) + " (codec cases)");
  benchmark::AddCustomContext("wsbench_placement", placements);
  benchmark::AddCustomContext("wsbench_dictionary_size", "x" + std::to_string(rtt.dictionary_size));
  const wsb::ServiceLimits service_limits;
  benchmark::AddCustomContext("wsbench_server_payload_cache",
                              std::to_string(service_limits.max_cached_payload_bytes >> 20) +
                                  " MiB, " + std::to_string(service_limits.max_cached_payloads) +
                                  " payloads (least recently used out)");
  benchmark::AddCustomContext("wsbench_server_limits", wsb::describe_server_limits());
  benchmark::AddCustomContext("wsbench_server_concurrency",
                              wsb::describe_text(wsb::ServerConcurrency{}));
  benchmark::AddCustomContext("wsbench_process_affinity", wsb::current_affinity());
  std::string target_list;
  for (const auto& [stack, endpoint] : rtt.targets)
    target_list += (target_list.empty() ? "" : ",") + stack + "=" + endpoint.to_string();
  benchmark::AddCustomContext("wsbench_targets", target_list.empty() ? "in-process" : target_list);
  if (rtt.remote_floor)
    benchmark::AddCustomContext("wsbench_remote_floor", rtt.remote_floor->to_string());
  benchmark::AddCustomContext("probes", wsb::probes_enabled() ? "on" : "off");
  benchmark::AddCustomContext("server_phases", wsb::bench::server_phase_sources(rtt));
  // What every TLS row negotiates (the *-tls stacks and their floor).
  benchmark::AddCustomContext("tls", wsb::tls::description());

  for (const auto& [key, value] : wsb::environment(command_line))
    benchmark::AddCustomContext(key, value);
  std::string added_list;
  for (const auto& flag : added) added_list += (added_list.empty() ? "" : " ") + flag;
  benchmark::AddCustomContext("wsbench_added_flags", added_list);
  benchmark::AddCustomContext("layout_stack_offset_bytes", std::to_string(stack_offset));

  // Calibration: the same loop before and after, on the vCPU the round
  // trips' client runs on, so the summary can say how noisy the machine was
  // and whether that changed during the run. Under valgrind it would time
  // the emulator, and listing cases runs nothing.
  const bool calibrating = !listing && !wsb::running_under_valgrind();
  const auto calibration_cpu = wsb::client_cpu(rtt.placements.front());
  wsb::RunAftermath aftermath;
  if (calibrating)
    aftermath.calibration_before_ns = wsb::calibrate(wsb::kCalibrationSamples, calibration_cpu);
  benchmark::AddCustomContext("calibration_before_ns",
                              wsb::join_samples(aftermath.calibration_before_ns));
  benchmark::AddCustomContext(
      "calibration_loop",
      calibrating ? std::to_string(wsb::kCalibrationLoopIterations) +
                        " dependent 64-bit multiply-adds per sample, on vCPU " +
                        (calibration_cpu ? std::to_string(*calibration_cpu) : "unpinned")
                  : "skipped (listing cases or under valgrind)");

  wsb::bench::register_codec_benchmarks(sweep, string_shape, iterations, allocation);
  if (!skip_round_trips && wsb::bench::register_rtt_benchmarks(rtt) != sweep)
    benchmark::AddCustomContext("wsbench_rtt_sweep", "full (the filter selects only its cases)");
  aftermath.ticks_before = wsb::read_cpu_ticks();
  std::optional<Heartbeat> heartbeat;
  if (!listing) heartbeat.emplace(std::chrono::seconds(60));
  const std::size_t cases = benchmark::RunSpecifiedBenchmarks();
  heartbeat.reset();
  aftermath.ticks_after = wsb::read_cpu_ticks();
  benchmark::Shutdown();
  // Google Benchmark would exit 0 here and leave an empty --benchmark_out
  // file, which a script takes for a run.
  if (cases == 0) {
    std::cerr << "bench: no case matches " << (filter.empty() ? "." : filter)
              << (skip_round_trips ? " (the round trips are skipped, above)" : "") << "\n";
    std::error_code ec;
    if (!out_file.empty() && std::filesystem::is_regular_file(out_file, ec) &&
        std::filesystem::file_size(out_file, ec) == 0)
      std::filesystem::remove(out_file, ec);
    return 1;
  }
  if (listing) return 0;

  if (calibrating)
    aftermath.calibration_after_ns = wsb::calibrate(wsb::kCalibrationSamples, calibration_cpu);
  // The context is written before the run starts; what only the run's end
  // knows goes into the JSON file afterwards, or to stderr without one.
  if (!out_file.empty() && (out_format.empty() || out_format == "json")) {
    // Libraries loaded during the run (dlopen'ed by a library) count too.
    aftermath.loaded_libraries = wsb::loaded_libraries();
    if (const std::string error = wsb::patch_context(out_file, aftermath); !error.empty()) {
      std::cerr << "bench: cannot add the run's aftermath to the context: " << error << "\n";
      return 1;
    }
  } else {
    std::cerr << "bench: after the run: " << wsb::aftermath_json(aftermath) << "\n";
  }
  if (!result_folder.folder.empty()) print_summary(out_file);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Shifts every frame below main by the requested offset; run() is not
  // inlined so its own frame moves too.
  const std::size_t stack_offset = stack_offset_from_environment();
  void* shift = alloca(stack_offset + 1);
  benchmark::DoNotOptimize(shift);
  return run(argc, argv, stack_offset);
}
