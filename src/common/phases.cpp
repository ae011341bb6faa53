#include "common/phases.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>

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

void ProbeSlot::begin_request(std::int64_t received_ns) {
  served_.store(0, std::memory_order_relaxed);
  points_[0].store(received_ns, std::memory_order_relaxed);
  for (std::size_t i = 1; i < points_.size(); ++i) points_[i].store(0, std::memory_order_relaxed);
}

void ProbeSlot::mark(Mark point, std::int64_t ns) {
  points_[point - kRequestReceived].store(ns, std::memory_order_relaxed);
}

void ProbeSlot::set_served(std::int64_t ns) { served_.store(ns, std::memory_order_release); }

std::int64_t ProbeSlot::collect(Timeline& t) const {
  const std::int64_t served = served_.load(std::memory_order_acquire);
  for (std::size_t p = kRequestReceived; p <= kMarshalled; ++p)
    t[p] = points_[p - kRequestReceived].load(std::memory_order_relaxed);
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
      read_ns_(other.read_ns_) {}

ConnectionProbe::~ConnectionProbe() {
  if (!slot_) return;
  if (detail::current_slot == slot_.get()) detail::current_slot = nullptr;
  board().detach(client_port_, server_port_, slot_.get());
}

void ConnectionProbe::request_read(std::int64_t received_ns) {
  if (!slot_) return;
  read_ns_ = received_ns;
  slot_->begin_request(received_ns);
  detail::current_slot = slot_.get();
}

void ConnectionProbe::reply_handed() {
  if (slot_ && read_ns_ != 0) slot_->set_served(now_ns() - read_ns_);
}

std::optional<std::int64_t> ServerPointsReader::collect(Timeline& t) {
  if (!slot_) slot_ = board().find(client_port_, server_port_);
  if (!slot_) return std::nullopt;
  return slot_->collect(t);
}

bool in_order(const Timeline& t) {
  std::int64_t last = 0;
  for (const std::int64_t point : t) {
    if (point == 0) continue;
    if (point < last) return false;
    last = point;
  }
  return true;
}

std::vector<Phase> phases_of(const Timeline& t) {
  std::vector<Phase> phases;
  if (t[kInvoke] == 0 || t[kDecoded] == 0) return phases;
  std::size_t from = kInvoke;
  std::string name;
  for (std::size_t p = kInvoke + 1; p < kPointCount; ++p) {
    name += (name.empty() ? "" : "+") + std::string(kPhaseNames[p]);
    // A point is usable if present and not before the last one used (an
    // in-process server's clock is the client's; a remote one's is not).
    if (t[p] == 0 || t[p] < t[from]) continue;
    phases.push_back({name, t[p] - t[from]});
    name.clear();
    from = p;
  }
  return phases;
}

std::vector<Phase> phases_of(const Timeline& client, const ServerDurations& server) {
  Timeline t{};
  for (const Mark m : {kInvoke, kRequestWritten, kResponseReceived, kDecoded}) t[m] = client[m];
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

PhaseCheck compare(std::int64_t measured_ns, std::int64_t sum_ns) {
  const std::int64_t unexplained = measured_ns - sum_ns;
  const double tolerance = std::max(static_cast<double>(kUnexplainedToleranceNs),
                                    kUnexplainedToleranceShare * static_cast<double>(measured_ns));
  return PhaseCheck{unexplained, static_cast<double>(sum_ns) / static_cast<double>(measured_ns),
                    std::abs(static_cast<double>(unexplained)) <= tolerance};
}

}  // namespace

std::optional<PhaseCheck> check_round_trip(const std::vector<Phase>& phases,
                                           std::int64_t elapsed_ns) {
  if (phases.empty() || elapsed_ns <= 0) return std::nullopt;
  std::int64_t sum = 0;
  for (const Phase& p : phases) sum += p.ns;
  return compare(elapsed_ns, sum);
}

std::optional<PhaseCheck> check_server(const Timeline& t, std::int64_t served_ns) {
  if (t[kRequestReceived] == 0 || t[kMarshalled] == 0 || served_ns <= 0) return std::nullopt;
  // The server's phases as phases_of takes them: consecutive usable points.
  std::int64_t sum = 0;
  std::size_t from = kRequestReceived;
  for (std::size_t p = kParsed; p <= kMarshalled; ++p) {
    if (t[p] == 0 || t[p] < t[from]) continue;
    sum += t[p] - t[from];
    from = p;
  }
  return compare(served_ns, sum);
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
  if (t[kRequestReceived] == 0 || t[kParsed] == 0 || t[kServiced] == 0) return "";
  return format_server_timing(
      {t[kParsed] - t[kRequestReceived], t[kServiced] - t[kParsed], now_ns() - t[kServiced]});
}

void ServerTimingRecorder::end() {
  if (slot_ == &own_ && detail::current_slot == &own_) detail::current_slot = nullptr;
  slot_ = nullptr;
}

}  // namespace wsb
