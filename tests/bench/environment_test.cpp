// The run's recorded environment: each field is checked against an
// independent source (uname, /proc/self/maps, the libraries' headers, a
// shell), and the pure parsers against fixed inputs.
#include "harness/environment.h"

#include <gnu/libc-version.h>
#include <gtest/gtest.h>
#include <libxml/xmlversion.h>
#include <openssl/crypto.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/placement.h"

namespace wsb {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string> as_map(const ContextPairs& pairs) {
  return {pairs.begin(), pairs.end()};
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "wsb-env-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const fs::path& relative, const std::string& text) const {
    fs::create_directories((path / relative).parent_path());
    std::ofstream(path / relative) << text;
  }
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// Against the kernel's files under /proc/sys/kernel and the uname program,
// not the uname(2) call kernel() itself makes.
TEST(Environment, KernelIsWhatProcAndUnameSay) {
  FILE* uname_m = popen("uname -m", "r");
  ASSERT_NE(uname_m, nullptr);
  char machine[256] = {};
  const bool got = std::fgets(machine, sizeof machine, uname_m) != nullptr;
  ASSERT_EQ(pclose(uname_m), 0);
  ASSERT_TRUE(got);
  machine[std::strcspn(machine, "\n")] = '\0';
  const std::string expected = first_line("/proc/sys/kernel/ostype") + " " +
                               first_line("/proc/sys/kernel/osrelease") + " " +
                               first_line("/proc/sys/kernel/version") + " " + machine;
  EXPECT_EQ(kernel(), expected);
  EXPECT_EQ(as_map(environment({"bench"})).at("kernel"), expected);
}

bool has_library(const std::vector<std::string>& libraries, std::string_view prefix) {
  return std::any_of(libraries.begin(), libraries.end(), [&](const auto& p) {
    return fs::path(p).filename().string().starts_with(prefix);
  });
}

TEST(Environment, LoadedLibrariesAreEveryMappedSharedObject) {
  // A call into libxml2, so the test binary really links it (a static
  // library's unused objects, and with them their libraries, are dropped).
  xmlCheckVersion(LIBXML_VERSION);
  const auto libraries = loaded_libraries();
  const std::set<std::string> listed(libraries.begin(), libraries.end());
  EXPECT_TRUE(has_library(libraries, "libxml2.so.2."));
  EXPECT_TRUE(has_library(libraries, "libcrypto.so."));
  EXPECT_TRUE(has_library(libraries, "libstdc++.so.6."));
  for (const auto& path : libraries) {
    EXPECT_TRUE(fs::path(path).is_absolute()) << path;
    EXPECT_FALSE(fs::is_symlink(path)) << path << " is a link, not the versioned file";
  }
  // Independently, the kernel's list of mapped files.
  std::istringstream maps(slurp("/proc/self/maps"));
  int checked = 0;
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const fs::path file = line.substr(slash);
    const std::string name = file.filename().string();
    if (name.find(".so") == std::string::npos || line.find(" r-xp ") == std::string::npos) continue;
    EXPECT_TRUE(listed.count(fs::canonical(file).string())) << file << " is mapped, not listed";
    ++checked;
  }
  EXPECT_GT(checked, 3);
}

TEST(Environment, RuntimeVersionsComeFromTheLoadedLibraries) {
  xmlCheckVersion(LIBXML_VERSION);
  const auto versions = as_map(runtime_library_versions());
  EXPECT_EQ(versions.at("libxml2_runtime_version"), LIBXML_VERSION_STRING);
  EXPECT_EQ(versions.at("openssl_runtime_version"), OpenSSL_version(OPENSSL_VERSION));
  EXPECT_EQ(versions.at("glibc_runtime_version"), gnu_get_libc_version());
  // Libraries this binary may or may not load: the answer must match.
  const auto libraries = loaded_libraries();
  const std::string curl = versions.at("libcurl_runtime_version");
  EXPECT_EQ(curl.starts_with("libcurl/"), has_library(libraries, "libcurl")) << curl;
  EXPECT_EQ(curl == "not loaded", !has_library(libraries, "libcurl")) << curl;
  const std::string protobuf = versions.at("protobuf_runtime_version");
  EXPECT_EQ(protobuf.starts_with("libprotobuf.so."), has_library(libraries, "libprotobuf.so"))
      << protobuf;
  EXPECT_EQ(protobuf == "not loaded", !has_library(libraries, "libprotobuf.so")) << protobuf;
}

