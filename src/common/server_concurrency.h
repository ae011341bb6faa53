// How many clients a server serves at once and how long it waits for a
// slow one: every stack's concurrency knobs as one set of named settings
// (what each maps to in each library, and why these defaults: docs/servers/concurrency.md).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace wsb {

struct ServerConcurrency {
  // Threads running the beast server's io_context. gSOAP and Abyss run a
  // thread per connection instead and ignore it.
  int io_threads = 1;
  // Connections served at once. Beyond it, a new connection waits in the
  // listen queue until one ends (Abyss polls for a free slot every 2 s).
  // High enough that 2,000 idle clients lock nobody out.
  int max_connections = 4096;
  // Connections the kernel queues before the server accepts them.
  int backlog = 1024;
  // Seconds a server waits for one whole request, the idle wait before it
  // included, however slowly its bytes trickle in (ServerLimits'
  // keepalive_timeout_s bounds a wait in which no byte comes at all).
  int request_timeout_s = 60;
  // Requests served on one connection before the server closes it; 0: no
  // limit (a client never reconnects silently mid-benchmark).
  int max_keepalive_requests = 0;
};

// The settings as name/value pairs, for results' context and --help.
std::vector<std::pair<std::string, std::string>> describe(const ServerConcurrency& c);
// The same on one line: "io_threads=1 max_connections=4096 ...".
std::string describe_text(const ServerConcurrency& c);

}  // namespace wsb
