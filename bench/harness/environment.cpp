#include "harness/environment.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <pthread.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sched.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include "common/placement.h"

extern char** environ;

namespace wsb {
namespace {

constexpr const char* kUnavailable = "unavailable";

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::optional<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

// One-line sysfs files such as scaling_governor.
std::optional<std::string> read_line(const std::filesystem::path& path) {
  auto text = read_text(path);
  if (!text) return std::nullopt;
  return std::string(trim(*text));
}

// Runs argv[0] from PATH without a shell (no quoting of `dir` needed) and
// returns its stdout if it exits with 0.
std::optional<std::string> run_command(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  if (rc == 0) {
    char buffer[4096];
    for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
      if (n < 0) {
        if (errno == EINTR) continue;
        break;
      }
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }
  close(fds[0]);
  if (rc != 0) return std::nullopt;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return std::nullopt;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

bool is_hex_commit(std::string_view s) {
  return (s.size() == 40 || s.size() == 64) &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(c) != 0; });
}

// "<commit> (clean)", for the provenance warning.
std::string describe(const GitState& s) {
  const char* changes = s.dirty == "true"    ? "with uncommitted changes"
                        : s.dirty == "false" ? "clean"
                                             : "changes unknown";
  return s.commit + " (" + changes + ")";
}

bool same_directory(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec_a, ec_b;
  const auto real_a = std::filesystem::canonical(a, ec_a);
  const auto real_b = std::filesystem::canonical(b, ec_b);
  return !ec_a && !ec_b && real_a == real_b;
}

// The loaded file's name, for libraries with no version call of their own
// (their versioned file name is the best run-time answer there is).
std::string loaded_file(std::string_view prefix) {
  for (const auto& path : loaded_libraries()) {
    const std::string name = std::filesystem::path(path).filename().string();
    if (name.starts_with(prefix)) return name + " (file name; no version call)";
  }
  return "not loaded";
}

template <typename Function>
Function find_symbol(const char* name) {
  // POSIX guarantees a dlsym result converts to a function pointer.
  return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

std::string join(const std::vector<std::string>& items, char separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

using Allocator = rapidjson::Document::AllocatorType;

void set_member(rapidjson::Value& object, const char* key, rapidjson::Value value,
                Allocator& allocator) {
  if (auto it = object.FindMember(key); it != object.MemberEnd()) {
    it->value = std::move(value);
  } else {
    object.AddMember(rapidjson::Value(key, allocator), std::move(value), allocator);
  }
}

rapidjson::Value number_array(const std::vector<std::int64_t>& values, Allocator& allocator) {
  rapidjson::Value array(rapidjson::kArrayType);
  for (const auto v : values) array.PushBack(rapidjson::Value(v), allocator);
  return array;
}

void add_aftermath(rapidjson::Value& object, const RunAftermath& a, Allocator& allocator) {
  if (a.ticks_before && a.ticks_after) {
    set_member(object, "steal_during_run_pct",
               rapidjson::Value(steal_percent(*a.ticks_before, *a.ticks_after)), allocator);
    // The raw ticks let runs split over processes (scripts/bench
    // --randomize-layout) be combined exactly.
    set_member(object, "cpu_ticks_during_run",
               rapidjson::Value(a.ticks_after->total - a.ticks_before->total), allocator);
    set_member(object, "steal_ticks_during_run",
               rapidjson::Value(a.ticks_after->steal - a.ticks_before->steal), allocator);
  } else {
    set_member(object, "steal_during_run_pct", rapidjson::Value(rapidjson::StringRef(kUnavailable)),
               allocator);
  }
  set_member(object, "calibration_before_ns", number_array(a.calibration_before_ns, allocator),
             allocator);
  set_member(object, "calibration_after_ns", number_array(a.calibration_after_ns, allocator),
             allocator);
  if (a.loaded_libraries.empty()) return;  // the context's string form stays
  rapidjson::Value libraries(rapidjson::kArrayType);
  for (const auto& path : a.loaded_libraries)
    libraries.PushBack(rapidjson::Value(path.c_str(), allocator), allocator);
  set_member(object, "loaded_libraries", std::move(libraries), allocator);
}

// Google Benchmark writes NaN and Infinity for undefined counters; full
// precision keeps every double bit-identical through the rewrite.
constexpr unsigned kParseFlags =
    rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag;

// RapidJSON 1.1's PrettyWriter does not compile with kWriteNanAndInfFlag,
// so the non-finite values are written here, as Google Benchmark spells them.
class ResultWriter : public rapidjson::PrettyWriter<rapidjson::StringBuffer> {
 public:
  using PrettyWriter::PrettyWriter;
  bool Double(double d) {
    if (std::isfinite(d)) return PrettyWriter::Double(d);
    PrettyPrefix(rapidjson::kNumberType);
    for (const char* c = std::isnan(d) ? "NaN" : d < 0 ? "-Infinity" : "Infinity"; *c; ++c)
      os_->Put(*c);
    return true;
  }
};

}  // namespace

std::optional<CpuTicks> parse_proc_stat(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    // "cpu " is the sum over CPUs; "cpu0 ", "cpu1 " are single CPUs.
    if (!line.starts_with("cpu ")) continue;
    line.remove_prefix(4);
    // user nice system idle iowait irq softirq steal [guest guest_nice]:
    // guest time is already inside user and nice, so it is not added.
    std::uint64_t fields[8] = {};
    int parsed = 0;
    for (; parsed < 8; ++parsed) {
      line = trim(line);
      if (line.empty()) break;
      const auto [ptr, ec] =
          std::from_chars(line.data(), line.data() + line.size(), fields[parsed]);
      if (ec != std::errc()) return std::nullopt;
      line.remove_prefix(static_cast<std::size_t>(ptr - line.data()));
    }
    if (parsed < 4) return std::nullopt;
    CpuTicks ticks;
    for (const auto f : fields) ticks.total += f;
    ticks.steal = fields[7];
    return ticks;
  }
  return std::nullopt;
}

std::optional<CpuTicks> read_cpu_ticks() {
  const auto text = read_text("/proc/stat");
  if (!text) return std::nullopt;
  return parse_proc_stat(*text);
}

double steal_percent(const CpuTicks& before, const CpuTicks& after) {
  if (after.total <= before.total || after.steal < before.steal) return 0.0;
  return 100.0 * static_cast<double>(after.steal - before.steal) /
         static_cast<double>(after.total - before.total);
}

std::string cpu_model(std::string_view proc_cpuinfo) {
  std::size_t pos = 0;
  while (pos < proc_cpuinfo.size()) {
    const auto end = std::min(proc_cpuinfo.find('\n', pos), proc_cpuinfo.size());
    const std::string_view line = proc_cpuinfo.substr(pos, end - pos);
    pos = end + 1;
    const auto colon = line.find(':');
    if (colon != std::string_view::npos && trim(line.substr(0, colon)) == "model name")
      return std::string(trim(line.substr(colon + 1)));
  }
  return kUnavailable;
}

std::string kernel() {
  utsname u{};
  if (uname(&u) != 0) return kUnavailable;
  return std::string(u.sysname) + " " + u.release + " " + u.version + " " + u.machine;
}

FrequencyState frequency_state(const std::filesystem::path& sys_cpu) {
  std::map<int, std::string> governors;  // by CPU number
  std::string driver;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(sys_cpu, ec)) {
    const std::string name = entry.path().filename().string();
    int cpu = 0;
    if (!name.starts_with("cpu") ||
        std::from_chars(name.data() + 3, name.data() + name.size(), cpu).ptr !=
            name.data() + name.size())
      continue;
    if (auto g = read_line(entry.path() / "cpufreq" / "scaling_governor")) governors[cpu] = *g;
    if (auto d = read_line(entry.path() / "cpufreq" / "scaling_driver"); d && driver.empty())
      driver = *d;
  }
  FrequencyState state{kUnavailable, driver.empty() ? kUnavailable : driver, kUnavailable};
  if (!governors.empty()) {
    const bool uniform = std::all_of(governors.begin(), governors.end(), [&](const auto& g) {
      return g.second == governors.begin()->second;
    });
    if (uniform) {
      state.governor = governors.begin()->second;
    } else {
      state.governor.clear();
      for (const auto& [cpu, g] : governors)
        state.governor += (state.governor.empty() ? "" : ",") + std::to_string(cpu) + "=" + g;
    }
  }
  // acpi-cpufreq and amd-pstate say "1" for boost enabled; intel_pstate
  // says the opposite in no_turbo.
  if (auto boost = read_line(sys_cpu / "cpufreq" / "boost")) {
    state.boost = *boost == "1" ? "on" : "off";
  } else if (auto no_turbo = read_line(sys_cpu / "intel_pstate" / "no_turbo")) {
    state.boost = *no_turbo == "1" ? "off" : "on";
  }
  return state;
}