TEST(Environment, CommandLineIsRecordedExactly) {
  const std::vector<std::string> argv = {
      "bench",  "--benchmark_filter=^encode/(json|xml)/ints/200$",
      "a b",    "it's",
      "",       "$HOME",
      "back\\", "new\nline"};
  const std::string recorded = as_map(environment(argv)).at("command_line");
  EXPECT_TRUE(recorded.starts_with("bench '--benchmark_filter=^encode/(json|xml)/ints/200$' "))
      << recorded;
  // A shell splits the record back into exactly the words given.
  FILE* shell = popen(("printf '%s\\0' " + recorded).c_str(), "r");
  ASSERT_NE(shell, nullptr);
  std::string output;
  for (int c; (c = std::fgetc(shell)) != EOF;) output += static_cast<char>(c);
  ASSERT_EQ(pclose(shell), 0);
  std::vector<std::string> words;
  for (std::size_t start = 0, end; (end = output.find('\0', start)) != std::string::npos;
       start = end + 1)
    words.push_back(output.substr(start, end - start));
  EXPECT_EQ(words, argv);
}

TEST(Environment, StealIsComputedFromTwoProcStatSnapshots) {
  // guest (9th) and guest_nice (10th) are already inside user and nice.
  const auto before = parse_proc_stat(
      "cpu  100 0 50 800 10 0 5 35 7 0\ncpu0 50 0 25 400 5 0 2 17 3 0\nintr 1 2 3\n");
  const auto after = parse_proc_stat("cpu  200 0 100 1500 20 0 10 170 9 0\n");
  ASSERT_TRUE(before && after);
  EXPECT_EQ(before->total, 1000u);
  EXPECT_EQ(before->steal, 35u);
  EXPECT_EQ(after->total, 2000u);
  EXPECT_DOUBLE_EQ(steal_percent(*before, *after), 13.5);
  EXPECT_DOUBLE_EQ(steal_percent(*before, *before), 0.0);
  // A per-CPU line first is not the aggregate; old kernels have no steal.
  const auto old_kernel = parse_proc_stat("cpu0 1 2 3 4\ncpu  10 20 30 40\n");
  ASSERT_TRUE(old_kernel);
  EXPECT_EQ(old_kernel->total, 100u);
  EXPECT_EQ(old_kernel->steal, 0u);
  EXPECT_FALSE(parse_proc_stat("intr 1 2\n"));
  EXPECT_FALSE(parse_proc_stat("cpu  1 x 3 4\n"));
  EXPECT_TRUE(read_cpu_ticks());
}

TEST(Environment, CalibrationReturnsTheSamplesAsked) {
  const std::string affinity = current_affinity();
  const auto samples = calibrate(7, 0);
  ASSERT_EQ(samples.size(), 7u);
  for (const auto ns : samples) EXPECT_GT(ns, 0);
  EXPECT_EQ(current_affinity(), affinity) << "the pin must be undone";
}

TEST(Environment, FrequencyStateIsReadNotAssumed) {
  TempDir none;
  none.write("cpu0/topology/core_id", "0\n");
  const FrequencyState absent = frequency_state(none.path);
  EXPECT_EQ(absent.governor, "unavailable");
  EXPECT_EQ(absent.driver, "unavailable");
  EXPECT_EQ(absent.boost, "unavailable");

  TempDir sys;
  sys.write("cpu0/cpufreq/scaling_governor", "performance\n");
  sys.write("cpu0/cpufreq/scaling_driver", "acpi-cpufreq\n");
  sys.write("cpu1/cpufreq/scaling_governor", "performance\n");
  sys.write("cpufreq/boost", "0\n");
  FrequencyState state = frequency_state(sys.path);
  EXPECT_EQ(state.governor, "performance");
  EXPECT_EQ(state.driver, "acpi-cpufreq");
  EXPECT_EQ(state.boost, "off");

  sys.write("cpu1/cpufreq/scaling_governor", "powersave\n");
  fs::remove(sys.path / "cpufreq/boost");
  sys.write("intel_pstate/no_turbo", "0\n");
  state = frequency_state(sys.path);
  EXPECT_EQ(state.governor, "0=performance,1=powersave");
  EXPECT_EQ(state.boost, "on");
}

