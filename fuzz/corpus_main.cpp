// wsbench-fuzz-corpus: what scripts/fuzz needs to know of the targets
// without running libFuzzer: their list and dictionaries, and their seed
// corpora written as files.
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "fuzz_targets.h"

namespace po = boost::program_options;

namespace {

void write_seeds(const wsb::fuzz::FuzzTarget& target, const std::filesystem::path& dir) {
  const auto where = dir / target.name;
  std::filesystem::create_directories(where);
  int index = 0;
  for (const auto& seed : target.seeds()) {
    char name[32];
    std::snprintf(name, sizeof name, "seed-%03d", index++);
    std::ofstream out(where / name, std::ios::binary);
    out.write(seed.data(), static_cast<std::streamsize>(seed.size()));
    if (!out) throw std::runtime_error("cannot write " + (where / name).string());
  }
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description options(
      "Usage: wsbench-fuzz-corpus --list | --seeds DIR [--target NAME]\nOptions");
  options.add_options()("help", "this text")(
      "list", "one line per target: name, dictionary files, description (tab-separated)")(
      "seeds", po::value<std::string>(), "write each target's seeds to DIR/<target>/")(
      "target", po::value<std::string>(), "only this target");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "wsbench-fuzz-corpus: " << e.what() << "\n" << options;
    return 2;
  }
  if (vm.count("help") || (!vm.count("list") && !vm.count("seeds"))) {
    std::cout << options;
    return vm.count("help") ? 0 : 2;
  }
  std::vector<const wsb::fuzz::FuzzTarget*> chosen;
  if (vm.count("target")) {
    const auto* target = wsb::fuzz::find_fuzz_target(vm["target"].as<std::string>());
    if (target == nullptr) {
      std::cerr << "wsbench-fuzz-corpus: unknown target '" << vm["target"].as<std::string>()
                << "' (--list shows them)\n";
      return 2;
    }
    chosen.push_back(target);
  } else {
    for (const auto& target : wsb::fuzz::all_fuzz_targets()) chosen.push_back(&target);
  }
  try {
    for (const auto* target : chosen) {
      if (vm.count("list"))
        std::cout << target->name << '\t' << target->dictionary << '\t' << target->description
                  << '\n';
      if (vm.count("seeds")) write_seeds(*target, vm["seeds"].as<std::string>());
    }
  } catch (const std::exception& e) {
    std::cerr << "wsbench-fuzz-corpus: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