GitState git_state(const std::filesystem::path& dir) {
  const std::string d = dir.string();
  // --no-optional-locks: reading the state must not take the index lock
  // from a git command the user is running in the same checkout.
  const auto head = run_command({"git", "--no-optional-locks", "-C", d, "rev-parse", "HEAD"});
  if (!head || !is_hex_commit(trim(*head))) return {"unknown", "unknown"};
  // The checkout's own HEAD, not that of a repository it lies inside.
  const auto top =
      run_command({"git", "--no-optional-locks", "-C", d, "rev-parse", "--show-toplevel"});
  if (!top || !same_directory(std::string(trim(*top)), dir)) return {"unknown", "unknown"};
  const auto status = run_command(
      {"git", "--no-optional-locks", "-C", d, "status", "--porcelain", "--untracked-files=no"});
  return {std::string(trim(*head)), !status ? "unknown" : (status->empty() ? "false" : "true")};
}

std::filesystem::path checkout_dir() {
  const char* dir = std::getenv("WSBENCH_CHECKOUT_DIR");
  return dir != nullptr && *dir != '\0' ? dir : WSBENCH_SOURCE_DIR;
}

Provenance provenance(const GitState& built, const GitState& checkout) {
  Provenance p;
  p.pairs = {{"source_git_commit", built.commit},
             {"source_git_dirty", built.dirty},
             {"checkout_git_commit", checkout.commit},
             {"checkout_git_dirty", checkout.dirty}};
  if (built.commit == "unknown") {
    p.warning =
        "the binary was built outside a git checkout: the source commit of these results is "
        "unknown";
  } else if (checkout.commit != "unknown" &&
             (built.commit != checkout.commit || built.dirty != checkout.dirty)) {
    p.warning = "the binary was built from " + describe(built) + " but the checkout is at " +
                describe(checkout) + ": these results are of the build, not of the checkout";
  }
  if (!p.warning.empty()) p.pairs.emplace_back("provenance_warning", p.warning);
  return p;
}