TEST(Environment, CpuModelIsTheFirstModelName) {
  EXPECT_EQ(cpu_model("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n\n"
                      "processor\t: 1\nmodel name\t: other\n"),
            "AMD EPYC 7B13");
  EXPECT_EQ(cpu_model("processor\t: 0\nCPU part\t: 0xd0c\n"), "unavailable");
}

TEST(Environment, GitStateOfACheckout) {
  if (std::system("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no git";
  TempDir plain;
  const GitState none = git_state(plain.path);
  EXPECT_EQ(none.commit, "unknown");
  EXPECT_EQ(none.dirty, "unknown");

  TempDir repo;
  repo.write("file", "one\n");
  const std::string git = "git -C '" + repo.path.string() + "' ";
  ASSERT_EQ(std::system((git + "init -q && " + git + "add file && " + git +
                         "-c user.name=t -c user.email=t@t commit -qm one")
                            .c_str()),
            0);
  const GitState clean = git_state(repo.path);
  EXPECT_EQ(clean.commit.size(), 40u) << clean.commit;
  EXPECT_EQ(clean.dirty, "false");
  repo.write("untracked", "ignored: not part of any build\n");
  EXPECT_EQ(git_state(repo.path).dirty, "false");
  repo.write("file", "two\n");
  const GitState dirty = git_state(repo.path);
  EXPECT_EQ(dirty.commit, clean.commit);
  EXPECT_EQ(dirty.dirty, "true");
  // A directory inside a checkout is no checkout of its own: a tarball
  // unpacked inside another repository must not take that one's commit.
  repo.write("inner/file", "three\n");
  const GitState inner = git_state(repo.path / "inner");
  EXPECT_EQ(inner.commit, "unknown");
  EXPECT_EQ(inner.dirty, "unknown");
}

const GitState kBuilt{"1111111111111111111111111111111111111111", "false"};

TEST(Provenance, AgreeingBuildAndCheckoutGiveNoWarning) {
  const Provenance p = provenance(kBuilt, kBuilt);
  EXPECT_EQ(p.warning, "");
  const auto context = as_map(p.pairs);
  EXPECT_EQ(context.size(), 4u);
  EXPECT_EQ(context.at("source_git_commit"), kBuilt.commit);
  EXPECT_EQ(context.at("source_git_dirty"), "false");
  EXPECT_EQ(context.at("checkout_git_commit"), kBuilt.commit);
  EXPECT_EQ(context.at("checkout_git_dirty"), "false");
  // A binary run away from its source (no checkout to read) keeps its stamp.
  EXPECT_EQ(provenance(kBuilt, {"unknown", "unknown"}).warning, "");
}

TEST(Provenance, AMovedCheckoutIsNamedInTheWarning) {
  const GitState moved{"2222222222222222222222222222222222222222", "true"};
  const Provenance p = provenance(kBuilt, moved);
  const auto context = as_map(p.pairs);
  EXPECT_EQ(context.at("source_git_commit"), kBuilt.commit);
  EXPECT_EQ(context.at("checkout_git_commit"), moved.commit);
  EXPECT_EQ(context.at("checkout_git_dirty"), "true");
  ASSERT_EQ(context.count("provenance_warning"), 1u);
  EXPECT_EQ(context.at("provenance_warning"), p.warning);
  EXPECT_NE(p.warning.find("built from " + kBuilt.commit + " (clean)"), std::string::npos)
      << p.warning;
  EXPECT_NE(p.warning.find("at " + moved.commit + " (with uncommitted changes)"), std::string::npos)
      << p.warning;
}

TEST(Provenance, ChangesMadeAfterTheBuildAreAMismatchToo) {
  const GitState edited{kBuilt.commit, "true"};
  EXPECT_NE(provenance(kBuilt, edited).warning, "");
  EXPECT_NE(provenance(edited, kBuilt).warning, "");
}

TEST(Provenance, ABuildOutsideGitSaysItsCommitIsUnknown) {
  const Provenance p = provenance({"unknown", "unknown"}, kBuilt);
  EXPECT_EQ(as_map(p.pairs).at("source_git_commit"), "unknown");
  EXPECT_NE(p.warning.find("built outside a git checkout"), std::string::npos) << p.warning;
  EXPECT_NE(provenance({"unknown", "unknown"}, {"unknown", "unknown"}).warning, "");
}

// The stamp linked into this binary against what git said in the same
// build, asked another way (tests/bench/CMakeLists.txt writes the file with
// rev-parse and git diff --quiet, not SourceStamp.cmake's status).
TEST(Provenance, StampIsTheCommitAndStateOfTheBuild) {
  std::ifstream in(WSBENCH_EXPECTED_SOURCE);
  std::string commit, dirty;
  ASSERT_TRUE(in >> commit >> dirty) << "cannot read " << WSBENCH_EXPECTED_SOURCE;
  EXPECT_EQ(built_source().commit, commit);
  EXPECT_EQ(built_source().dirty, dirty);
}

TEST(Environment, EnvironmentBytesFollowTheEnvironment) {
  const std::size_t before = environment_bytes();
  ASSERT_EQ(setenv("WSBENCH_TEST_PADDING", std::string(1000, 'x').c_str(), 1), 0);
  EXPECT_EQ(environment_bytes(), before + std::string("WSBENCH_TEST_PADDING=").size() + 1000 + 1);
  unsetenv("WSBENCH_TEST_PADDING");
}

TEST(Environment, PatchAddsTheAftermathAndKeepsEverythingElse) {
  TempDir dir;
  const fs::path file = dir.path / "run.json";
  dir.write("run.json", R"({
  "context": {"date": "today", "calibration_before_ns": "5,6", "loaded_libraries": "a,b"},
  "benchmarks": [{"name": "x", "iterations": 9007199254740993, "real_time": 2.9720000000000004e+03,
                  "ratio": NaN, "other": -Infinity}]
})");
  RunAftermath aftermath;
  aftermath.ticks_before = CpuTicks{1000, 35};
  aftermath.ticks_after = CpuTicks{2000, 170};
  aftermath.calibration_before_ns = {5, 6};
  aftermath.calibration_after_ns = {7, 8, 9};
  aftermath.loaded_libraries = {"/lib/a.so.1", "/lib/b.so.2"};
  ASSERT_EQ(patch_context(file, aftermath), "");

  const std::string text = slurp(file);
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag>(text.c_str());
  ASSERT_FALSE(doc.HasParseError()) << text;
  const auto& context = doc["context"];
  EXPECT_STREQ(context["date"].GetString(), "today");
  EXPECT_DOUBLE_EQ(context["steal_during_run_pct"].GetDouble(), 13.5);
  EXPECT_EQ(context["cpu_ticks_during_run"].GetUint64(), 1000u);
  ASSERT_TRUE(context["calibration_before_ns"].IsArray());
  EXPECT_EQ(context["calibration_before_ns"].Size(), 2u);
  ASSERT_TRUE(context["calibration_after_ns"].IsArray());
  EXPECT_EQ(context["calibration_after_ns"][2].GetInt64(), 9);
  ASSERT_TRUE(context["loaded_libraries"].IsArray());
  EXPECT_STREQ(context["loaded_libraries"][1].GetString(), "/lib/b.so.2");
  const auto& row = doc["benchmarks"][0];
  EXPECT_EQ(row["iterations"].GetUint64(), 9007199254740993u);
  EXPECT_EQ(row["real_time"].GetDouble(), 2.9720000000000004e+03);
  EXPECT_TRUE(std::isnan(row["ratio"].GetDouble()));
  EXPECT_NE(text.find("\"other\": -Infinity"), std::string::npos);

  EXPECT_NE(patch_context(dir.path / "missing.json", aftermath), "");
  dir.write("bad.json", "{\"benchmarks\": []}");
  EXPECT_NE(patch_context(dir.path / "bad.json", aftermath), "");
}

}  // namespace
}  // namespace wsb
