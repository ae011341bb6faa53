#include "common/phases.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

namespace wsb {
namespace {

// Where in-process clients find their server connection's slot. Locked
// when a connection opens or closes and when a client first looks its slot
// up, never per request.
class ProbeBoard {
 public:
  std::shared_ptr<ProbeSlot> attach(std::uint16_t client_port, std::uint16_t server_port) {
    auto slot = std::make_shared<ProbeSlot>();
    const std::lock_guard lock(mutex_);
    slots_[key(client_port, server_port)] = slot;
    return slot;
  }

  void detach(std::uint16_t client_port, std::uint16_t server_port, const ProbeSlot* slot) {
    const std::lock_guard lock(mutex_);
    // A reused client port may already name a newer connection's slot.
    const auto it = slots_.find(key(client_port, server_port));
    if (it != slots_.end() && it->second.get() == slot) slots_.erase(it);
  }

  std::shared_ptr<const ProbeSlot> find(std::uint16_t client_port, std::uint16_t server_port) {
    const std::lock_guard lock(mutex_);
    if (client_port != 0) {
      const auto it = slots_.find(key(client_port, server_port));
      return it == slots_.end() ? nullptr : it->second;
    }
    std::shared_ptr<const ProbeSlot> only;
    for (const auto& [k, slot] : slots_) {
      if ((k & 0xffff) != server_port) continue;
      if (only) return nullptr;  // ambiguous: better none than another's
      only = slot;
    }
    return only;
  }

 private:
  static std::uint32_t key(std::uint16_t client_port, std::uint16_t server_port) {
    return (std::uint32_t{client_port} << 16) | server_port;
  }

  std::mutex mutex_;
  std::map<std::uint32_t, std::shared_ptr<ProbeSlot>> slots_;
};

// Never destroyed: servers held in statics close their connections after
// a function-local static would be gone.
ProbeBoard& board() {
  static ProbeBoard* const b = new ProbeBoard;
  return *b;
}

std::uint16_t port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return 0;
}

}  // namespace

void set_probes_enabled(bool on) { detail::probes_on.store(on, std::memory_order_relaxed); }

void inject_mark_fault(Mark point, MarkFault fault) {
  const auto code = static_cast<std::uint32_t>(fault);
  detail::mark_fault.store(code == 0 ? 0 : (static_cast<std::uint32_t>(point) << 8) | code,
                           std::memory_order_relaxed);
}

detail::PointReads detail::faulty_reads(Mark point, std::int64_t ns, std::int64_t previous_start) {
  const std::uint32_t fault = mark_fault.load(std::memory_order_relaxed);
  if (fault >> 8 != point) return {ns, ns};
  switch (static_cast<MarkFault>(fault & 0xff)) {
    case MarkFault::unclosed:
      return {0, ns};
    case MarkFault::early_start:
      return {ns, previous_start != 0 ? previous_start : ns};
    case MarkFault::none:
      break;
  }
  return {ns, ns};
}

void ProbeSlot::begin_request(std::int64_t received_ns) {
  served_.store(0, std::memory_order_relaxed);
  for (std::size_t i = 1; i < kPoints; ++i) {
    ends_[i].store(0, std::memory_order_relaxed);
    starts_[i].store(0, std::memory_order_relaxed);
  }
  mark(kRequestReceived, received_ns);
}

void ProbeSlot::mark(Mark point, std::int64_t ns) {
  const std::size_t i = point - kRequestReceived;
  detail::PointReads reads{ns, ns};
  if (detail::mark_fault.load(std::memory_order_relaxed) != 0)
    reads =
        detail::faulty_reads(point, ns, i > 0 ? starts_[i - 1].load(std::memory_order_relaxed) : 0);
  ends_[i].store(reads.end, std::memory_order_relaxed);
  starts_[i].store(reads.start, std::memory_order_relaxed);
}

void ProbeSlot::set_served(std::int64_t ns) { served_.store(ns, std::memory_order_release); }

std::int64_t ProbeSlot::collect(Timeline& t) const {
  const std::int64_t served = served_.load(std::memory_order_acquire);
  for (std::size_t p = kRequestReceived; p <= kMarshalled; ++p) {
    t.end[p] = ends_[p - kRequestReceived].load(std::memory_order_relaxed);
    t.start[p] = starts_[p - kRequestReceived].load(std::memory_order_relaxed);
  }
  return served;
}

