#include "load/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace wsb::load {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::uint64_t> status_kb(std::string_view status, std::string_view field) {
  const auto at = status.find(field);
  if (at == std::string_view::npos) return std::nullopt;
  std::istringstream in(std::string(status.substr(at + field.size())));
  std::uint64_t kb = 0;
  if (!(in >> kb)) return std::nullopt;
  return kb;
}

// Waits up to `limit` for the child to exit; true if it did.
bool reap(pid_t pid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno == ECHILD)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

std::optional<ProcessUsage> parse_usage(std::string_view stat, std::string_view status,
                                        long ticks_per_second) {
  // "pid (comm) state ppid ...": comm may hold spaces; utime and stime are
  // fields 14 and 15, the 12th and 13th after the closing parenthesis.
  const auto close = stat.rfind(')');
  if (close == std::string_view::npos || ticks_per_second <= 0) return std::nullopt;
  std::istringstream fields(std::string(stat.substr(close + 1)));
  std::string field;
  std::uint64_t utime = 0, stime = 0;
  for (int i = 1; i <= 13 && fields >> field; ++i) {
    if (i == 12) utime = std::stoull(field);
    if (i == 13) stime = std::stoull(field);
    if (i == 13) {
      const auto rss = status_kb(status, "VmRSS:");
      const auto hwm = status_kb(status, "VmHWM:");
      if (!rss || !hwm) return std::nullopt;
      return ProcessUsage{
          static_cast<double>(utime + stime) / static_cast<double>(ticks_per_second), *rss, *hwm};
    }
  }
  return std::nullopt;
}

std::optional<ProcessUsage> read_usage(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  return parse_usage(slurp(dir + "/stat"), slurp(dir + "/status"), ::sysconf(_SC_CLK_TCK));
}

ServerProcess::ServerProcess(const std::filesystem::path& binary,
                             const std::vector<std::string>& stacks, std::optional<int> cpu,
                             const std::vector<std::string>& extra_args,
                             std::chrono::seconds startup_limit) {
  std::vector<std::string> args = {binary.string(), "--only"};
  for (const auto& stack : stacks) args.push_back("--listen=" + stack + "=127.0.0.1:0");
  if (cpu) args.push_back("--cpu=" + std::to_string(*cpu));
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  // Built before fork: the child of a threaded process may only exec.
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    // A driver that dies (SIGKILL, a crash) must not leave its server behind.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    ::execv(argv[0], argv.data());
    ::_exit(127);  // the parent reports that no endpoints came
  }
  ::close(out[1]);
  // One "STACK HOST:PORT" line per stack; a server that dies or stays
  // silent past the limit is an error.
  std::string text;
  char buffer[512];
  const auto until = std::chrono::steady_clock::now() + startup_limit;
  while (endpoints_.size() < stacks.size() && std::chrono::steady_clock::now() < until) {
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    std::size_t eol;
    while ((eol = text.find('\n')) != std::string::npos) {
      const std::string line = text.substr(0, eol);
      text.erase(0, eol + 1);
      const auto space = line.find(' ');
      if (space != std::string::npos)
        endpoints_[line.substr(0, space)] = parse_endpoint(line.substr(space + 1));
    }
  }
  ::close(out[0]);
  if (endpoints_.size() < stacks.size()) {
    stop();
    throw std::runtime_error("wsbench-server (" + binary.string() +
                             ") did not report its endpoints");
  }
}

ServerProcess::~ServerProcess() { stop(); }

Endpoint ServerProcess::endpoint(const std::string& stack) const {
  const auto it = endpoints_.find(stack);
  if (it == endpoints_.end()) throw std::invalid_argument("the server does not serve " + stack);
  return it->second;
}

void ServerProcess::kill_now() {
  if (pid_ > 0) ::kill(pid_, SIGKILL);
}

void ServerProcess::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  if (!reap(pid_, std::chrono::seconds(5))) {
    ::kill(pid_, SIGKILL);
    reap(pid_, std::chrono::seconds(5));
  }
  pid_ = -1;
}

UsageSampler::UsageSampler(pid_t pid, std::chrono::milliseconds period)
    : pid_(pid), start_(std::chrono::steady_clock::now()) {
  sample();
  thread_ = std::thread([this, period] {
    for (;;) {
      {
        const std::lock_guard lock(mutex_);
        if (stopping_) return;
      }
      std::this_thread::sleep_for(period);
      sample();
    }
  });
}

UsageSampler::~UsageSampler() { finish(); }

void UsageSampler::sample() {
  const auto usage = read_usage(pid_);
  if (!usage) return;
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::lock_guard lock(mutex_);
  samples_.push_back({t, *usage});
}

std::vector<UsageSampler::Sample> UsageSampler::finish() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return samples_;
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  sample();
  const std::lock_guard lock(mutex_);
  return samples_;
}

ServerFigures server_figures(const std::vector<UsageSampler::Sample>& samples) {
  ServerFigures f;
  f.samples = samples.size();
  if (samples.empty()) return f;
  f.cpu_s = samples.back().usage.cpu_s - samples.front().usage.cpu_s;
  f.wall_s = samples.back().t_s - samples.front().t_s;
  std::vector<std::uint64_t> steady;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    f.peak_rss_kb = std::max(f.peak_rss_kb, samples[i].usage.rss_kb);
    if (2 * i >= samples.size()) steady.push_back(samples[i].usage.rss_kb);
  }
  std::sort(steady.begin(), steady.end());
  f.steady_rss_kb = steady[steady.size() / 2];
  return f;
}

}  // namespace wsb::load
