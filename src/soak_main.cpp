// wsbench-soak: each stack's server, as a wsbench-server child process,
// under C concurrent keep-alive clients doing verified echo (message-a/100) for N
// seconds.
// Passes if no reply is wrong, no call fails, the server lives, its RSS
// grows less than 10% after warm-up and its open descriptors do not grow
// (both read from /proc/<pid>). scripts/soak runs it; docs/servers/soak.md.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "common/payload.h"
#include "common/transport.h"

namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

extern char** environ;

namespace {

constexpr const char* kPayload = "message-a/100";

// The codec a stack carries natively (beast: REST with JSON).
std::string native_codec(const wsb::StackEntry& stack) {
  return stack.name == "beast" ? "json" : stack.codecs.front();
}

// wsbench-server serving one stack on an ephemeral loopback port.
class ServerProcess {
 public:
  ServerProcess(const std::string& binary, const std::string& stack) {
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    const std::string listen = stack + "=127.0.0.1:0";
    std::vector<std::string> args{binary, "--only", "--listen", listen};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (rc != 0) {
      close(out[0]);
      throw std::runtime_error("cannot start " + binary);
    }
    // "STACK HOST:PORT" once it listens.
    std::string line;
    char c;
    while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    close(out[0]);
    const auto space = line.find(' ');
    if (space == std::string::npos) throw std::runtime_error("server printed '" + line + "'");
    endpoint_ = wsb::parse_endpoint(line.substr(space + 1));
  }
  ~ServerProcess() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  pid_t pid() const { return pid_; }
  const wsb::Endpoint& endpoint() const { return endpoint_; }
  bool alive() const { return waitpid(pid_, nullptr, WNOHANG) == 0; }

  // Resident set in KiB (VmRSS), 0 if unreadable.
  long rss_kib() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    std::string key;
    long value = 0;
    while (status >> key) {
      if (key == "VmRSS:") {
        status >> value;
        return value;
      }
      status.ignore(1 << 16, '\n');
    }
    return 0;
  }
  long open_fds() const {
    std::error_code ec;
    long n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid_) + "/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
      ++n;
    return n;
  }

 private:
  pid_t pid_ = -1;
  wsb::Endpoint endpoint_;
};

struct Figures {
  long calls = 0, wrong = 0, failed = 0;
  long rss_warm = 0, rss_end = 0, rss_peak = 0, fds_warm = 0, fds_end = 0;
  bool alive = true;
  std::string first_error;
};

Figures soak(const wsb::StackEntry& stack, const std::string& server_binary, int seconds,
             int clients) {
  ServerProcess server(server_binary, stack.name);
  const std::string codec = native_codec(stack);
  std::atomic<long> calls{0}, wrong{0}, failed{0};
  std::atomic<bool> stop{false};
  std::mutex error_mutex;
  std::string first_error;
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] {
      try {
        // Each client its own payload, so a reply meant for another
        // connection shows as wrong.
        const wsb::Payload sent = wsb::generate(wsb::parse_spec(kPayload), 1000 + i);
        wsb::Payload got;
        const auto client = stack.connect(server.endpoint(), codec);
        while (!stop) {
          client->echo(sent, got);
          ++calls;
          if (!wsb::describe_difference(sent, got).empty()) ++wrong;
        }
      } catch (const std::exception& e) {
        ++failed;
        const std::lock_guard lock(error_mutex);
        if (first_error.empty()) first_error = e.what();
      }
    });
  }
  Figures f;
  const auto start = Clock::now();
  const auto warm_up = std::chrono::seconds(std::max(1, seconds / 5));
  bool warmed = false;
  while (Clock::now() - start < std::chrono::seconds(seconds) && failed == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (!server.alive()) break;
    const long rss = server.rss_kib();
    if (!warmed && Clock::now() - start >= warm_up) {
      warmed = true;
      f.rss_warm = rss;
      f.fds_warm = server.open_fds();
    }
    if (warmed) f.rss_peak = std::max(f.rss_peak, rss);
  }
  f.alive = server.alive();
  f.rss_end = server.rss_kib();
  f.fds_end = server.open_fds();
  stop = true;
  for (auto& t : threads) t.join();
  f.calls = calls;
  f.wrong = wrong;
  f.failed = failed;
  f.first_error = first_error;
  return f;
}