ConnectionProbe::ConnectionProbe(std::uint16_t client_port, std::uint16_t server_port)
    : client_port_(client_port), server_port_(server_port) {
  if (probes_enabled()) slot_ = board().attach(client_port, server_port);
}

ConnectionProbe ConnectionProbe::for_socket(int fd) {
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof local, peer_len = sizeof peer;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) local = {};
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) peer = {};
  return ConnectionProbe(port_of(peer), port_of(local));
}

ConnectionProbe::ConnectionProbe(ConnectionProbe&& other) noexcept
    : slot_(std::move(other.slot_)),
      client_port_(other.client_port_),
      server_port_(other.server_port_),
      next_start_ns_(other.next_start_ns_),
      start_ns_(other.start_ns_) {}

ConnectionProbe::~ConnectionProbe() {
  if (!slot_) return;
  if (detail::current_slot == slot_.get()) detail::current_slot = nullptr;
  board().detach(client_port_, server_port_, slot_.get());
}

void ConnectionProbe::serving_starts() {
  if (slot_) next_start_ns_ = now_ns();
}

void ConnectionProbe::request_read(std::int64_t received_ns) {
  if (!slot_) return;
  // A request without a serving_starts() of its own gets no served time.
  start_ns_ = std::exchange(next_start_ns_, 0);
  slot_->begin_request(received_ns);
  detail::current_slot = slot_.get();
}

void ConnectionProbe::reply_handed() {
  if (slot_ && start_ns_ != 0) slot_->set_served(now_ns() - start_ns_);
}

std::optional<std::int64_t> ServerPointsReader::collect(Timeline& t) {
  if (!slot_) slot_ = board().find(client_port_, server_port_);
  if (!slot_) return std::nullopt;
  return slot_->collect(t);
}

bool in_order(const Timeline& t) {
  std::int64_t last = 0;
  for (std::size_t p = 0; p < kPointCount; ++p) {
    for (const std::int64_t read : {t.end[p], t.start[p]}) {
      if (read == 0) continue;
      if (read < last) return false;
      last = read;
    }
  }
  return true;
}

namespace {

// The phases from `first`'s start read to `last`'s end read (phases_of).
std::vector<Phase> phases_between(const Timeline& t, std::size_t first, std::size_t last) {
  std::vector<Phase> phases;
  std::optional<std::size_t> open;  // the point whose start the current phase runs from
  if (t.start[first] != 0) open = first;
  std::string name;
  for (std::size_t p = first + 1; p <= last; ++p) {
    name += (name.empty() ? "" : "+") + std::string(kPhaseNames[p]);
    if (!t.marked(p)) continue;  // not exposed: merged
    // An end before the phase's start: merged across (an in-process
    // server's clock is the client's; a remote one's is not).
    if (open && t.end[p] != 0 && t.end[p] < t.start[*open]) continue;
    if (open && t.end[p] != 0) phases.push_back({name, t.end[p] - t.start[*open]});
    name.clear();
    open = t.start[p] != 0 ? std::optional<std::size_t>(p) : std::nullopt;
  }
  return phases;
}

}  // namespace

std::vector<Phase> phases_of(const Timeline& t) {
  if (t.start[kInvoke] == 0 || t.end[kDecoded] == 0) return {};
  return phases_between(t, kInvoke, kDecoded);
}

std::vector<Phase> phases_of(const Timeline& client, const ServerDurations& server) {
  Timeline t{};
  for (const Mark m : {kInvoke, kRequestWritten, kResponseReceived, kDecoded}) {
    t.end[m] = client.end[m];
    t.start[m] = client.start[m];
  }
  std::vector<Phase> phases;
  for (Phase& p : phases_of(t)) {
    // The wait for the reply, from which the server's own phases are cut.
    constexpr std::string_view kWait =
        "request_transfer+server_parse+service+server_marshal+response_transfer";
    if (p.name.size() >= kWait.size() && p.name.ends_with(kWait) && server.total() <= p.ns) {
      const std::string prefix = p.name.substr(0, p.name.size() - kWait.size());
      phases.push_back({prefix + "request_transfer+response_transfer", p.ns - server.total()});
      phases.push_back({"server_parse", server.parse_ns});
      phases.push_back({"service", server.service_ns});
      phases.push_back({"server_marshal", server.marshal_ns});
    } else {
      phases.push_back(std::move(p));
    }
  }
  return phases;
}

