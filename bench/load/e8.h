// E8 (mohamed-wijesekera, section 5): the dictionary service under users
// who join one per step up to the paper's 21, then in larger steps until
// the first failed call or a bound. From the server's sampled CPU and RSS
// and the run's series: a row per user step, and the most users served
// without a failed, dropped or late call. Why so: docs/load.md.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "load/driver.h"
#include "load/report.h"

namespace wsb::load {

struct E8Plan {
  int ramp_to = 21;
  std::chrono::milliseconds ramp_every{1000};
  std::vector<int> search_users;  // after the ramp, each more than the last
  std::chrono::milliseconds search_hold{500};
  unsigned define_percent = 90;

  // Users and time span of every step, in order.
  std::vector<UserStep> steps() const;
  std::chrono::milliseconds duration() const;
};

// "FIRST:STEP:LAST" (users after the ramp: FIRST, FIRST+STEP, ..., LAST)
// or "none"; throws std::invalid_argument for anything else, or a FIRST
// not above the ramp's end.
std::vector<int> parse_search_users(const std::string& text, int ramp_to);

// One closed-loop client per user, each joining at its step's start; the
// run stops at the first failed call.
LoadSpec e8_spec(const E8Plan& plan);

// Fills the record's steps (calls, failures, CPU %, RSS per step) and the
// most users served without a failure from its run and server samples.
void add_e8_steps(RunRecord& record, const E8Plan& plan);

// The table per protocol x size: CPU % and RSS at 1, 5, 10, 15 and 21
// users and at the most users served; then, per size, a row per step.
void print_e8(std::FILE* out, const std::vector<RunRecord>& records, const E8Plan& plan);

}  // namespace wsb::load
