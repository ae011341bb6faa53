#include "harness/network_link.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace wsb {
namespace {

constexpr const char* kPrefix = "wsb-";

struct Preset {
  const char* name;
  std::uint64_t rate_bps;
  double delay_ms, jitter_ms, loss_pct;
};
// docs/servers/links.md lists these and says where they come from.
constexpr Preset kPresets[] = {
    {"lan1g", 1'000'000'000, 0.05, 0, 0},
    {"lan100", 100'000'000, 0.1, 0, 0},
    {"wlan", 20'000'000, 2, 1, 0.1},
};

double number(std::string_view text, std::string_view what) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0) ||
      !std::isfinite(value))
    throw std::invalid_argument("link: " + std::string(what) + " '" + std::string(text) +
                                "' is not a non-negative number");
  return value;
}

// "100mbit" -> 1e8. Units as tc spells them.
std::uint64_t parse_rate(std::string_view text) {
  static constexpr std::pair<const char*, double> units[] = {
      {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}};
  for (const auto& [unit, scale] : units) {
    const std::string_view u(unit);
    if (text.size() > u.size() && text.ends_with(u)) {
      const double bps = number(text.substr(0, text.size() - u.size()), "rate") * scale;
      if (bps < 8'000 || bps > 100e9)
        throw std::invalid_argument("link: rate '" + std::string(text) +
                                    "' is outside 8kbit..100gbit");
      return static_cast<std::uint64_t>(bps);
    }
  }
  throw std::invalid_argument("link: rate '" + std::string(text) +
                              "' needs a unit: bit, kbit, mbit or gbit");
}

// "2ms" -> 2.0 (milliseconds).
double parse_time_ms(std::string_view text, std::string_view what) {
  static constexpr std::pair<const char*, double> units[] = {{"us", 1e-3}, {"ms", 1}, {"s", 1e3}};
  for (const auto& [unit, scale] : units) {
    const std::string_view u(unit);
    if (text.size() > u.size() && text.ends_with(u)) {
      const double ms = number(text.substr(0, text.size() - u.size()), what) * scale;
      if (ms > 10'000)
        throw std::invalid_argument("link: " + std::string(what) + " '" + std::string(text) +
                                    "' is over 10 s");
      return ms;
    }
  }
  throw std::invalid_argument("link: " + std::string(what) + " '" + std::string(text) +
                              "' needs a unit: us, ms or s");
}

// Runs a program (no shell) and returns its exit status and what it wrote.
struct Outcome {
  int status = -1;
  std::string output;
};
Outcome run(const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("link: pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  Outcome outcome;
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    outcome.output = args[0] + ": " + std::strerror(spawned);
    return outcome;
  }
  char buffer[4096];
  for (ssize_t got; (got = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    // ip and tc say little; a runaway tool cannot grow this without bound.
    if (outcome.output.size() < 64 * 1024) outcome.output.append(buffer, static_cast<size_t>(got));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  while (!outcome.output.empty() && outcome.output.back() == '\n') outcome.output.pop_back();
  return outcome;
}

void must(const std::vector<std::string>& args) {
  const Outcome o = run(args);
  if (o.status != 0) {
    std::string command;
    for (const auto& a : args) command += (command.empty() ? "" : " ") + a;
    throw std::runtime_error("link: '" + command + "' failed: " + o.output);
  }
}

std::string format_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%gms", ms);
  return text;
}

// A namespace of ours: "wsb-<pid>-<n>-c" or "-s"; returns the pid, or 0.
pid_t creator_of(const std::string& name) {
  if (!name.starts_with(kPrefix)) return 0;
  const char* begin = name.c_str() + std::strlen(kPrefix);
  const char* end = name.c_str() + name.size();
  pid_t pid = 0;
  const auto [p, ec] = std::from_chars(begin, end, pid);
  if (ec != std::errc() || p == end || *p != '-' || pid <= 0) return 0;
  return pid;
}

std::atomic<int> links_made{0};

}  // namespace

LinkSpec parse_link(const std::string& text) {
  LinkSpec spec;
  spec.name = text;
  if (text == "loopback") return spec;
  for (const auto& p : kPresets) {
    if (text == p.name) {
      spec.rate_bps = p.rate_bps;
      spec.delay_ms = p.delay_ms;
      spec.jitter_ms = p.jitter_ms;
      spec.loss_pct = p.loss_pct;
      return spec;
    }
  }
  const std::string_view custom = "custom:";
  if (!text.starts_with(custom))
    throw std::invalid_argument("link: unknown link '" + text +
                                "' (expected loopback, lan1g, lan100, wlan or custom:...)");
  std::string_view rest = std::string_view(text).substr(custom.size());
  if (rest.empty())
    throw std::invalid_argument("link: 'custom:' needs rate, delay, jitter or loss");
  while (!rest.empty()) {
    const auto comma = std::min(rest.find(','), rest.size());
    const std::string_view item = rest.substr(0, comma);
    rest = rest.substr(std::min(comma + 1, rest.size()));
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument("link: '" + std::string(item) + "' is not key=value");
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "rate") {
      spec.rate_bps = parse_rate(value);
    } else if (key == "delay") {
      spec.delay_ms = parse_time_ms(value, "delay");
    } else if (key == "jitter") {
      spec.jitter_ms = parse_time_ms(value, "jitter");
    } else if (key == "loss") {
      if (!value.ends_with('%')) throw std::invalid_argument("link: loss needs '%', e.g. 0.1%");
      spec.loss_pct = number(value.substr(0, value.size() - 1), "loss");
      if (spec.loss_pct > 100) throw std::invalid_argument("link: loss is over 100%");
    } else {
      throw std::invalid_argument("link: unknown key '" + std::string(key) +
                                  "' (expected rate, delay, jitter, loss)");
    }
  }
  return spec;
}

std::string LinkShaping::describe() const {
  std::string text =
      "client->server: " + client_to_server + "; server->client: " + server_to_client;
  text += netem_available ? "; netem available" : "; netem not in this kernel";
  if (!not_applied.empty()) text += "; NOT applied: " + not_applied;
  return text;
}

std::optional<std::string> link_unavailable_reason() {
  // CAP_NET_ADMIN (bit 12) in the effective set: root has it, and a
  // capability-granted user may too.
  FILE* status = std::fopen("/proc/self/status", "r");
  bool net_admin = false;
  if (status != nullptr) {
    char line[256];
    while (std::fgets(line, sizeof line, status) != nullptr) {
      unsigned long long caps = 0;
      if (std::sscanf(line, "CapEff: %llx", &caps) == 1) net_admin = (caps >> 12) & 1;
    }
    std::fclose(status);
  }
  if (!net_admin) return "links need root or CAP_NET_ADMIN (network namespaces, veth, tc)";
  if (run({"ip", "-V"}).status != 0) return "links need the ip command (Debian: iproute2)";
  if (run({"tc", "-V"}).status != 0) return "links need the tc command (Debian: iproute2)";
  const std::string probe = std::string(kPrefix) + std::to_string(::getpid()) + "-probe";
  const Outcome added = run({"ip", "netns", "add", probe});
  if (added.status != 0) return "cannot create a network namespace: " + added.output;
  // A veth pair and tbf on it, as a link needs (containers may lack either).
  std::optional<std::string> reason;
  if (const Outcome veth =
          run({"ip", "-n", probe, "link", "add", "wsbp0", "type", "veth", "peer", "name", "wsbp1"});
      veth.status != 0) {
    reason = "cannot create a veth pair: " + veth.output;
  } else if (const Outcome tbf = run({"tc", "-n", probe, "qdisc", "add", "dev", "wsbp0", "root",
                                      "tbf", "rate", "1mbit", "burst", "16kb", "limit", "64kb"});
             tbf.status != 0) {
    reason = "cannot shape with tbf: " + tbf.output;
  }
  run({"ip", "netns", "del", probe});
  return reason;
}

int remove_stale_links() {
  DIR* dir = ::opendir("/run/netns");
  if (dir == nullptr) return 0;
  std::vector<std::string> stale;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    const pid_t pid = creator_of(name);
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) stale.push_back(name);
  }
  ::closedir(dir);
  int removed = 0;
  for (const auto& name : stale)
    if (run({"ip", "netns", "del", name}).status == 0) ++removed;
  return removed;
}

