#include "load/e8.h"

#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>

#include "load/report.h"

namespace wsb::load {
namespace {

using std::chrono::milliseconds;

// The series E8's steps are summed from: fine enough for 0.25 s steps.
constexpr milliseconds kSeriesInterval{50};
// The user counts the table reports, as the paper's ramp passes them.
constexpr int kReportedUsers[] = {1, 5, 10, 15, 21};

double seconds(milliseconds ms) { return static_cast<double>(ms.count()) / 1000; }

// The server's CPU seconds at time t (samples' clock), between samples
// linearly; nullopt outside the sampled span.
std::optional<double> cpu_at(const std::vector<UsageSampler::Sample>& samples, double t) {
  if (samples.size() < 2 || t < samples.front().t_s || t > samples.back().t_s) return std::nullopt;
  const auto after = std::lower_bound(samples.begin(), samples.end(), t,
                                      [](const auto& s, double v) { return s.t_s < v; });
  if (after == samples.begin()) return after->usage.cpu_s;
  const auto before = after - 1;
  const double span = after->t_s - before->t_s;
  const double w = span > 0 ? (t - before->t_s) / span : 1;
  return before->usage.cpu_s + w * (after->usage.cpu_s - before->usage.cpu_s);
}

// The largest RSS sampled in [from, to], or the sample nearest to `to`
// when none falls inside (a step shorter than the sampling period).
double rss_mb_in(const std::vector<UsageSampler::Sample>& samples, double from, double to) {
  std::uint64_t kb = 0;
  const UsageSampler::Sample* nearest = nullptr;
  for (const auto& s : samples) {
    if (s.t_s >= from && s.t_s <= to) kb = std::max(kb, s.usage.rss_kb);
    if (!nearest || std::abs(s.t_s - to) < std::abs(nearest->t_s - to)) nearest = &s;
  }
  if (kb == 0 && nearest) kb = nearest->usage.rss_kb;
  return kb == 0 ? kNotReported : static_cast<double>(kb) / 1024;
}

std::uint64_t sum_between(const std::vector<std::uint64_t>& series, double from, double to) {
  std::uint64_t n = 0;
  const double width = seconds(kSeriesInterval);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double t = static_cast<double>(i) * width;
    if (t >= from - 1e-9 && t < to - 1e-9) n += series[i];
  }
  return n;
}

const UserStep* step_with(const RunRecord& r, int users) {
  for (const auto& s : r.steps)
    if (s.users == users) return &s;
  return nullptr;
}

std::string protocol_of(const RunRecord& r) { return r.run.label.substr(0, r.run.label.find(' ')); }

// Above this share of its vCPUs the driver, not the server, may be why a
// call came late.
constexpr double kDriverSaturatedPercent = 90;

long read_long(const char* path) {
  std::ifstream in(path);
  long v = -1;
  in >> v;
  return in ? v : -1;
}

int open_fds() {
  int n = 0;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (::readdir(dir) != nullptr) ++n;
    ::closedir(dir);
  }
  return n;
}

// The system's tasks now (/proc/loadavg's "running/total").
long system_tasks() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c, tasks;
  in >> a >> b >> c >> tasks;
  const auto slash = tasks.find('/');
  return slash == std::string::npos ? -1 : std::atol(tasks.c_str() + slash + 1);
}

std::string error_kinds(const Tally& tally) {
  std::string kinds;
  for (std::size_t k = 0; k < kErrorKinds; ++k)
    if (tally.errors[k] > 0)
      kinds +=
          (kinds.empty() ? "" : ", ") + std::string(error_kind_name(static_cast<ErrorKind>(k)));
  return kinds;
}

// Why the search ended, from the record's steps (filled) and run.
std::string search_end(const RunRecord& record, const E8Plan& plan, int failed_users) {
  const auto at = [](int users) { return " at " + std::to_string(users) + " users"; };
  const auto& tally = record.run.tally;
  // The driver out of descriptors fails its own connects: not the server.
  for (const auto& message : tally.first_error)
    if (tally.first_failure_sent && message.find("Too many open files") != std::string::npos)
      return "load side's limit: the driver's file descriptors (too many open files)" +
             at(failed_users);
  if (tally.first_failure_sent) {
    const auto* s = step_with(record, failed_users);
    const double busy = s ? s->driver_cpu_percent / record.driver_cpus : kNotReported;
    // A timeout while the driver's vCPU was saturated may be the driver's
    // own lateness in reading the reply.
    if (std::isfinite(busy) && busy >= kDriverSaturatedPercent &&
        tally.errors[static_cast<std::size_t>(ErrorKind::timeout)] > 0) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "load side's limit: the driver's CPU (%.0f%% of its vCPUs) at %d users, "
                    "where a call failed (%s)",
                    busy, failed_users, error_kinds(tally).c_str());
      return text;
    }
    return "server's limit: a call failed" + at(failed_users) + " (" + error_kinds(tally) + ")";
  }
  const int last = record.steps.empty() ? 0 : record.steps.back().users;
  if (record.run.overran) return "overran" + at(last) + ": calls stuck past the timeout";
  if (record.steps.size() == plan.steps().size()) return plan.bound + at(last);
  return "the run's time bound (--max-time)" + at(last);
}

}  // namespace