std::string format_percent(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", value);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  std::string server_binary;
  std::vector<std::string> stacks;
  int seconds = 60;
  int clients = 64;
  double max_rss_growth = 10.0;
  po::options_description options("wsbench-soak options");
  options.add_options()("help,h", "show this help")("server", po::value(&server_binary)->required(),
                                                    "the wsbench-server binary to run")(
      "stack", po::value(&stacks)->composing(),
      "a stack to soak (repeatable; default: all but the -tls ones)")(
      "seconds", po::value(&seconds)->default_value(seconds), "seconds per stack")(
      "clients", po::value(&clients)->default_value(clients), "concurrent keep-alive clients")(
      "max-rss-growth", po::value(&max_rss_growth)->default_value(max_rss_growth),
      "largest RSS growth after warm-up that passes, in percent; negative: not checked "
      "(AddressSanitizer's quarantine holds freed memory, so RSS says nothing there)");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    if (vm.count("help")) {
      std::cout << options;
      return 0;
    }
    po::notify(vm);
    if (seconds < 2 || clients < 1)
      throw std::invalid_argument("--seconds must be at least 2 and --clients at least 1");
    for (const auto& s : stacks) wsb::find_stack(s);
  } catch (const std::exception& e) {
    std::cerr << "wsbench-soak: " << e.what() << "\n" << options;
    return 2;
  }
  // By default every stack but the TLS ones: a TLS client trusts only its
  // own process's certificate (src/common/tls.h), and the server is a
  // child process with another.
  if (stacks.empty())
    for (const auto& s : wsb::all_stacks())
      if (!s.name.ends_with("-tls")) stacks.push_back(s.name);

  bool all_passed = true;
  std::printf("%-9s %-6s %7s %7s %9s %6s %6s %9s %9s %9s %7s %5s %5s  %s\n", "stack", "codec",
              "clients", "seconds", "calls", "wrong", "failed", "rss_warm", "rss_end", "rss_peak",
              "growth", "fds0", "fds1", "verdict");
  for (const auto& name : stacks) {
    const wsb::StackEntry& stack = wsb::find_stack(name);
    Figures f;
    try {
      f = soak(stack, server_binary, seconds, clients);
    } catch (const std::exception& e) {
      std::printf("%-9s could not run: %s\n", name.c_str(), e.what());
      all_passed = false;
      continue;
    }
    const double growth =
        f.rss_warm > 0 ? 100.0 * (static_cast<double>(f.rss_end) / f.rss_warm - 1.0) : 0.0;
    std::string why;
    if (f.calls == 0) why += " no calls;";
    if (f.wrong != 0) why += " wrong replies;";
    if (f.failed != 0) why += " failed calls (" + f.first_error + ");";
    if (!f.alive) why += " server died;";
    if (max_rss_growth >= 0 && (f.rss_warm == 0 || growth >= max_rss_growth))
      why += " RSS grew " + format_percent(max_rss_growth) + " or more;";
    if (f.fds_end > f.fds_warm) why += " descriptors grew;";
    all_passed = all_passed && why.empty();
    std::printf("%-9s %-6s %7d %7d %9ld %6ld %6ld %8ldk %8ldk %8ldk %6.1f%% %5ld %5ld  %s\n",
                name.c_str(), native_codec(stack).c_str(), clients, seconds, f.calls, f.wrong,
                f.failed, f.rss_warm, f.rss_end, f.rss_peak, growth, f.fds_warm, f.fds_end,
                why.empty() ? "pass" : ("FAIL:" + why).c_str());
    std::fflush(stdout);
  }
  return all_passed ? 0 : 1;
}
