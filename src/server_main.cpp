// wsbench-server: every protocol stack in one process, for running client
// and server on two hosts (bench --remote STACK=HOST:PORT), and the raw TCP
// floor port the remote floor is measured against (bench --remote-floor).
//
//   wsbench-server                          all stacks, 127.0.0.1, ephemeral ports
//   wsbench-server --listen beast=0.0.0.0:8080 --listen gsoap=0.0.0.0:8081 --floor 0.0.0.0:8090
//
// Prints one "STACK HOST:PORT" line per stack and a "floor HOST:PORT" line
// once all are listening, then serves until SIGINT or SIGTERM and shuts
// down cleanly.
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
#include "harness/tcp_floor.h"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  std::vector<std::string> listens;
  int cpu = -1;
  std::string dictionary_size = "x1";
  wsb::DictionaryOptions dictionary;
  std::string floor = "127.0.0.1:0";
  wsb::ServerConcurrency concurrency;
  wsb::ServerLimits limits;
  po::options_description options("wsbench-server options");
  options.add_options()("help,h", "show this help")(
      "listen", po::value(&listens)->composing(),
      "STACK=HOST:PORT to serve a stack there (repeatable); stacks not named listen on "
      "127.0.0.1 with an ephemeral port, unless --only is given")(
      "only", "serve only the stacks named by --listen")(
      "floor", po::value(&floor)->default_value(floor),
      "HOST:PORT of the raw TCP floor port (bench --remote-floor)")(
      "cpu", po::value(&cpu), "pin every server thread to this vCPU")(
      "dictionary-size", po::value(&dictionary_size)->default_value(dictionary_size),
      "E8's definitions: x1, x10, x15 or x20 times 128 bytes")(
      "dictionary-dir", po::value(&dictionary.cache_dir),
      "folder of the dictionary database (default: $WSBENCH_CACHE_DIR, "
      "$XDG_CACHE_HOME/wsbench or ~/.cache/wsbench)")(
      "dictionary-words", po::value(&dictionary.word_list),
      "word list the dictionary is built from, one word a line (default: "
      "/usr/share/dict/american-english)")(
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
      "requests per connection before the server closes it (0: no limit)")(
      "idle-release-ms", po::value(&limits.idle_release_ms)->default_value(limits.idle_release_ms),
      "milliseconds a beast connection waits for its next request before it frees the "
      "buffers a large body left (0: never)");
  po::variables_map vm;
  std::map<std::string, wsb::Endpoint> endpoints;
  wsb::Endpoint floor_endpoint;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    po::notify(vm);
    dictionary.size_multiple = wsb::parse_size_multiple(dictionary_size);
    floor_endpoint = wsb::parse_endpoint(floor);
    if (concurrency.io_threads < 1 || concurrency.max_connections < 1 || concurrency.backlog < 1 ||
        concurrency.request_timeout_s < 1 || concurrency.max_keepalive_requests < 0 ||
        limits.idle_release_ms < 0)
      throw std::invalid_argument(
          "--io-threads, --max-connections, --backlog and --request-timeout must be at least 1, "
          "--max-keepalive-requests and --idle-release-ms at least 0");
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
  // The whole process on --cpu: every thread started from here inherits
  // it, the threads of a library that places its own (gRPC's, which
  // ServerOptions::cpu cannot reach) included.
  if (cpu >= 0) wsb::pin_current_thread(cpu);
  wsb::Service service({}, {}, dictionary);
  // Opened (built on first use) before serving, so no request waits for a
  // build; without it the other operations still serve.
  try {
    std::fprintf(stderr, "wsbench-server: dictionary %s\n", service.dictionary().path().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wsbench-server: %s; define and put will fail\n", e.what());
  }
  std::vector<std::unique_ptr<wsb::Server>> servers;
  std::unique_ptr<wsb::FloorServer> floor_server;
  try {
    for (const auto& stack : wsb::all_stacks()) {
      const auto it = endpoints.find(stack.name);
      if (it == endpoints.end() && vm.count("only")) continue;
      wsb::ServerOptions server_options;
      if (it != endpoints.end()) server_options.listen = it->second;
      if (cpu >= 0) server_options.cpu = cpu;
      server_options.concurrency = concurrency;
      server_options.limits = limits;
      servers.push_back(stack.start_server(service, server_options));
      std::printf("%s %s\n", stack.name.c_str(), servers.back()->endpoint().to_string().c_str());
    }
    floor_server = std::make_unique<wsb::FloorServer>(floor_endpoint.host, floor_endpoint.port);
    std::printf("floor %s:%u\n", floor_endpoint.host.c_str(), floor_server->port());
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
  floor_server.reset();
  return 0;
}
