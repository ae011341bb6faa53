// bench: wsbench's benchmark driver. Google Benchmark's own flags
// (--benchmark_filter, --benchmark_repetitions, --benchmark_out, ...) work
// as usual; wsbench's flags are listed by --help.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "codec_bench.h"
#include "common/codec.h"
#include "common/placement.h"
#include "harness/build_info.h"
#include "rtt_bench.h"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  // The default sweep has about a thousand cases: 0.1 s each (instead of
  // Google Benchmark's 0.5 s) keeps it to a few minutes; an explicit
  // --benchmark_min_time wins.
  std::vector<char*> args(argv, argv + argc);
  std::string min_time = "--benchmark_min_time=0.1";
  if (std::none_of(args.begin(), args.end(), [](const char* a) {
        return std::string_view(a).starts_with("--benchmark_min_time");
      }))
    args.insert(args.begin() + 1, min_time.data());
  argc = static_cast<int>(args.size());
  argv = args.data();

  // Google Benchmark consumes its flags first and leaves ours.
  benchmark::Initialize(&argc, argv);

  po::options_description options("wsbench options (plus every --benchmark_* flag)");
  std::vector<std::string> targets;
  std::string placements = "same";
  std::int64_t iterations = 0;
  options.add_options()("help,h", "show this help")(
      "full", "run the whole catalogue, including 16-64 MiB binaries and gml/5000, gml/10000")(
      "placement", po::value(&placements)->default_value("same"),
      "CPU placement of client and server threads for round trips: same (one vCPU), split "
      "(two vCPUs), none (unpinned); a comma-separated list runs each")(
      "target", po::value(&targets)->composing(),
      "STACK=HOST:PORT: use a running wsbench-server for that stack instead of an "
      "in-process one (repeatable)")(
      "iterations", po::value(&iterations)->default_value(0),
      "run every case for exactly this many iterations (0: Google Benchmark decides); "
      "scripts/count uses it")("wire-sizes",
                               "print the bytes on the wire of every operation for message-a and "
                               "message-b, then exit")(
      "list-codecs", "list the registered codecs and stacks and exit");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "bench: " << e.what() << "\n" << options;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  if (vm.count("list-codecs")) {
    for (const auto& codec : wsb::all_codecs())
      std::cout << "codec\t" << codec.name << "\t" << codec.description << "\n";
    for (const auto& stack : wsb::all_stacks())
      std::cout << "stack\t" << stack.name << "\t" << stack.description << "\n";
    return 0;
  }

  const auto sweep = vm.count("full") ? wsb::bench::Sweep::full : wsb::bench::Sweep::standard;
  wsb::bench::RttOptions rtt;
  rtt.sweep = sweep;
  rtt.iterations = iterations;
  try {
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
    // Fail now, not in the middle of a run, if a placement cannot be had.
    for (const auto p : rtt.placements) wsb::server_cpu(p);
  } catch (const std::exception& e) {
    std::cerr << "bench: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("wire-sizes")) return wsb::bench::print_wire_sizes(rtt);
  for (const auto& [key, value] : wsb::build_info()) benchmark::AddCustomContext(key, value);
  benchmark::AddCustomContext("wsbench_sweep",
                              sweep == wsb::bench::Sweep::full ? "full" : "standard");
  benchmark::AddCustomContext("wsbench_payload_seed", std::to_string(wsb::kDefaultSeed));
  benchmark::AddCustomContext("wsbench_placement", placements);
  benchmark::AddCustomContext("wsbench_process_affinity", wsb::current_affinity());
  std::string target_list;
  for (const auto& [stack, endpoint] : rtt.targets)
    target_list += (target_list.empty() ? "" : ",") + stack + "=" + endpoint.to_string();
  benchmark::AddCustomContext("wsbench_targets", target_list.empty() ? "in-process" : target_list);

  wsb::bench::register_codec_benchmarks(sweep, iterations);
  wsb::bench::register_rtt_benchmarks(rtt);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
