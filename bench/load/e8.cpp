#include "load/e8.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

}  // namespace

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

std::vector<int> parse_search_users(const std::string& text, int ramp_to) {
  if (text == "none") return {};
  int first = 0, step = 0, last = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%d:%d:%d%c", &first, &step, &last, &extra) != 3 || step < 1 ||
      last < first)
    throw std::invalid_argument("E8's --search takes FIRST:STEP:LAST (24:8:128) or none, not '" +
                                text + "'");
  if (first <= ramp_to)
    throw std::invalid_argument("E8's search starts above the ramp's " + std::to_string(ramp_to) +
                                " users, not at " + std::to_string(first));
  if (last > kMaxClients)
    throw std::invalid_argument("E8's search goes to at most " + std::to_string(kMaxClients) +
                                " users");
  std::vector<int> users;
  for (int u = first; u <= last; u += step) users.push_back(u);
  return users;
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
    record.steps.push_back(s);
  }
  // The earliest failed call's send time falls in some step: the step
  // before it is the most users served cleanly.
  // A run that overran with no failure recorded had calls stuck that it
  // could not time (clients or server starved of CPU): nothing is known
  // to have been served.
  record.max_users_at_bound = false;
  if (tally.first_failure_sent || record.run.overran) {
    const double t = tally.first_failure_sent
                         ? std::chrono::duration<double>(*tally.first_failure_sent).count()
                         : 0;
    record.max_users = 0;
    for (const auto& s : record.steps)
      if (s.to_s <= t) record.max_users = s.users;
  } else {
    record.max_users = record.steps.empty() ? 0 : record.steps.back().users;
    record.max_users_at_bound = !record.steps.empty() && record.steps.size() == plan.steps().size();
  }
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
    std::fprintf(out, ", then %d to %d in %zu steps of %.2f s, until the first failed call",
                 plan.search_users.front(), plan.search_users.back(), plan.search_users.size(),
                 seconds(plan.search_hold));
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
