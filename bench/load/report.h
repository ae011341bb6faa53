// The load driver's results: one record per target per run, printed as
// tables and written as JSON with the run's context (harness/environment).
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/environment.h"
#include "harness/stats.h"
#include "load/driver.h"
#include "load/server_process.h"

namespace wsb::load {

// One step of a ramp (E8): `users` clients from from_s to to_s of the run.
struct UserStep {
  int users = 0;
  double from_s = 0, to_s = 0;
  std::uint64_t ok = 0, failed = 0;   // calls completed in the step
  double cpu_percent = kNotReported;  // server CPU / wall time; 100 = one vCPU
  double rss_mb = kNotReported;       // the largest server RSS sampled in it
  // The driver process's CPU over the step's wall time (100 = one vCPU).
  double driver_cpu_percent = kNotReported;
};

struct RunRecord {
  std::string experiment;  // "E7", or "" for a plain run
  std::string mode;        // closed, open-poisson, open-constant, ramp, search, mixed
  std::string shape;       // "10x4": clients x calls per client, or "c=16 10s"
  std::string column;      // the experiment's column: "SOAP", "REST", "SOAP+REST", "gRPC"
  std::uint64_t requests_per_client = 0;
  double rate = 0;
  RunResult run;
  // Which repetition of its cell the run is (0-based), of how many; each
  // ran against servers of its own.
  int repetition = 0;
  int repetitions = 1;
  std::optional<ServerFigures> server;  // when the driver started the server
  std::optional<pid_t> server_pid;      // likewise
  // The server's samples, for CPU and RSS over time (a ramp's figures).
  std::vector<UsageSampler::Sample> server_samples;
  // Calls the sampled server answered in the run, when it served more
  // targets than this record's (a mixed run on one server): its CPU per
  // call is over all of them. 0: this record's own calls.
  std::uint64_t server_calls = 0;
  // The driver's own samples (E8: its CPU per step), on their own clock,
  // and the vCPUs it may use (1 when pinned).
  std::vector<UsageSampler::Sample> driver_samples;
  double driver_samples_offset_s = 0;
  int driver_cpus = 1;
  std::string placement;  // "driver cpu 0, server cpu 1"
  // The driver process's user+system CPU per call, over all its targets
  // (with --echo, the echo threads' too: they run in the driver).
  double driver_cpu_ms_per_call = 0;
  // The width of the run's ok/failed series (seconds).
  double series_interval_s = 1;
  // Where the run's clock starts on the samples' clock (seconds).
  double samples_offset_s = 0;
  // E8: the steps reached, and the most users served with no failed call
  // (-1: not an E8 run); at the bound when no step failed.
  unsigned size_multiple = 0;
  std::vector<UserStep> steps;
  int max_users = -1;
  bool max_users_at_bound = false;
  // What ended the search: "server's limit: a call failed at 180 users
  // (timeout)", "load side's limit: file descriptors (...) at 9958 users".
  std::string search_end;
};

// One line per record: throughput, latency percentiles (ms) with n,
// errors by kind, and the server's CPU per request and RSS.
void print_runs(std::FILE* out, const std::vector<RunRecord>& records);

// E7 as the paper lays it out: a row per clients x calls shape, per column
// the average (the mean of the repetitions' means, and their range), min,
// max and standard deviation (ms) and the server's CPU time per request.
void print_e7(std::FILE* out, const std::vector<RunRecord>& records);

// The records as JSON beside the context; the aftermath is added after.
// Returns an empty string on success, else the reason.
std::string write_json(const std::filesystem::path& file, const ContextPairs& context,
                       const std::vector<RunRecord>& records, const RunAftermath& aftermath);

// A figure right-aligned in `width` columns with `decimals` decimals; "-"
// where it is not reported (not finite).
std::string cell(double value, int width, int decimals);

}  // namespace wsb::load
