// The phase arithmetic and the probes on known data: the checks that the
// phases explain the measured time, remote phases from reported durations,
// and server slots that concurrent connections cannot mix up.
#include "common/phases.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace wsb {
namespace {

// A call of 100 us whose points are all marked: 10 us per phase but the
// transfers (25 us each).
Timeline full_call() {
  Timeline t{};
  const std::int64_t at[kPointCount] = {1'000'000, 1'010'000, 1'035'000, 1'045'000,
                                        1'055'000, 1'065'000, 1'090'000, 1'100'000};
  for (std::size_t p = 0; p < kPointCount; ++p) t[p] = at[p];
  return t;
}

std::int64_t sum(const std::vector<Phase>& phases) {
  std::int64_t s = 0;
  for (const auto& p : phases) s += p.ns;
  return s;
}

TEST(PhaseCheck, PassesWhenThePhasesCoverTheTimedCall) {
  const Timeline t = full_call();
  // Timed around the call: 200 ns of clock reads and calls beyond the points.
  const auto check = check_round_trip(phases_of(t), 100'200);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->unexplained_ns, 200);
  EXPECT_TRUE(check->passed);
  EXPECT_NEAR(check->ratio, 100'000.0 / 100'200.0, 1e-12);
}

TEST(PhaseCheck, FailsWhenThePointsMissPartOfTheCall) {
  // A client that marks kInvoke only after marshalling (10 us late) and
  // kDecoded before freeing what it built (8 us early): the phases still
  // add up to their own span, but not to the call as timed around it.
  Timeline t = full_call();
  t[kInvoke] = t[kRequestWritten];
  t[kDecoded] -= 8'000;
  const auto phases = phases_of(t);
  EXPECT_EQ(sum(phases), t[kDecoded] - t[kInvoke]) << "the phases telescope regardless";
  const auto check = check_round_trip(phases, 100'000);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->unexplained_ns, 18'000);
  EXPECT_FALSE(check->passed);
}

TEST(PhaseCheck, FailsWhenPhasesOverlapOrOutlastTheCall) {
  // Points marked outside the timed region: negative unexplained time.
  const auto check = check_round_trip(phases_of(full_call()), 90'000);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->unexplained_ns, -10'000);
  EXPECT_FALSE(check->passed);
}

TEST(PhaseCheck, ToleratesASmallShareOfALongCall) {
  Timeline t = full_call();
  t[kDecoded] = t[kInvoke] + 10'000'000;  // a 10 ms call
  EXPECT_TRUE(check_round_trip(phases_of(t), 10'400'000)->passed) << "4% unexplained";
  EXPECT_FALSE(check_round_trip(phases_of(t), 10'600'000)->passed) << "6% unexplained";
}

TEST(PhaseCheck, NeedsPhasesAndATime) {
  EXPECT_FALSE(check_round_trip({}, 1'000));
  EXPECT_FALSE(check_round_trip(phases_of(full_call()), 0));
}

TEST(ServerCheck, ComparesTheServerPhasesWithTheServersOwnTime) {
  const Timeline t = full_call();  // kRequestReceived..kMarshalled: 30 us
  auto check = check_server(t, 30'100);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->unexplained_ns, 100);
  EXPECT_TRUE(check->passed);
  // The connection code spent 5 us after kMarshalled before handing the
  // reply over: the server's points miss it.
  check = check_server(t, 35'000);
  EXPECT_EQ(check->unexplained_ns, 5'000);
  EXPECT_FALSE(check->passed);
}

TEST(ServerCheck, SkipsPointsOutOfOrderAsThePhasesDo) {
  Timeline t = full_call();
  t[kParsed] = t[kRequestReceived] - 1;  // marked too early: merged over
  const auto check = check_server(t, 30'000);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->unexplained_ns, 0);
}

TEST(ServerCheck, NeedsBothEndsAndAServedTime) {
  Timeline t = full_call();
  EXPECT_FALSE(check_server(t, 0));
  t[kMarshalled] = 0;
  EXPECT_FALSE(check_server(t, 30'000));
}

TEST(RemotePhases, CutTheServersReportedPhasesFromTheWait) {
  Timeline t = full_call();
  for (const Mark m : {kRequestReceived, kParsed, kServiced, kMarshalled}) t[m] = 0;
  // The wait (kRequestWritten..kResponseReceived) is 80 us; the server says
  // it spent 30 of them.
  const auto phases = phases_of(t, ServerDurations{10'000, 15'000, 5'000});
  std::vector<std::string> names;
  for (const auto& p : phases) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"client_marshal", "request_transfer+response_transfer",
                                             "server_parse", "service", "server_marshal",
                                             "client_parse"}));
  EXPECT_EQ(phases[1].ns, 50'000);
  EXPECT_EQ(phases[3].ns, 15'000);
  EXPECT_EQ(sum(phases), 100'000);
  // A report longer than the wait is not believed: the wait stays whole.
  EXPECT_EQ(phases_of(t, ServerDurations{50'000, 50'000, 0}).size(), 3u);
}

TEST(Probes, ConcurrentConnectionsKeepTheirOwnPoints) {
  // Two connections of one server, served on two threads at once, each
  // read by its own client: no point crosses over.
  constexpr std::uint16_t kServer = 40'000;
  constexpr int kRequests = 2'000;
  auto serve = [](std::uint16_t client_port, std::int64_t base) {
    ConnectionProbe probe(client_port, kServer);
    ServerPointsReader reader(kServer, client_port);
    for (int i = 1; i <= kRequests; ++i) {
      const std::int64_t at = base + i * 10;
      probe.request_read(at);
      mark_server(kParsed, at + 1);
      mark_server(kServiced, at + 2);
      mark_server(kMarshalled, at + 3);
      probe.reply_handed();
      Timeline t{};
      ASSERT_TRUE(reader.collect(t));
      ASSERT_EQ(t[kRequestReceived], at);
      ASSERT_EQ(t[kParsed], at + 1);
      ASSERT_EQ(t[kServiced], at + 2);
      ASSERT_EQ(t[kMarshalled], at + 3);
    }
  };
  std::thread a(serve, 50'001, 1'000'000'000);
  std::thread b(serve, 50'002, 2'000'000'000);
  a.join();
  b.join();
}

TEST(Probes, AClientThatCannotNameItsSocketFindsTheOnlyConnection) {
  constexpr std::uint16_t kServer = 40'001;
  ServerPointsReader anonymous(kServer, 0);
  Timeline t{};
  EXPECT_FALSE(anonymous.collect(t)) << "no connection yet";
  {
    ConnectionProbe one(50'010, kServer);
    ConnectionProbe two(50'011, kServer);
    EXPECT_FALSE(ServerPointsReader(kServer, 0).collect(t)) << "ambiguous: better none";
  }
  ConnectionProbe only(50'012, kServer);
  only.request_read(123);
  EXPECT_TRUE(anonymous.collect(t));
  EXPECT_EQ(t[kRequestReceived], 123);
}

TEST(Probes, OffMeansNoSlotsAndNoPoints) {
  set_probes_enabled(false);
  Timeline t{};
  mark(t, kInvoke);
  ConnectionProbe probe(50'020, 40'002);
  probe.request_read(1);
  set_probes_enabled(true);
  EXPECT_EQ(t[kInvoke], 0);
  EXPECT_FALSE(probe.active());
  EXPECT_FALSE(ServerPointsReader(40'002, 50'020).collect(t));
  mark(t, kInvoke);
  EXPECT_NE(t[kInvoke], 0);
}

}  // namespace
}  // namespace wsb