namespace {

PhaseCheck compare(std::int64_t measured_ns, const std::vector<Phase>& phases) {
  std::int64_t sum = 0;
  for (const Phase& p : phases) sum += p.ns;
  const std::int64_t gap = measured_ns - sum;
  const double tolerance = std::max(static_cast<double>(kGapToleranceNs),
                                    kGapToleranceShare * static_cast<double>(measured_ns));
  return PhaseCheck{measured_ns, gap, std::abs(static_cast<double>(gap)) <= tolerance};
}

}  // namespace

std::optional<PhaseCheck> check_round_trip(const std::vector<Phase>& phases,
                                           std::int64_t elapsed_ns) {
  if (phases.empty() || elapsed_ns <= 0) return std::nullopt;
  return compare(elapsed_ns, phases);
}

std::optional<PhaseCheck> check_server(const Timeline& t, std::int64_t served_ns) {
  if (t.start[kRequestReceived] == 0 || t.end[kMarshalled] == 0 || served_ns <= 0)
    return std::nullopt;
  return compare(served_ns, phases_between(t, kRequestReceived, kMarshalled));
}

namespace {

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

void append_duration(std::string& out, const char* name, std::int64_t ns) {
  char buf[32];
  if (!out.empty()) out += ", ";
  out += name;
  out += ";dur=";
  out.append(buf, std::to_chars(buf, buf + sizeof buf, static_cast<double>(ns) * 1e-6,
                                std::chars_format::fixed, 4)
                      .ptr);
}

}  // namespace

std::string format_server_timing(const ServerDurations& d) {
  std::string out;
  append_duration(out, "parse", d.parse_ns);
  append_duration(out, "service", d.service_ns);
  append_duration(out, "marshal", d.marshal_ns);
  return out;
}

std::optional<ServerDurations> parse_server_timing(std::string_view header) {
  std::array<std::optional<std::int64_t>, 3> found;  // parse, service, marshal
  constexpr std::array<std::string_view, 3> kNames = {"parse", "service", "marshal"};
  while (!header.empty()) {
    const std::size_t comma = std::min(header.find(','), header.size());
    std::string_view metric = trim_spaces(header.substr(0, comma));
    header.remove_prefix(std::min(comma + 1, header.size()));
    const std::size_t semi = std::min(metric.find(';'), metric.size());
    const auto name = std::find(kNames.begin(), kNames.end(), trim_spaces(metric.substr(0, semi)));
    if (name == kNames.end()) continue;
    auto& slot = found[static_cast<std::size_t>(name - kNames.begin())];
    if (slot) return std::nullopt;  // repeated
    std::string_view params = metric.substr(semi);
    while (!params.empty() && !slot) {
      params.remove_prefix(1);  // the ';'
      const std::size_t next = std::min(params.find(';'), params.size());
      const std::string_view param = trim_spaces(params.substr(0, next));
      params.remove_prefix(next);
      if (param.substr(0, 4) != "dur=") continue;
      double ms = -1;
      const char* end = param.data() + param.size();
      const auto [ptr, ec] = std::from_chars(param.data() + 4, end, ms);
      if (ec != std::errc{} || ptr != end || !std::isfinite(ms) || ms < 0) return std::nullopt;
      slot = std::llround(ms * 1e6);
    }
    if (!slot) return std::nullopt;  // no duration
  }
  if (!found[0] || !found[1] || !found[2]) return std::nullopt;
  return ServerDurations{*found[0], *found[1], *found[2]};
}

void ServerTimingRecorder::begin(std::int64_t received_ns) {
  if (detail::current_slot != nullptr) {
    slot_ = detail::current_slot;  // the probe's, begun by its request_read
  } else {
    own_.begin_request(received_ns);
    slot_ = &own_;
    detail::current_slot = slot_;
  }
}

std::string ServerTimingRecorder::value() const {
  if (slot_ == nullptr) return "";
  Timeline t{};
  slot_->collect(t);
  if (t.start[kRequestReceived] == 0 || t.end[kParsed] == 0 || t.start[kParsed] == 0 ||
      t.end[kServiced] == 0 || t.start[kServiced] == 0)
    return "";
  return format_server_timing({t.end[kParsed] - t.start[kRequestReceived],
                               t.end[kServiced] - t.start[kParsed], now_ns() - t.start[kServiced]});
}

void ServerTimingRecorder::end() {
  if (slot_ == &own_ && detail::current_slot == &own_) detail::current_slot = nullptr;
  slot_ = nullptr;
}

}  // namespace wsb