std::vector<std::string> loaded_libraries() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        // The executable has an empty name; the vDSO has no file to resolve.
        if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
        std::error_code ec;
        const auto real = std::filesystem::canonical(info->dlpi_name, ec);
        if (!ec) static_cast<std::vector<std::string>*>(data)->push_back(real.string());
        return 0;
      },
      &paths);
  return paths;
}

ContextPairs runtime_library_versions() {
  // Looked up, not linked: a library this binary does not load is reported
  // as such rather than loaded just to be asked.
  ContextPairs out;
  const auto* xml = static_cast<const char* const*>(dlsym(RTLD_DEFAULT, "xmlParserVersion"));
  out.emplace_back("libxml2_runtime_version", xml != nullptr ? *xml : "not loaded");
  auto* openssl = find_symbol<const char* (*)(int)>("OpenSSL_version");
  out.emplace_back("openssl_runtime_version", openssl != nullptr ? openssl(0) : "not loaded");
  auto* curl = find_symbol<char* (*)()>("curl_version");
  out.emplace_back("libcurl_runtime_version", curl != nullptr ? curl() : "not loaded");
  auto* xmlrpc = find_symbol<void (*)(unsigned*, unsigned*, unsigned*)>("xmlrpc_version");
  std::string xmlrpc_version = "not loaded";
  if (xmlrpc != nullptr) {
    unsigned major = 0, minor = 0, point = 0;
    xmlrpc(&major, &minor, &point);
    xmlrpc_version =
        std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(point);
  }
  out.emplace_back("xmlrpc_c_runtime_version", xmlrpc_version);
  out.emplace_back("glibc_runtime_version", gnu_get_libc_version());
  // gRPC core's version (29.0.0 for gRPC 1.51): the C++ library's own,
  // grpc::Version(), returns a std::string, which dlsym cannot call safely.
  auto* grpc = find_symbol<const char* (*)()>("grpc_version_string");
  out.emplace_back("grpc_core_runtime_version", grpc != nullptr ? grpc() : "not loaded");
  out.emplace_back("protobuf_runtime_version", loaded_file("libprotobuf.so"));
  out.emplace_back("gsoap_runtime_version", loaded_file("libgsoapssl++"));
  return out;
}

