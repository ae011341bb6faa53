// Where round trips are served: the pool of in-process servers and each
// case's isolation (CaseScope, rtt_internal.h).
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <system_error>
#include <vector>

#include "common/dictionary.h"
#include "harness/network_link.h"
#include "rtt_internal.h"

namespace wsb::bench::rtt {
namespace {

DictionaryOptions dictionary_options(unsigned size_multiple) {
  DictionaryOptions options;
  options.size_multiple = size_multiple;
  return options;
}

}  // namespace

ServerPool::ServerPool(const RttOptions& options)
    : targets_(options.targets),
      remote_floor_(options.remote_floor),
      link_(options.link),
      service_({}, {}, dictionary_options(options.dictionary_size)) {}

Endpoint ServerPool::endpoint(const StackEntry& stack, Placement placement) {
  if (const auto it = targets_.find(stack.name); it != targets_.end()) return it->second;
  const std::lock_guard lock(mutex_);
  const auto key = std::make_pair(stack.name, placement);
  auto& server = servers_[key];
  if (!server) {
    ServerOptions options;
    options.cpu = server_cpu(placement);
    if (link_ == nullptr) {
      server = stack.start_server(service_, options);
    } else {
      // Its listening socket is made in the server's namespace, and
      // keeps it; so do the connections it accepts.
      options.listen = Endpoint{NetworkLink::server_address(), 0};
      link_->run_in(NetworkLink::Side::server,
                    [&] { server = stack.start_server(service_, options); });
    }
  }
  return server->endpoint();
}

void ServerPool::stop_servers() {
  const std::lock_guard lock(mutex_);
  servers_.clear();
}

void ServerPool::warm_up(const StackEntry& stack, Placement placement) {
  if (!in_process(stack)) return;
  {
    const std::lock_guard lock(mutex_);
    if (!warmed_.insert(stack.name).second) return;
  }
  const Endpoint server = endpoint(stack, placement);
  // One call too: what a library makes on its first connection and keeps
  // (gRPC's TLS handshake threads) is then there before the baseline. A
  // call that fails here fails in the case, which says why.
  try {
    stack.connect(server, stack.codecs.front())->ping();
  } catch (const std::exception&) {
  }
  stop_servers();
}

ServerPool* pool = nullptr;

void init_pool(const RttOptions& options) {
  static std::unique_ptr<ServerPool> servers;
  if (!servers) servers = std::make_unique<ServerPool>(options);
  pool = servers.get();
}

namespace {

// The dictionary's files as /proc names them, if the service has opened it,
// once the stack's server has been warmed up (ServerPool::warm_up).
// A define or put case opens it here, before its baseline, so its files are
// known before any server thread connects; if it cannot be opened, the
// case's first call reports why.
std::vector<std::filesystem::path> dictionary_files(const RttCase& c) {
  pool->warm_up(*c.stack, c.placement);
  Service& service = pool->service();
  if ((c.op == Op::define || c.op == Op::put) && pool->in_process(*c.stack)) {
    try {
      service.dictionary();
    } catch (const std::exception&) {
      // Left to the case's first call, which fails with this error.
    }
  }
  const Dictionary* dictionary = service.opened_dictionary();
  if (dictionary == nullptr) return {};
  std::vector<std::filesystem::path> files = dictionary->files();
  for (auto& file : files) {
    std::error_code ec;
    if (auto canonical = std::filesystem::weakly_canonical(file, ec); !ec) file = canonical;
  }
  return files;
}

}  // namespace

CaseScope::CaseScope(const RttCase& c)
    : name_(c.name()),
      threads_by_load_(c.stack->library_thread_pool),
      dictionary_files_(dictionary_files(c)),
      before_(ProcessState::now()) {
  pool->endpoint(*c.stack, c.placement);
  idle_server_ = ProcessState::now(dictionary_files_);
}

CaseScope::~CaseScope() {
  affinity_.restore();
  const auto timeout = std::chrono::seconds(2);
  // A server thread keeps its dictionary connection until it ends
  // (docs/reference/dictionary.md), and Beast's I/O thread outlives the
  // case's connections: its descriptors on the dictionary's files are not
  // the connections'. Stopping the server must close them: the process
  // check below counts every descriptor.
  // A pool its library grows by load (gRPC's) keeps its threads until the
  // server stops; the process check below counts them.
  ProcessState idle = idle_server_;
  const ProcessState released = wait_for_state(
      idle, timeout, dictionary_files_, threads_by_load_ ? Threads::uncounted : Threads::counted);
  if (threads_by_load_) idle.threads = released.threads;
  if (!(released == idle)) report("its connections", idle, released);
  pool->stop_servers();
  const ProcessState after = wait_for_state(before_, timeout);
  if (!(after == before_)) report("the process", before_, after);
}

void CaseScope::report(const char* what, const ProcessState& expected,
                       const ProcessState& seen) const {
  std::fprintf(stderr, "bench: %s: %s not released: expected %s, found %s\n", name_.c_str(), what,
               expected.describe().c_str(), seen.describe().c_str());
}

}  // namespace wsb::bench::rtt
