// A shaped link between two network namespaces (bench --link): client and
// server each in a namespace of their own, joined by a veth pair whose two
// ends are shaped with tc. Why namespaces in one process, and what each
// preset applies: docs/servers/links.md.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace wsb {

// What a link should be. rate_bps 0: unlimited.
struct LinkSpec {
  std::string name;  // "lan1g", ..., or "custom:..." as given
  std::uint64_t rate_bps = 0;
  double delay_ms = 0;   // one way, each direction
  double jitter_ms = 0;  // one way, each direction
  double loss_pct = 0;   // each direction
  bool loopback() const { return name == "loopback"; }
};

// "loopback", "lan1g", "lan100", "wlan" or
// "custom:rate=100mbit,delay=2ms,jitter=1ms,loss=0.1%" (any subset of the
// keys; rate in bit, kbit, mbit or gbit per second, times in us, ms or s).
// Throws std::invalid_argument naming what is wrong.
LinkSpec parse_link(const std::string& text);

// What the kernel was really asked to do, per direction; the figures a
// wire limit may use are only those applied.
struct LinkShaping {
  std::string client_to_server;  // e.g. "tbf rate 100mbit burst 16384b limit 1250000b"
  std::string server_to_client;
  std::uint64_t applied_rate_bps = 0;   // 0: none applied
  double applied_one_way_delay_ms = 0;  // 0: none applied
  std::string not_applied;              // what was asked and could not be had, or ""
  bool netem_available = false;
  std::string describe() const;  // one line for the run's context
};

// The reason this process cannot create links (not root, no CAP_NET_ADMIN,
// no ip or tc, no network namespaces), or nullopt if it can.
std::optional<std::string> link_unavailable_reason();

// Removes namespaces left by wsbench processes that no longer run (their
// names carry the creator's pid); returns how many were removed.
int remove_stale_links();

// Two namespaces "wsb-<pid>-<n>-c" and "-s", a veth pair between them
// (addresses client_address() and server_address(), no other route), and
// the shaping of `spec` on both ends. Everything is removed by the
// destructor; if the process dies first, a watcher process removes it,
// and failing that the next remove_stale_links().
class NetworkLink {
 public:
  explicit NetworkLink(const LinkSpec& spec);  // throws std::runtime_error
  ~NetworkLink();
  NetworkLink(const NetworkLink&) = delete;
  NetworkLink& operator=(const NetworkLink&) = delete;

  enum class Side { client, server };
  const LinkSpec& spec() const { return spec_; }
  const LinkShaping& shaping() const { return shaping_; }
  const std::string& namespace_name(Side side) const;
  static std::string client_address() { return "10.213.0.1"; }
  static std::string server_address() { return "10.213.0.2"; }

  // Moves the calling thread into a side's namespace: sockets it creates
  // from then on belong there (and keep it). Threads it starts later
  // inherit it.
  void enter(Side side) const;
  // Runs `fn` on a thread of its own in a side's namespace and returns
  // when it does (its exception is rethrown here).
  void run_in(Side side, const std::function<void()>& fn) const;

 private:
  void remove() noexcept;

  LinkSpec spec_;
  LinkShaping shaping_;
  std::string client_ns_, server_ns_;
  int client_fd_ = -1, server_fd_ = -1;
  int watcher_pipe_ = -1;  // the watcher removes the namespaces when it closes
  pid_t watcher_ = -1;
};

}  // namespace wsb
