// E8's search for the most users served, on known data: its steps go past
// any fixed bound up to the load side's limit or a cap given, and each run
// records what ended it (a failed call, the driver's saturated vCPU, the
// load side's limit, the cap, an overrun).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "load/driver.h"
#include "load/e8.h"
#include "load/report.h"

namespace wsb::load {
namespace {

using namespace std::chrono_literals;

TEST(LoadE8Search, GrowsByAFactorUpToTheLoadSidesLimit) {
  const LoadSideLimit limit{500, "file descriptors (soft limit 2064, 4 a user)"};
  const auto open = parse_search("24:x1.5:max", 21, limit);
  EXPECT_EQ(open.users, (std::vector<int>{24, 36, 54, 81, 122, 183, 275, 413, 500}));
  EXPECT_EQ(open.bound, "load side's limit: file descriptors (soft limit 2064, 4 a user)");
  // A cap below the limit is the bound, and a step of its own.
  const auto capped = parse_search("24:x2:100", 21, limit);
  EXPECT_EQ(capped.users, (std::vector<int>{24, 48, 96, 100}));
  EXPECT_EQ(capped.bound, "the search's cap (100)");
  // A cap above the limit: the limit ends the steps.
  const auto over = parse_search("400:50:1000", 21, limit);
  EXPECT_EQ(over.users, (std::vector<int>{400, 450, 500}));
  EXPECT_EQ(over.bound, "load side's limit: file descriptors (soft limit 2064, 4 a user)");
  // The linear form as before.
  EXPECT_EQ(parse_search("24:8:48", 21, limit).users, (std::vector<int>{24, 32, 40, 48}));
  EXPECT_EQ(parse_search("none", 21, limit).users, std::vector<int>{});
  for (const char* bad : {"24:x1:max", "24:x:max", "24:8:max2", "24:0:48", "24:8", "600:x2:max"})
    EXPECT_THROW(parse_search(bad, 21, limit), std::invalid_argument) << bad;
}

// 600 descriptors leave fewer than 150 users (4 a user), and the descriptors are
// named as the limit: 0, else 1.
int limit_at_600_descriptors() {
  const rlimit files{600, 600};
  ::setrlimit(RLIMIT_NOFILE, &files);
  const auto low = load_side_limit();
  const bool named = low.which.starts_with("file descriptors (soft limit 600");
  return low.users < 150 && low.users > 100 && named ? 0 : 1;
}

TEST(LoadE8Search, TheLoadSidesLimitComesFromItsFileDescriptors) {
  const auto limit = load_side_limit();
  EXPECT_GT(limit.users, 0);
  EXPECT_LE(limit.users, kMaxClients);
  EXPECT_FALSE(limit.which.empty());
  // In a child, so the lowered hard limit stays there.
  EXPECT_EXIT(std::exit(limit_at_600_descriptors()), testing::ExitedWithCode(0), "");
}

// Users 1 and 2, half a second each, then a search step of 300 users for
// half a second; the server's CPU grows by 0.4 s per second, the driver's
// by `driver_share` of a vCPU.
E8Plan plan_to_300() {
  E8Plan plan;
  plan.ramp_to = 2;
  plan.ramp_every = 500ms;
  plan.search_users = {300};
  plan.search_hold = 500ms;
  plan.bound = "the search's cap (300)";
  return plan;
}

RunRecord run_of(double elapsed_s, double driver_share) {
  RunRecord r;
  r.run.elapsed_s = elapsed_s;
  for (int i = 0; i <= 8; ++i) {
    const double t = 0.25 * i;
    r.server_samples.push_back({t, ProcessUsage{0.4 * t, 8192, 0}});
    r.driver_samples.push_back({t, ProcessUsage{driver_share * t, 4096, 0}});
  }
  r.run.tally.ok_per_second.assign(static_cast<std::size_t>(std::lround(elapsed_s / 0.05)), 1);
  return r;
}

TEST(LoadE8Search, ARunThatPassesEveryStepEndsAtTheBound) {
  auto r = run_of(1.5, 0.3);
  add_e8_steps(r, plan_to_300());
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.max_users, 300);  // past the old fixed 128
  EXPECT_TRUE(r.max_users_at_bound);
  EXPECT_EQ(r.search_end, "the search's cap (300) at 300 users");
  for (const auto& s : r.steps) EXPECT_NEAR(s.driver_cpu_percent, 30, 1e-6) << s.users;
}

TEST(LoadE8Search, AFailedCallIsTheServersLimitUnlessTheDriverWasSaturated) {
  auto refused = run_of(1.3, 0.3);
  refused.run.tally.first_failure_sent = 1200ms;  // sent with 300 users
  refused.run.tally.add_error(ErrorKind::refused, "Connection refused");
  add_e8_steps(refused, plan_to_300());
  EXPECT_EQ(refused.max_users, 2);
  EXPECT_FALSE(refused.max_users_at_bound);
  EXPECT_EQ(refused.search_end, "server's limit: a call failed at 300 users (refused)");

  // A timeout while the driver's one vCPU was 95% busy: the driver may
  // have read the reply late.
  auto saturated = run_of(1.3, 0.95);
  saturated.run.tally.first_failure_sent = 1200ms;
  saturated.run.tally.add_error(ErrorKind::timeout, "a reply came after the timeout");
  add_e8_steps(saturated, plan_to_300());
  EXPECT_EQ(saturated.search_end,
            "load side's limit: the driver's CPU (95% of its vCPUs) at 300 users, where a call "
            "failed (timeout)");
  // The same share of two vCPUs (unpinned) is not saturation.
  auto spread = run_of(1.3, 0.95);
  spread.driver_cpus = 2;
  spread.run.tally.first_failure_sent = 1200ms;
  spread.run.tally.add_error(ErrorKind::timeout, "a reply came after the timeout");
  add_e8_steps(spread, plan_to_300());
  EXPECT_EQ(spread.search_end, "server's limit: a call failed at 300 users (timeout)");

  // The driver out of descriptors: its own connects fail, not the server.
  auto out_of_fds = run_of(1.3, 0.3);
  out_of_fds.run.tally.first_failure_sent = 1200ms;
  out_of_fds.run.tally.add_error(ErrorKind::refused,
                                 "eventfd_select_interrupter: Too many open files [system:24]");
  add_e8_steps(out_of_fds, plan_to_300());
  EXPECT_EQ(out_of_fds.search_end,
            "load side's limit: the driver's file descriptors (too many open files) at 300 users");
}

TEST(LoadE8Search, AnOverrunOrAnEarlyEndIsNamed) {
  auto stalled = run_of(1.5, 0.3);
  stalled.run.overran = true;
  add_e8_steps(stalled, plan_to_300());
  EXPECT_EQ(stalled.search_end, "overran at 300 users: calls stuck past the timeout");
  auto cut = run_of(0.8, 0.3);  // --max-time ended it in the second step
  add_e8_steps(cut, plan_to_300());
  EXPECT_EQ(cut.search_end, "the run's time bound (--max-time) at 2 users");
}

}  // namespace
}  // namespace wsb::load
