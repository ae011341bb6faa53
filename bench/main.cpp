// bench: wsbench's benchmark driver. Google Benchmark's own flags
// (--benchmark_filter, --benchmark_repetitions, --benchmark_out, ...) work
// as usual; wsbench's flags are listed by --help.
#include <benchmark/benchmark.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "codec_bench.h"
#include "common/build_info.h"
#include "common/codec.h"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  // Google Benchmark consumes its flags first and leaves ours.
  benchmark::Initialize(&argc, argv);

  po::options_description options("wsbench options (plus every --benchmark_* flag)");
  options.add_options()("help,h", "show this help")(
      "full", "run the whole catalogue, including 16-64 MiB binaries and gml/5000, gml/10000")(
      "list-codecs", "list the registered codecs and exit");
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
      std::cout << codec.name << "\t" << codec.description << "\n";
    return 0;
  }

  const auto sweep = vm.count("full") ? wsb::bench::Sweep::full : wsb::bench::Sweep::standard;
  for (const auto& [key, value] : wsb::build_info()) benchmark::AddCustomContext(key, value);
  benchmark::AddCustomContext("wsbench_sweep",
                              sweep == wsb::bench::Sweep::full ? "full" : "standard");
  benchmark::AddCustomContext("wsbench_payload_seed", std::to_string(wsb::kDefaultSeed));

  wsb::bench::register_codec_benchmarks(sweep);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