NetworkLink::NetworkLink(const LinkSpec& spec) : spec_(spec) {
  if (spec.loopback()) throw std::invalid_argument("link: loopback needs no namespaces");
  const std::string base =
      std::string(kPrefix) + std::to_string(::getpid()) + "-" + std::to_string(links_made++);
  client_ns_ = base + "-c";
  server_ns_ = base + "-s";
  // veth names: at most 15 characters, unique inside their namespace only.
  const std::string client_dev = "wsbc", server_dev = "wsbs";

  // The watcher: a process in a session of its own (Ctrl-C does not reach
  // it) that waits for this process's end of a pipe to close, which the
  // kernel does however this process ends, then removes both namespaces.
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("link: pipe failed");
  const std::string script = "read _; ip netns del " + client_ns_ + " 2>/dev/null; ip netns del " +
                             server_ns_ + " 2>/dev/null; exit 0";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[0], STDIN_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  const char* argv[] = {"sh", "-c", script.c_str(), nullptr};
  const int spawned =
      posix_spawnp(&watcher_, "sh", &actions, &attr, const_cast<char**>(argv), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[0]);
  if (spawned != 0) {
    ::close(pipe_fds[1]);
    throw std::runtime_error(std::string("link: cannot start the watcher: ") +
                             std::strerror(spawned));
  }
  watcher_pipe_ = pipe_fds[1];

  try {
    must({"ip", "netns", "add", client_ns_});
    must({"ip", "netns", "add", server_ns_});
    must({"ip", "link", "add", client_dev, "netns", client_ns_, "type", "veth", "peer", "name",
          server_dev, "netns", server_ns_});
    for (const auto& [ns, dev, address] : {std::tuple{client_ns_, client_dev, client_address()},
                                           std::tuple{server_ns_, server_dev, server_address()}}) {
      must({"ip", "-n", ns, "link", "set", "lo", "up"});
      must({"ip", "-n", ns, "addr", "add", address + "/30", "dev", dev});
      must({"ip", "-n", ns, "link", "set", dev, "up"});
    }
    // netem where the kernel has it: try it on the client's lo.
    shaping_.netem_available =
        run({"tc", "-n", client_ns_, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "0ms"})
            .status == 0;
    if (shaping_.netem_available)
      run({"tc", "-n", client_ns_, "qdisc", "del", "dev", "lo", "root"});

    std::vector<std::string> qdisc;
    std::string missing;
    if (shaping_.netem_available) {
      if (spec.delay_ms > 0 || spec.jitter_ms > 0 || spec.loss_pct > 0 || spec.rate_bps > 0) {
        qdisc = {"netem"};
        if (spec.delay_ms > 0 || spec.jitter_ms > 0) {
          qdisc.insert(qdisc.end(), {"delay", format_ms(spec.delay_ms)});
          if (spec.jitter_ms > 0) qdisc.push_back(format_ms(spec.jitter_ms));
        }
        if (spec.loss_pct > 0) {
          char loss[32];
          std::snprintf(loss, sizeof loss, "%g%%", spec.loss_pct);
          qdisc.insert(qdisc.end(), {"loss", loss});
        }
        if (spec.rate_bps > 0)
          qdisc.insert(qdisc.end(), {"rate", std::to_string(spec.rate_bps) + "bit"});
        qdisc.insert(qdisc.end(), {"limit", "100000"});
        shaping_.applied_rate_bps = spec.rate_bps;
        shaping_.applied_one_way_delay_ms = spec.delay_ms;
      }
    } else {
      if (spec.rate_bps > 0) {
        // Burst: 1 ms at the rate, at least 16 KiB (a timer tick's worth,
        // so tbf can reach its rate). Queue: 100 ms at the rate, so TCP
        // sees delay before it sees drops.
        const std::uint64_t bytes_per_s = spec.rate_bps / 8;
        const std::uint64_t burst = std::max<std::uint64_t>(bytes_per_s / 1000, 16 * 1024);
        const std::uint64_t limit = std::max<std::uint64_t>(bytes_per_s / 10, 4 * burst);
        qdisc = {"tbf",
                 "rate",
                 std::to_string(spec.rate_bps) + "bit",
                 "burst",
                 std::to_string(burst) + "b",
                 "limit",
                 std::to_string(limit) + "b"};
        shaping_.applied_rate_bps = spec.rate_bps;
      }
      auto add_missing = [&](const std::string& what) {
        missing += (missing.empty() ? "" : ", ") + what;
      };
      if (spec.delay_ms > 0) add_missing("delay " + format_ms(spec.delay_ms));
      if (spec.jitter_ms > 0) add_missing("jitter " + format_ms(spec.jitter_ms));
      if (spec.loss_pct > 0) {
        char loss[48];
        std::snprintf(loss, sizeof loss, "loss %g%%", spec.loss_pct);
        add_missing(loss);
      }
      if (!missing.empty()) missing += " (no netem in this kernel)";
    }
    shaping_.not_applied = missing;
    std::string applied = "none (unshaped veth)";
    if (!qdisc.empty()) {
      applied.clear();
      for (const auto& word : qdisc) applied += (applied.empty() ? "" : " ") + word;
      for (const auto& [ns, dev] : {std::pair{client_ns_, client_dev}, {server_ns_, server_dev}}) {
        std::vector<std::string> command = {"tc", "-n", ns, "qdisc", "add", "dev", dev, "root"};
        command.insert(command.end(), qdisc.begin(), qdisc.end());
        must(command);
      }
    }
    shaping_.client_to_server = applied;
    shaping_.server_to_client = applied;

    client_fd_ = ::open(("/run/netns/" + client_ns_).c_str(), O_RDONLY | O_CLOEXEC);
    server_fd_ = ::open(("/run/netns/" + server_ns_).c_str(), O_RDONLY | O_CLOEXEC);
    if (client_fd_ < 0 || server_fd_ < 0)
      throw std::runtime_error(std::string("link: cannot open a namespace: ") +
                               std::strerror(errno));
  } catch (...) {
    remove();
    throw;
  }
}

NetworkLink::~NetworkLink() { remove(); }

void NetworkLink::remove() noexcept {
  for (int* fd : {&client_fd_, &server_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  try {
    run({"ip", "netns", "del", client_ns_});
    run({"ip", "netns", "del", server_ns_});
  } catch (const std::exception&) {
    // The watcher below removes them.
  }
  if (watcher_pipe_ >= 0) ::close(watcher_pipe_);
  watcher_pipe_ = -1;
  if (watcher_ > 0) {
    int status = 0;
    while (::waitpid(watcher_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  watcher_ = -1;
}

const std::string& NetworkLink::namespace_name(Side side) const {
  return side == Side::client ? client_ns_ : server_ns_;
}

void NetworkLink::enter(Side side) const {
  if (::setns(side == Side::client ? client_fd_ : server_fd_, CLONE_NEWNET) != 0)
    throw std::runtime_error("link: cannot enter namespace " + namespace_name(side) + ": " +
                             std::strerror(errno));
}

void NetworkLink::run_in(Side side, const std::function<void()>& fn) const {
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      enter(side);
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace wsb