LoadSideLimit load_side_limit() {
  LoadSideLimit limit;
  const auto tighter = [&limit](long users, std::string which) {
    if (users >= 0 && users < limit.users) {
      limit.users = static_cast<int>(users);
      limit.which = std::move(which);
    }
  };
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    if (files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &files);
      ::getrlimit(RLIMIT_NOFILE, &files);
    }
    // Four a user: Beast's client keeps an epoll, an eventfd and a timerfd
    // beside its socket (at 2 a user it ran out at 8,192 users of 20,000).
    constexpr long kFdsPerUser = 4, kSpare = 64;
    if (files.rlim_cur != RLIM_INFINITY)
      tighter((static_cast<long>(files.rlim_cur) - open_fds() - kSpare) / kFdsPerUser,
              "file descriptors (soft limit " + std::to_string(files.rlim_cur) + ", 4 a user)");
  }
  // A driver thread and a server thread a user, beside the tasks running.
  long threads =
      std::min(read_long("/proc/sys/kernel/threads-max"), read_long("/proc/sys/kernel/pid_max"));
  rlimit processes{};
  if (::getrlimit(RLIMIT_NPROC, &processes) == 0 && processes.rlim_cur != RLIM_INFINITY)
    threads = std::min(threads, static_cast<long>(processes.rlim_cur));
  const long tasks = system_tasks();
  if (threads > 0 && tasks >= 0)
    tighter((threads - tasks - 256) / 2, "threads (" + std::to_string(threads) + " allowed, " +
                                             std::to_string(tasks) + " running, 2 a user)");
  return limit;
}

std::vector<UserStep> E8Plan::steps() const {
  std::vector<UserStep> out;
  for (int u = 1; u <= ramp_to; ++u) {
    UserStep s;
    s.users = u;
    s.from_s = seconds(ramp_every) * (u - 1);
    s.to_s = seconds(ramp_every) * u;
    out.push_back(s);
  }
  const double ramp_end = seconds(ramp_every) * ramp_to;
  for (std::size_t j = 0; j < search_users.size(); ++j) {
    UserStep s;
    s.users = search_users[j];
    s.from_s = ramp_end + seconds(search_hold) * static_cast<double>(j);
    s.to_s = ramp_end + seconds(search_hold) * static_cast<double>(j + 1);
    out.push_back(s);
  }
  return out;
}

milliseconds E8Plan::duration() const {
  return ramp_every * ramp_to + search_hold * static_cast<long>(search_users.size());
}

SearchSteps parse_search(const std::string& text, int ramp_to, const LoadSideLimit& limit) {
  if (text == "none") return {{}, "the ramp's end (no search)"};
  const auto bad = [&text] {
    return std::invalid_argument(
        "E8's --search takes FIRST:STEP:LAST (24:8:128, 24:x1.5:max) or none, not '" + text + "'");
  };
  const auto first_colon = text.find(':'), second_colon = text.find(':', first_colon + 1);
  if (second_colon == std::string::npos) throw bad();
  const std::string first_text = text.substr(0, first_colon),
                    step_text = text.substr(first_colon + 1, second_colon - first_colon - 1),
                    last_text = text.substr(second_colon + 1);
  const auto whole = [&bad](const std::string& t) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(t, &used);
    } catch (const std::exception&) {
      throw bad();
    }
    if (used != t.size() || v < 1) throw bad();
    return v;
  };
  const int first = whole(first_text);
  double factor = 0;
  int step = 0;
  if (step_text.starts_with("x")) {
    std::size_t used = 0;
    try {
      factor = std::stod(step_text.substr(1), &used);
    } catch (const std::exception&) {
      throw bad();
    }
    if (used + 1 != step_text.size() || !(factor > 1)) throw bad();
  } else {
    step = whole(step_text);
  }
  SearchSteps out;
  int last = limit.users;
  out.bound = "load side's limit: " + limit.which;
  if (last_text != "max") {
    const int cap = whole(last_text);
    if (cap < first) throw bad();
    if (cap <= limit.users) {
      last = cap;
      out.bound = "the search's cap (" + last_text + ")";
    }
  }
  if (first <= ramp_to)
    throw std::invalid_argument("E8's search starts above the ramp's " + std::to_string(ramp_to) +
                                " users, not at " + std::to_string(first));
  if (first > last)
    throw std::invalid_argument("E8's search starts at " + std::to_string(first) +
                                " users, beyond the " + out.bound);
  for (long u = first; u <= last;
       u = factor > 0 ? std::max(u + 1, std::lround(static_cast<double>(u) * factor)) : u + step)
    out.users.push_back(static_cast<int>(u));
  // The bound itself is a step: a search "at its bound" served that many.
  if (out.users.back() < last) out.users.push_back(last);
  return out;
}