std::string shell_quote(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& word : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
             std::strchr("_@%+=:,./-", c) != nullptr;
    });
    if (plain) {
      out += word;
      continue;
    }
    out += '\'';
    for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::size_t environment_bytes() {
  std::size_t bytes = 0;
  for (char** e = environ; *e != nullptr; ++e) bytes += std::strlen(*e) + 1;
  return bytes;
}

bool running_under_valgrind() { return RUNNING_ON_VALGRIND != 0; }

std::vector<std::int64_t> calibrate(int samples, std::optional<int> cpu) {
  cpu_set_t saved;
  CPU_ZERO(&saved);
  const bool restore = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
  if (cpu) pin_current_thread(cpu);
  // A chain of dependent multiply-adds: no memory, no vectorising, the
  // same instructions on every run; only the machine can make it slower.
  auto loop = [] {
    std::uint64_t x = 1;
    for (std::uint64_t i = 0; i < kCalibrationLoopIterations; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      asm volatile("" : "+r"(x));
    }
    return x;
  };
  loop();  // warm-up: page faults, frequency ramp
  std::vector<std::int64_t> ns;
  for (int i = 0; i < samples; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t x = loop();
    const auto stop = std::chrono::steady_clock::now();
    asm volatile("" : : "r"(x));
    ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());
  }
  if (restore) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  return ns;
}

ContextPairs environment(const std::vector<std::string>& argv) {
  Provenance source = provenance(built_source(), git_state(checkout_dir()));
  if (!source.warning.empty()) {
    const std::string program =
        argv.empty() ? "wsbench" : std::filesystem::path(argv.front()).filename().string();
    std::fprintf(stderr, "%s: warning: %s\n", program.c_str(), source.warning.c_str());
  }
  ContextPairs out = std::move(source.pairs);
  out.emplace_back("kernel", kernel());
  const std::string cpuinfo = read_text("/proc/cpuinfo").value_or("");
  out.emplace_back("cpu_model", cpu_model(cpuinfo));
  // The hypervisor flag says steal time is possible at all.
  out.emplace_back("cpu_hypervisor",
                   cpuinfo.find(" hypervisor") != std::string::npos ? "yes" : "no");
  const FrequencyState freq = frequency_state("/sys/devices/system/cpu");
  out.emplace_back("cpu_governor", freq.governor);
  out.emplace_back("cpu_frequency_driver", freq.driver);
  out.emplace_back("cpu_boost", freq.boost);
  for (auto& pair : runtime_library_versions()) out.push_back(std::move(pair));
  out.emplace_back("loaded_libraries", join(loaded_libraries(), ','));
  out.emplace_back("command_line", shell_quote(argv));
  out.emplace_back("environment_bytes", std::to_string(environment_bytes()));
  return out;
}

std::string join_samples(const std::vector<std::int64_t>& samples) {
  std::vector<std::string> items;
  for (const auto s : samples) items.push_back(std::to_string(s));
  return join(items, ',');
}

std::string aftermath_json(const RunAftermath& aftermath) {
  rapidjson::Document doc(rapidjson::kObjectType);
  add_aftermath(doc, aftermath, doc.GetAllocator());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  return buffer.GetString();
}

std::string patch_context(const std::filesystem::path& json_file, const RunAftermath& aftermath) {
  const auto text = read_text(json_file);
  if (!text) return "cannot read " + json_file.string();
  rapidjson::Document doc;
  doc.Parse<kParseFlags>(text->c_str());
  if (doc.HasParseError() || !doc.IsObject()) return "not a JSON object: " + json_file.string();
  auto context = doc.FindMember("context");
  if (context == doc.MemberEnd() || !context->value.IsObject())
    return "no context object in " + json_file.string();
  add_aftermath(context->value, aftermath, doc.GetAllocator());

  rapidjson::StringBuffer buffer;
  ResultWriter writer(buffer);
  writer.SetIndent(' ', 2);
  doc.Accept(writer);
  // Written beside and renamed over, so an interrupted patch leaves the
  // original file whole.
  const std::filesystem::path temporary = json_file.string() + ".patch";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << buffer.GetString() << '\n';
    if (!out.flush()) return "cannot write " + temporary.string();
  }
  std::error_code ec;
  std::filesystem::rename(temporary, json_file, ec);
  if (ec) return "cannot replace " + json_file.string() + ": " + ec.message();
  return {};
}

}  // namespace wsb
