// E8 (mohamed-wijesekera, section 5): the dictionary service under users
// who join one per step up to the paper's 21, then in larger steps until
// the first failed call or the load side's limit (file descriptors, the
// driver's threads, a cap given), each run recording which ended it. From the server's sampled CPU
// and RSS and the run's series: a row per user step, and the most users served without a failed,
// dropped or late call. Why so: docs/load.md.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "load/driver.h"
#include "load/report.h"

namespace wsb::load {

// The most users the load side can start: its file descriptors (the soft
// limit, raised to the hard one), the threads the system lets it and the
// servers start (one each per user: gSOAP and Abyss run a thread per
// connection), and the driver's kMaxClients; `which` names the tightest.
struct LoadSideLimit {
  int users = kMaxClients;
  std::string which = "the driver's client limit (" + std::to_string(kMaxClients) + ")";
};
// Raises RLIMIT_NOFILE's soft limit to its hard one (the servers started
// later inherit it), then measures.
LoadSideLimit load_side_limit();

struct E8Plan {
  int ramp_to = 21;
  std::chrono::milliseconds ramp_every{1000};
  std::vector<int> search_users;  // after the ramp, each more than the last
  std::chrono::milliseconds search_hold{500};
  unsigned define_percent = 90;
  // What set the last step: "the search's cap (1024)" or the load side's
  // limit; a run that passes every step ends "at" it.
  std::string bound = "the ramp's end (no search)";

  // Users and time span of every step, in order.
  std::vector<UserStep> steps() const;
  std::chrono::milliseconds duration() const;
};

// "FIRST:STEP:LAST" (users after the ramp: FIRST, FIRST+STEP, ..., LAST),
// STEP "xF" for steps growing by a factor F (F > 1), LAST "max" for as far
// as the load side goes; or "none". Steps past `limit` are cut and the
// limit becomes the bound. Throws std::invalid_argument for anything else,
// or a FIRST not above the ramp's end or above the limit.
struct SearchSteps {
  std::vector<int> users;
  std::string bound;
};
SearchSteps parse_search(const std::string& text, int ramp_to, const LoadSideLimit& limit = {});
inline std::vector<int> parse_search_users(const std::string& text, int ramp_to) {
  return parse_search(text, ramp_to).users;
}

// One closed-loop client per user, each joining at its step's start; the
// run stops at the first failed call.
LoadSpec e8_spec(const E8Plan& plan);

// Fills the record's steps (calls, failures, the server's CPU % and RSS,
// the driver's CPU % per step), the most users served without a failure,
// and what ended the search (search_end), from its run and samples.
void add_e8_steps(RunRecord& record, const E8Plan& plan);

// The table per protocol x size: CPU % and RSS at 1, 5, 10, 15 and 21
// users and at the most users served; then, per size, a row per step.
void print_e8(std::FILE* out, const std::vector<RunRecord>& records, const E8Plan& plan);

}  // namespace wsb::load