LoadSpec e8_spec(const E8Plan& plan) {
  if (plan.ramp_to < 1 || plan.ramp_every.count() <= 0 ||
      (!plan.search_users.empty() && plan.search_hold.count() <= 0))
    throw std::invalid_argument("E8 needs at least one user and steps longer than 0 s");
  LoadSpec spec;
  const auto steps = plan.steps();
  spec.clients = steps.back().users;
  int started = 0;
  for (const auto& s : steps)
    for (; started < s.users; ++started)
      spec.client_starts.push_back(milliseconds(std::lround(s.from_s * 1000)));
  spec.duration = plan.duration();
  spec.stop_on_failure = true;
  spec.series_interval = kSeriesInterval;
  return spec;
}

void add_e8_steps(RunRecord& record, const E8Plan& plan) {
  const auto& tally = record.run.tally;
  const auto& samples = record.server_samples;
  const double offset = record.samples_offset_s;
  record.steps.clear();
  const auto planned = plan.steps();
  for (std::size_t i = 0; i < planned.size(); ++i) {
    auto s = planned[i];
    if (s.from_s >= record.run.elapsed_s) break;  // the run stopped before it
    // Calls still out at the end complete after it: the last step's.
    const bool last = i + 1 == planned.size() || planned[i + 1].from_s >= record.run.elapsed_s;
    const double counted_to = last ? std::numeric_limits<double>::infinity() : s.to_s;
    s.ok = sum_between(tally.ok_per_second, s.from_s, counted_to);
    s.failed = sum_between(tally.failed_per_second, s.from_s, counted_to);
    const auto a = cpu_at(samples, offset + s.from_s), b = cpu_at(samples, offset + s.to_s);
    if (a && b) s.cpu_percent = 100 * (*b - *a) / (s.to_s - s.from_s);
    s.rss_mb = rss_mb_in(samples, offset + s.from_s, offset + s.to_s);
    const double d = record.driver_samples_offset_s;
    const auto da = cpu_at(record.driver_samples, d + s.from_s),
               db = cpu_at(record.driver_samples, d + s.to_s);
    if (da && db) s.driver_cpu_percent = 100 * (*db - *da) / (s.to_s - s.from_s);
    record.steps.push_back(s);
  }
  // The earliest failed call's send time falls in some step: the step
  // before it is the most users served cleanly.
  // A run that overran with no failure recorded had calls stuck that it
  // could not time (clients or server starved of CPU): nothing is known
  // to have been served.
  record.max_users_at_bound = false;
  int failed_users = 0;  // the users of the step the first failed call was sent in
  if (tally.first_failure_sent || record.run.overran) {
    const double t = tally.first_failure_sent
                         ? std::chrono::duration<double>(*tally.first_failure_sent).count()
                         : 0;
    record.max_users = 0;
    for (const auto& s : record.steps) {
      if (s.to_s <= t) record.max_users = s.users;
      if (s.from_s <= t && failed_users == 0 && t < s.to_s) failed_users = s.users;
    }
    if (failed_users == 0 && !record.steps.empty()) failed_users = record.steps.back().users;
  } else {
    record.max_users = record.steps.empty() ? 0 : record.steps.back().users;
    record.max_users_at_bound = !record.steps.empty() && record.steps.size() == plan.steps().size();
  }
  record.search_end = search_end(record, plan, failed_users);
}

