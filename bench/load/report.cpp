#include "load/report.h"

#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/prettywriter.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>

namespace wsb::load {
namespace {

constexpr double kNsPerMs = 1e6;

double ms(double ns) { return ns / kNsPerMs; }

std::string errors_text(const Tally& t) {
  std::string text;
  for (std::size_t k = 0; k < kErrorKinds; ++k) {
    if (t.errors[k] == 0) continue;
    text += (text.empty() ? "" : " ") + std::string(error_kind_name(static_cast<ErrorKind>(k))) +
            "=" + std::to_string(t.errors[k]);
  }
  return text.empty() ? "0" : text;
}

// CPU milliseconds the server spent per call made (failed ones included:
// a late reply was still the server's work).
// A server shared by two targets: over both's calls.
double cpu_ms_per_request(const RunRecord& r) {
  const std::uint64_t calls =
      r.server_calls > 0 ? r.server_calls : r.run.tally.ok + r.run.tally.failed();
  if (!r.server || calls == 0) return kNotReported;
  return r.server->cpu_s * 1e3 / static_cast<double>(calls);
}

// min and max of an empty histogram are not 0: not reported.
double min_ms(const Histogram& h) {
  return h.count() == 0 ? kNotReported : ms(static_cast<double>(h.min()));
}
double max_ms(const Histogram& h) {
  return h.count() == 0 ? kNotReported : ms(static_cast<double>(h.max()));
}

}  // namespace

// A figure in a fixed-width column; "-" where it is not reported.
std::string cell(double value, int width, int decimals) {
  char text[64];
  if (std::isfinite(value))
    std::snprintf(text, sizeof text, "%*.*f", width, decimals, value);
  else
    std::snprintf(text, sizeof text, "%*s", width, "-");
  return text;
}

void print_runs(std::FILE* out, const std::vector<RunRecord>& records) {
  std::fprintf(out, "%-36s %-8s %7s %3s %9s %6s %8s %8s %8s %8s %8s %5s %7s  %-10s %8s %9s %9s\n",
               "target", "mode", "shape", "rep", "req/s", "n", "p50 ms", "p90 ms", "p99 ms",
               "p99.9", "max ms", "conn", "conn ms", "errors", "drv cpu", "srv cpu", "rss MB");
  for (const auto& r : records) {
    const auto& t = r.run.tally;
    const auto& h = t.latency;
    std::fprintf(out, "%-36s %-8s %7s %3d %9.0f %6llu %s %s %s %s %s %5llu %s  %-10s %s",
                 r.run.label.c_str(), r.mode.c_str(), r.shape.c_str(), r.repetition,
                 r.run.throughput(), static_cast<unsigned long long>(h.count()),
                 cell(ms(h.percentile(50)), 8, 3).c_str(), cell(ms(h.percentile(90)), 8, 3).c_str(),
                 cell(ms(h.percentile(99)), 8, 3).c_str(),
                 cell(ms(h.percentile(99.9)), 8, 3).c_str(), cell(max_ms(h), 8, 3).c_str(),
                 static_cast<unsigned long long>(t.connects),
                 cell(ms(t.connect_latency.mean()), 7, 3).c_str(), errors_text(t).c_str(),
                 cell(r.driver_cpu_ms_per_call, 8, 4).c_str());
    if (r.server)
      std::fprintf(out, " %s ms %4.1f/%4.1f\n", cell(cpu_ms_per_request(r), 6, 3).c_str(),
                   static_cast<double>(r.server->steady_rss_kb) / 1024,
                   static_cast<double>(r.server->peak_rss_kb) / 1024);
    else
      std::fprintf(out, " %9s %9s\n", "-", "-");
    for (std::size_t k = 0; k < kErrorKinds; ++k)
      if (!t.first_error[k].empty())
        std::fprintf(out, "    first %s: %s\n", error_kind_name(static_cast<ErrorKind>(k)),
                     t.first_error[k].c_str());
  }
  std::fprintf(out,
               "(rep: the repetition, each against servers of its own; latency: from the "
               "request's first byte written to the reply's last byte read (docs/load.md); "
               "percentiles: nearest rank over n successful calls, - where n is too small; conn, "
               "conn ms: connections opened and their mean connect time, apart from the calls; "
               "drv cpu, srv cpu: driver's and server's user+system ms per call made; rss: server "
               "steady/peak MB)\n");
}

void print_e7(std::FILE* out, const std::vector<RunRecord>& records) {
  // The paper's columns: each protocol alone, then each during the
  // simultaneous run, then gRPC alone (ours); one row per clients x calls shape; a cell's
  // repetitions together.
  std::vector<std::string> shapes;
  std::map<std::pair<std::string, std::string>, std::vector<const RunRecord*>> cells;
  std::uint64_t n_min = ~std::uint64_t{0}, n_max = 0;
  int repetitions = 0;
  std::string operation;  // "primes:100000"
  for (const auto& r : records) {
    if (r.experiment != "E7") continue;
    operation = r.run.label.substr(r.run.label.find(' ') + 1);
    if (std::find(shapes.begin(), shapes.end(), r.shape) == shapes.end()) shapes.push_back(r.shape);
    const bool rest = r.run.label.starts_with("beast/json");
    const bool simultaneous = r.column.find('+') != std::string::npos;
    // SOAP on Beast's server (and REST beside it there): the concurrency
    // model matched, marked "B".
    const bool matched =
        r.run.label.starts_with("beast/soap") || r.column.find("Beast") != std::string::npos;
    // gRPC, beyond the paper, runs alone in a column of its own.
    const std::string column = r.run.label.starts_with("grpc/")
                                   ? "gRPC"
                                   : std::string(rest ? "REST" : "SOAP") +
                                         (simultaneous ? (rest ? " w/ SOAP" : " w/ REST") : "") +
                                         (matched ? " B" : "");
    cells[{r.shape, column}].push_back(&r);
    n_min = std::min(n_min, r.run.tally.latency.count());
    n_max = std::max(n_max, r.run.tally.latency.count());
    repetitions = std::max(repetitions, r.repetitions);
  }
  if (shapes.empty()) return;
  const std::vector<std::string> columns = {"REST",           "SOAP",   "REST w/ SOAP",
                                            "SOAP w/ REST",   "SOAP B", "REST w/ SOAP B",
                                            "SOAP w/ REST B", "gRPC"};
  using Runs = std::vector<const RunRecord*>;
  // A figure over a cell's repetitions, as text.
  using Figure = std::function<std::string(const Runs&)>;
  constexpr int kWidth = 17;
  enum class Over { mean, min, max, sum };
  const auto over = [](const Runs& runs, const std::function<double(const RunRecord&)>& of,
                       Over how) {
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    for (const auto* r : runs) {
      const double v = of(*r);
      sum += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    switch (how) {
      case Over::mean:
        return sum / static_cast<double>(runs.size());
      case Over::min:
        return lo;
      case Over::max:
        return hi;
      case Over::sum:
        break;
    }
    return sum;
  };
  const auto figure = [&](std::function<double(const RunRecord&)> of, Over how,
                          int decimals = 2) -> Figure {
    return [=](const Runs& runs) { return cell(over(runs, of, how), kWidth, decimals); };
  };
  const auto mean_ms = [](const RunRecord& r) { return ms(r.run.tally.latency.mean()); };
  const std::vector<std::pair<std::string, Figure>> tables = {
      {"average (ms)", figure(mean_ms, Over::mean)},
      {"lowest-highest repetition",
       [&](const Runs& runs) {
         const std::string range = cell(over(runs, mean_ms, Over::min), 0, 2) + "-" +
                                   cell(over(runs, mean_ms, Over::max), 0, 2);
         return std::string(
                    static_cast<std::size_t>(std::max(0, kWidth - static_cast<int>(range.size()))),
                    ' ') +
                range;
       }},
      {"min (ms)",
       figure([](const RunRecord& r) { return min_ms(r.run.tally.latency); }, Over::min)},
      {"max (ms)",
       figure([](const RunRecord& r) { return max_ms(r.run.tally.latency); }, Over::max)},
      {"standard deviation (ms)",
       figure([](const RunRecord& r) { return ms(r.run.tally.latency.stddev()); }, Over::mean)},
      {"server CPU per call (ms)", figure(cpu_ms_per_request, Over::mean, 3)},
      {"failed calls",
       figure([](const RunRecord& r) { return static_cast<double>(r.run.tally.failed()); },
              Over::sum, 0)},
  };
  const std::string n =
      n_min == n_max ? std::to_string(n_min) : std::to_string(n_min) + "-" + std::to_string(n_max);
  std::fprintf(out,
               "\nE7: %s, shape = threads x requests per thread; n = %s successful calls per "
               "repetition, %d repetitions per cell, each against servers of its own; average: "
               "the mean of the repetitions' means; standard deviation: within a repetition "
               "(the paper's), the mean over repetitions; min, max: over all; B: on Beast's "
               "server, every encoding on the same I/O thread (the other SOAP columns: gSOAP's "
               "thread per connection)\n",
               operation.c_str(), n.c_str(), repetitions);
  for (const auto& [title, show] : tables) {
    std::fprintf(out, "\n%-28s", title.c_str());
    for (const auto& column : columns) std::fprintf(out, " %*s", kWidth, column.c_str());
    std::fprintf(out, "\n");
    for (const auto& shape : shapes) {
      std::fprintf(out, "%-28s", shape.c_str());
      for (const auto& column : columns) {
        const auto it = cells.find({shape, column});
        std::fprintf(
            out, " %s",
            it == cells.end() ? cell(kNotReported, kWidth, 0).c_str() : show(it->second).c_str());
      }
      std::fprintf(out, "\n");
    }
  }
}

std::string write_json(const std::filesystem::path& file, const ContextPairs& context,
                       const std::vector<RunRecord>& records, const RunAftermath& aftermath) {
  {
    std::ofstream stream(file);
    if (!stream) return "cannot write " + file.string();
    rapidjson::OStreamWrapper wrapper(stream);
    rapidjson::PrettyWriter<rapidjson::OStreamWrapper> w(wrapper);
    auto number = [&w](const char* key, double value) {
      w.Key(key);
      if (std::isfinite(value))
        w.Double(value);
      else
        w.Null();  // not reported: too few samples
    };
    w.StartObject();
    w.Key("context");
    w.StartObject();
    for (const auto& [key, value] : context) {
      w.Key(key.c_str());
      w.String(value.c_str());
    }
    w.EndObject();
    w.Key("runs");
    w.StartArray();
    for (const auto& r : records) {
      const auto& t = r.run.tally;
      const auto& h = t.latency;
      w.StartObject();
      w.Key("experiment");
      w.String(r.experiment.c_str());
      w.Key("target");
      w.String(r.run.label.c_str());
      w.Key("mode");
      w.String(r.mode.c_str());
      w.Key("shape");
      w.String(r.shape.c_str());
      w.Key("column");
      w.String(r.column.c_str());
      w.Key("repetition");
      w.Int(r.repetition);
      w.Key("repetitions");
      w.Int(r.repetitions);
      w.Key("clients");
      w.Int(r.run.clients);
      w.Key("requests_per_client");
      w.Uint64(r.requests_per_client);
      number("rate_per_s", r.rate);
      number("elapsed_s", r.run.elapsed_s);
      number("throughput_per_s", r.run.throughput());
      w.Key("n");
      w.Uint64(h.count());
      w.Key("overran");
      w.Bool(r.run.overran);
      // The span each call is timed over (CallSpan): its first and last point.
      w.Key("timed_span");
      if (*t.timed_from != '\0')
        w.String((std::string(t.timed_from) + ".." + t.timed_to).c_str());
      else
        w.Null();  // no call succeeded
      w.Key("connects");
      w.Uint64(t.connects);
      w.Key("connect_ms");
      w.StartObject();
      number("mean", ms(t.connect_latency.mean()));
      number("p50", ms(t.connect_latency.percentile(50)));
      number("max", max_ms(t.connect_latency));
      w.EndObject();
      w.Key("connects_in_first_call");
      w.Bool(r.run.connects_in_first_call);
      w.Key("latency_ms");
      w.StartObject();
      number("mean", ms(h.mean()));
      number("stddev", ms(h.stddev()));
      number("min", min_ms(h));
      number("max", max_ms(h));
      for (const double p : {50.0, 90.0, 99.0, 99.9}) {
        const std::string key = "p" + std::string(p == 99.9 ? "99.9" : std::to_string(int(p)));
        number(key.c_str(), ms(h.percentile(p)));
      }
      w.EndObject();
      w.Key("errors");
      w.StartObject();
      for (std::size_t k = 0; k < kErrorKinds; ++k) {
        w.Key(error_kind_name(static_cast<ErrorKind>(k)));
        w.Uint64(t.errors[k]);
      }
      w.EndObject();
      w.Key("first_errors");
      w.StartObject();
      for (std::size_t k = 0; k < kErrorKinds; ++k) {
        if (t.first_error[k].empty()) continue;
        w.Key(error_kind_name(static_cast<ErrorKind>(k)));
        w.String(t.first_error[k].c_str());
      }
      w.EndObject();
      for (auto [key, series] : {std::pair{"ok_per_second", &t.ok_per_second},
                                 std::pair{"failed_per_second", &t.failed_per_second}}) {
        w.Key(key);
        w.StartArray();
        for (auto v : *series) w.Uint64(v);
        w.EndArray();
      }
      number("series_interval_s", r.series_interval_s);
      if (r.max_users >= 0) {
        w.Key("size");
        w.String(("x" + std::to_string(r.size_multiple)).c_str());
        w.Key("max_users");
        w.Int(r.max_users);
        w.Key("max_users_at_bound");
        w.Bool(r.max_users_at_bound);
        w.Key("search_end");
        w.String(r.search_end.c_str());
        w.Key("steps");
        w.StartArray();
        for (const auto& step : r.steps) {
          w.StartObject();
          w.Key("users");
          w.Int(step.users);
          number("from_s", step.from_s);
          number("to_s", step.to_s);
          w.Key("ok");
          w.Uint64(step.ok);
          w.Key("failed");
          w.Uint64(step.failed);
          number("cpu_percent", step.cpu_percent);
          number("rss_mb", step.rss_mb);
          number("driver_cpu_percent", step.driver_cpu_percent);
          w.EndObject();
        }
        w.EndArray();
      }
      w.Key("placement");
      w.String(r.placement.c_str());
      number("driver_cpu_ms_per_call", r.driver_cpu_ms_per_call);
      w.Key("server_pid");
      if (r.server_pid)
        w.Int(*r.server_pid);
      else
        w.Null();
      if (r.server) {
        w.Key("server");
        w.StartObject();
        number("cpu_s", r.server->cpu_s);
        number("wall_s", r.server->wall_s);
        number("cpu_ms_per_request", cpu_ms_per_request(r));
        // A server shared with another target: the calls its CPU is over.
        w.Key("calls");
        w.Uint64(r.server_calls > 0 ? r.server_calls : r.run.tally.ok + r.run.tally.failed());
        number("cpu_percent", r.server->wall_s > 0 ? 100 * r.server->cpu_s / r.server->wall_s : 0);
        w.Key("rss_peak_kb");
        w.Uint64(r.server->peak_rss_kb);
        w.Key("rss_steady_kb");
        w.Uint64(r.server->steady_rss_kb);
        w.Key("samples");
        w.Uint64(r.server->samples);
        w.EndObject();
        // Every 100 ms: seconds since sampling began, CPU seconds so far,
        // resident KB.
        w.Key("server_samples");
        w.StartArray();
        for (const auto& sample : r.server_samples) {
          w.StartArray();
          w.Double(sample.t_s);
          w.Double(sample.usage.cpu_s);
          w.Uint64(sample.usage.rss_kb);
          w.EndArray();
        }
        w.EndArray();
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    stream << "\n";
    if (!stream) return "cannot write " + file.string();
  }
  return patch_context(file, aftermath);
}

}  // namespace wsb::load
