// wsbench-server: every protocol stack in one process, for running client
// and server on two hosts (bench --target STACK=HOST:PORT).
//
//   wsbench-server                          all stacks, 127.0.0.1, ephemeral ports
//   wsbench-server --listen beast=0.0.0.0:8080 --listen gsoap=0.0.0.0:8081
//
// Prints one "STACK HOST:PORT" line per stack once all are listening, then
// serves until SIGINT or SIGTERM and shuts down cleanly.
#include <pthread.h>
#include <signal.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/phases.h"
#include "common/placement.h"
#include "common/service.h"
#include "common/transport.h"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  std::vector<std::string> listens;
  int cpu = -1;
  wsb::ServerConcurrency concurrency;
  po::options_description options("wsbench-server options");
  options.add_options()("help,h", "show this help")(
      "listen", po::value(&listens)->composing(),
      "STACK=HOST:PORT to serve a stack there (repeatable); stacks not named listen on "
      "127.0.0.1 with an ephemeral port, unless --only is given")(
      "only", "serve only the stacks named by --listen")("cpu", po::value(&cpu),
                                                         "pin every server thread to this vCPU")(
      "io-threads", po::value(&concurrency.io_threads)->default_value(concurrency.io_threads),
      "threads running the beast server's I/O loop")(
      "max-connections",
      po::value(&concurrency.max_connections)->default_value(concurrency.max_connections),
      "connections each server serves at once; more wait in the listen queue")(
      "backlog", po::value(&concurrency.backlog)->default_value(concurrency.backlog),
      "listen queue length")(
      "request-timeout",
      po::value(&concurrency.request_timeout_s)->default_value(concurrency.request_timeout_s),
      "seconds a client has to send a whole request, however slowly")(
      "max-keepalive-requests",
      po::value(&concurrency.max_keepalive_requests)
          ->default_value(concurrency.max_keepalive_requests),
      "requests per connection before the server closes it (0: no limit)");
  po::variables_map vm;
  std::map<std::string, wsb::Endpoint> endpoints;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    po::notify(vm);
    if (concurrency.io_threads < 1 || concurrency.max_connections < 1 || concurrency.backlog < 1 ||
        concurrency.request_timeout_s < 1 || concurrency.max_keepalive_requests < 0)
      throw std::invalid_argument(
          "--io-threads, --max-connections, --backlog and --request-timeout must be at least 1, "
          "--max-keepalive-requests at least 0");
    for (const auto& listen : listens) {
      auto [stack, endpoint] = wsb::parse_stack_endpoint(listen);
      endpoints[stack] = std::move(endpoint);
    }
  } catch (const std::exception& e) {
    std::cerr << "wsbench-server: " << e.what() << "\n" << options;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }

  // Block the signals before any server thread exists, so every thread
  // inherits the mask and only sigwait below sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // No client in this process reads the probes' slots; a client that wants
  // the server's phases asks for Server-Timing, which does not need them.
  wsb::set_probes_enabled(false);
  wsb::Service service;
  std::vector<std::unique_ptr<wsb::Server>> servers;
  try {
    for (const auto& stack : wsb::all_stacks()) {
      const auto it = endpoints.find(stack.name);
      if (it == endpoints.end() && vm.count("only")) continue;
      wsb::ServerOptions server_options;
      if (it != endpoints.end()) server_options.listen = it->second;
      if (cpu >= 0) server_options.cpu = cpu;
      server_options.concurrency = concurrency;
      servers.push_back(stack.start_server(service, server_options));
      std::printf("%s %s\n", stack.name.c_str(), servers.back()->endpoint().to_string().c_str());
    }
  } catch (const std::exception& e) {
    std::cerr << "wsbench-server: " << e.what() << "\n";
    for (auto& server : servers) server->stop();
    return 1;
  }
  std::fprintf(stderr, "wsbench-server: %s\n", wsb::describe_text(concurrency).c_str());
  std::fflush(stdout);

  int received = 0;
  sigwait(&signals, &received);
  std::fprintf(stderr, "wsbench-server: %s, shutting down\n",
               received == SIGINT ? "SIGINT" : "SIGTERM");
  for (auto& server : servers) server->stop();
  return 0;
}