void print_e8(std::FILE* out, const std::vector<RunRecord>& records, const E8Plan& plan) {
  std::vector<const RunRecord*> e8;
  for (const auto& r : records)
    if (r.experiment == "E8") e8.push_back(&r);
  if (e8.empty()) return;
  const auto steps = plan.steps();
  std::fprintf(out,
               "\nE8: dictionary, %u%% define / %u%% put over %zu wamerican words; users join one "
               "every %.2f s to %d",
               plan.define_percent, 100 - plan.define_percent, kDictionarySampleWords,
               seconds(plan.ramp_every), plan.ramp_to);
  if (!plan.search_users.empty())
    std::fprintf(out, ", then %d to %d in %zu steps of %.2f s, until the first failed call or %s",
                 plan.search_users.front(), plan.search_users.back(), plan.search_users.size(),
                 seconds(plan.search_hold), plan.bound.c_str());
  std::fprintf(out,
               "\nCPU %%: the server's user+system CPU over the step's wall time (100 = one vCPU); "
               "RSS: its largest sample in the step (MB); max users: the most served with no "
               "failed, dropped or late call ('>=' at the search's bound)\n\n");
  std::fprintf(out, "%-18s %4s %3s %8s %6s |", "protocol", "size", "rep", "calls", "failed");
  for (const int u : kReportedUsers) std::fprintf(out, " cpu%%@%-3d", u);
  std::fprintf(out, " cpu%%@max |");
  for (const int u : kReportedUsers) std::fprintf(out, " rss@%-4d", u);
  std::fprintf(out, " rss@max | max users\n");
  for (const auto* r : e8) {
    std::fprintf(out, "%-18s %4s %3d %8llu %6llu |", protocol_of(*r).c_str(),
                 ("x" + std::to_string(r->size_multiple)).c_str(), r->repetition,
                 static_cast<unsigned long long>(r->run.tally.ok),
                 static_cast<unsigned long long>(r->run.tally.failed()));
    for (const int u : kReportedUsers) {
      const auto* s = step_with(*r, u);
      std::fprintf(out, " %s", cell(s ? s->cpu_percent : kNotReported, 8, 1).c_str());
    }
    const auto* at_max = step_with(*r, r->max_users);
    std::fprintf(out, " %s |", cell(at_max ? at_max->cpu_percent : kNotReported, 8, 1).c_str());
    for (const int u : kReportedUsers) {
      const auto* s = step_with(*r, u);
      std::fprintf(out, " %s", cell(s ? s->rss_mb : kNotReported, 8, 1).c_str());
    }
    std::fprintf(out, " %s | %s%d%s\n", cell(at_max ? at_max->rss_mb : kNotReported, 7, 1).c_str(),
                 r->max_users_at_bound ? ">=" : "", r->max_users,
                 r->run.overran ? " (overran: calls stuck past the timeout)" : "");
  }
  std::fprintf(out, "\nsearch ended (what stopped each run's users from growing):\n");
  for (const auto* r : e8)
    std::fprintf(out, "%-18s %4s %3d: %s\n", protocol_of(*r).c_str(),
                 ("x" + std::to_string(r->size_multiple)).c_str(), r->repetition,
                 r->search_end.c_str());
  // Over time: a row per user step, per size a column pair per protocol;
  // the first repetition's (the JSON has every one's).
  std::map<unsigned, std::vector<const RunRecord*>> by_size;
  for (const auto* r : e8)
    if (r->repetition == 0) by_size[r->size_multiple].push_back(r);
  for (const auto& [size, cells] : by_size) {
    std::fprintf(out,
                 "\nE8 x%u over time (repetition 0): calls/s, server CPU %% and RSS MB per user "
                 "step\n%5s %7s",
                 size, "users", "from s");
    for (const auto* r : cells) std::fprintf(out, " | %-24s", protocol_of(*r).c_str());
    std::fprintf(out, "\n");
    for (const auto& step : steps) {
      bool any = false;
      for (const auto* r : cells) any = any || step_with(*r, step.users);
      if (!any) break;
      std::fprintf(out, "%5d %7.2f", step.users, step.from_s);
      for (const auto* r : cells) {
        const auto* s = step_with(*r, step.users);
        const double rate = s ? static_cast<double>(s->ok) / (s->to_s - s->from_s) : kNotReported;
        std::fprintf(out, " | %s %s %s%s", cell(rate, 7, 0).c_str(),
                     cell(s ? s->cpu_percent : kNotReported, 6, 1).c_str(),
                     cell(s ? s->rss_mb : kNotReported, 6, 1).c_str(),
                     s && s->failed > 0 ? " F" : "  ");
      }
      std::fprintf(out, "\n");
    }
  }
  std::fprintf(out, "(F: the step had failed calls)\n");
}

}  // namespace wsb::load
