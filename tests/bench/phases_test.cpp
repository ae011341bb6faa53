// The phase arithmetic and the probes on known data: the checks that the
// phases explain the measured time, remote phases from reported durations,
// and server slots that concurrent connections cannot mix up.
#include "common/phases.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "common/clock.h"

namespace wsb {
namespace {

// A call of 100 us whose points are all marked: 10 us per phase but the
// transfers (25 us each).
Timeline full_call() {
  Timeline t{};
  const std::int64_t at[kPointCount] = {1'000'000, 1'010'000, 1'035'000, 1'045'000,
                                        1'055'000, 1'065'000, 1'090'000, 1'100'000};
  for (std::size_t p = 0; p < kPointCount; ++p) t.set(p, at[p]);
  return t;
}

std::int64_t sum(const std::vector<Phase>& phases) {
  std::int64_t s = 0;
  for (const auto& p : phases) s += p.ns;
  return s;
}

std::vector<std::string> names(const std::vector<Phase>& phases) {
  std::vector<std::string> out;
  for (const auto& p : phases) out.push_back(p.name);
  return out;
}

TEST(PhaseCheck, PassesWhenThePhasesCoverTheTimedCall) {
  const Timeline t = full_call();
  // Timed around the call: 200 ns of clock reads and calls beyond the points.
  const auto check = check_round_trip(phases_of(t), 100'200);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->measured_ns, 100'200);
  EXPECT_EQ(check->gap_ns, 200);
  EXPECT_TRUE(check->passed);
  EXPECT_NEAR(check->share(), 200.0 / 100'200.0, 1e-12);
}

TEST(PhaseCheck, FailsWhenThePointsMissPartOfTheCall) {
  // A client that marks kInvoke only after marshalling (10 us late) and
  // kDecoded before freeing what it built (8 us early).
  Timeline t = full_call();
  t.set(kInvoke, t[kRequestWritten]);
  t.set(kDecoded, t[kDecoded] - 8'000);
  const auto check = check_round_trip(phases_of(t), 100'000);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->gap_ns, 18'000);
  EXPECT_FALSE(check->passed);
}

TEST(PhaseCheck, FailsWhenPhasesOutlastTheCall) {
  // Points marked outside the timed region: a negative gap.
  const auto check = check_round_trip(phases_of(full_call()), 90'000);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->gap_ns, -10'000);
  EXPECT_FALSE(check->passed);
}

TEST(PhaseCheck, FailsWhenAPhaseIsNeverEnded) {
  // "service done" has a start read (server_marshal starts) but no end:
  // `service` is left out, not merged into its neighbour.
  Timeline t = full_call();
  t.end[kServiced] = 0;
  const auto phases = phases_of(t);
  EXPECT_EQ(names(phases),
            (std::vector<std::string>{"client_marshal", "request_transfer", "server_parse",
                                      "server_marshal", "response_transfer", "client_parse"}));
  const auto check = check_round_trip(phases, 100'000);
  EXPECT_EQ(check->gap_ns, 10'000);
  EXPECT_FALSE(check->passed);
  // A point that ends a phase but starts none leaves the next one out.
  t = full_call();
  t.start[kParsed] = 0;
  EXPECT_EQ(check_round_trip(phases_of(t), 100'000)->gap_ns, 10'000);
}

TEST(PhaseCheck, FailsWhenAPhaseIsCountedTwice) {
  // server_marshal starts where `service` started: service's 10 us count
  // in both.
  Timeline t = full_call();
  t.start[kServiced] = t.start[kParsed];
  const auto phases = phases_of(t);
  EXPECT_EQ(phases.size(), 7u);
  EXPECT_EQ(phases[4].name, "server_marshal");
  EXPECT_EQ(phases[4].ns, 20'000);
  const auto check = check_round_trip(phases, 100'000);
  EXPECT_EQ(check->gap_ns, -10'000);
  EXPECT_FALSE(check->passed);
  EXPECT_FALSE(in_order(t));
}

TEST(PhaseCheck, AddsUpIntervalsNotTheSpan) {
  // A point whose start comes 6 us after its end: the phases leave those
  // 6 us out although the first and last points span the call.
  Timeline t = full_call();
  t.start[kParsed] += 6'000;
  EXPECT_EQ(sum(phases_of(t)), 94'000);
  EXPECT_FALSE(check_round_trip(phases_of(t), 100'000)->passed);
}

TEST(PhaseCheck, AnUnexposedPointMergesItsNeighbours) {
  // xmlrpc-c's client: no "request written" at all.
  Timeline t = full_call();
  t.set(kRequestWritten, 0);
  const auto phases = phases_of(t);
  EXPECT_EQ(phases.front().name, "client_marshal+request_transfer");
  EXPECT_EQ(phases.front().ns, 35'000);
  EXPECT_EQ(check_round_trip(phases, 100'000)->gap_ns, 0);
}

TEST(PhaseCheck, ToleratesASmallShareOfALongCall) {
  Timeline t = full_call();
  t.set(kDecoded, t[kInvoke] + 10'000'000);  // a 10 ms call
  EXPECT_TRUE(check_round_trip(phases_of(t), 10'400'000)->passed) << "4% unexplained";
  EXPECT_FALSE(check_round_trip(phases_of(t), 10'600'000)->passed) << "6% unexplained";
  EXPECT_FALSE(check_round_trip(phases_of(t), 9'400'000)->passed) << "6% counted twice";
}

TEST(PhaseCheck, NeedsPhasesAndATime) {
  EXPECT_FALSE(check_round_trip({}, 1'000));
  EXPECT_FALSE(check_round_trip(phases_of(full_call()), 0));
}

TEST(ServerCheck, ComparesTheServerPhasesWithTheServedTime) {
  const Timeline t = full_call();  // kRequestReceived..kMarshalled: 30 us
  auto check = check_server(t, 30'100);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->gap_ns, 100);
  EXPECT_TRUE(check->passed);
  // The connection code spent 5 us after kMarshalled before handing the
  // reply over: the server's points miss it.
  check = check_server(t, 35'000);
  EXPECT_EQ(check->gap_ns, 5'000);
  EXPECT_FALSE(check->passed);
}

TEST(ServerCheck, SeesAMissingAndADoubleCountedPhase) {
  Timeline t = full_call();
  t.end[kParsed] = 0;  // server_parse never ended
  EXPECT_EQ(check_server(t, 30'000)->gap_ns, 10'000);
  t = full_call();
  t.start[kParsed] = t.start[kRequestReceived];  // service from the request's arrival
  EXPECT_EQ(check_server(t, 30'000)->gap_ns, -10'000);
}

TEST(ServerCheck, SkipsPointsOutOfOrderAsThePhasesDo) {
  Timeline t = full_call();
  t.set(kParsed, t[kRequestReceived] - 1);  // marked too early: merged over
  const auto check = check_server(t, 30'000);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->gap_ns, 0);
}

TEST(ServerCheck, NeedsBothEndsAndAServedTime) {
  Timeline t = full_call();
  EXPECT_FALSE(check_server(t, 0));
  t.set(kMarshalled, 0);
  EXPECT_FALSE(check_server(t, 30'000));
}

TEST(RemotePhases, CutTheServersReportedPhasesFromTheWait) {
  Timeline t = full_call();
  for (const Mark m : {kRequestReceived, kParsed, kServiced, kMarshalled}) t.set(m, 0);
  // The wait (kRequestWritten..kResponseReceived) is 80 us; the server says
  // it spent 30 of them.
  const auto phases = phases_of(t, ServerDurations{10'000, 15'000, 5'000});
  EXPECT_EQ(names(phases), (std::vector<std::string>{
                               "client_marshal", "request_transfer+response_transfer",
                               "server_parse", "service", "server_marshal", "client_parse"}));
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

TEST(Probes, TheServedTimeHasClockReadsOfItsOwn) {
  constexpr std::uint16_t kServer = 40'003;
  ConnectionProbe probe(50'030, kServer);
  ServerPointsReader reader(kServer, 50'030);
  const std::int64_t before = now_ns();
  probe.serving_starts();
  const std::int64_t received = now_ns();
  probe.request_read(received);
  mark_server(kParsed);
  mark_server(kServiced);
  mark_server(kMarshalled);
  probe.reply_handed();
  const std::int64_t after = now_ns();
  Timeline t{};
  const auto served = reader.collect(t);
  ASSERT_TRUE(served);
  // Started before kRequestReceived's read, ended after kMarshalled's.
  EXPECT_GT(*served, t[kMarshalled] - received);
  EXPECT_LT(*served, after - before);
  // A request the connection code did not start timing gets no served time.
  probe.request_read(now_ns());
  probe.reply_handed();
  EXPECT_EQ(reader.collect(t), 0);
  EXPECT_FALSE(check_server(t, 0));
}

// Clears the injected fault however the test ends.
struct FaultScope {
  FaultScope(Mark point, MarkFault fault) { inject_mark_fault(point, fault); }
  ~FaultScope() { inject_mark_fault(kInvoke, MarkFault::none); }
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;
};

TEST(MarkFaults, UnclosedDropsTheEndReadOfThatPointOnly) {
  Timeline t{};
  {
    const FaultScope fault(kRequestWritten, MarkFault::unclosed);
    mark(t, kInvoke);
    mark(t, kRequestWritten);
  }
  EXPECT_NE(t.end[kInvoke], 0);
  EXPECT_EQ(t.end[kRequestWritten], 0);
  EXPECT_NE(t.start[kRequestWritten], 0);
  mark(t, kRequestWritten);  // cleared
  EXPECT_EQ(t.end[kRequestWritten], t.start[kRequestWritten]);
}

TEST(MarkFaults, EarlyStartTakesThePreviousPointsStart) {
  Timeline t{};
  mark(t, kInvoke);
  {
    const FaultScope fault(kRequestWritten, MarkFault::early_start);
    mark(t, kRequestWritten);
  }
  EXPECT_EQ(t.start[kRequestWritten], t.start[kInvoke]);
  EXPECT_GE(t.end[kRequestWritten], t.start[kInvoke]);
}

TEST(MarkFaults, ReachTheServersSlot) {
  constexpr std::uint16_t kServer = 40'004;
  ConnectionProbe probe(50'040, kServer);
  ServerPointsReader reader(kServer, 50'040);
  Timeline t{};
  {
    const FaultScope fault(kServiced, MarkFault::early_start);
    probe.request_read(100);
    mark_server(kParsed, 110);
    mark_server(kServiced, 120);
    mark_server(kMarshalled, 130);
    reader.collect(t);
  }
  EXPECT_EQ(t.end[kServiced], 120);
  EXPECT_EQ(t.start[kServiced], 110);
  {
    const FaultScope fault(kParsed, MarkFault::unclosed);
    probe.request_read(200);
    mark_server(kParsed, 210);
    reader.collect(t);
  }
  EXPECT_EQ(t.end[kParsed], 0);
  EXPECT_EQ(t.start[kParsed], 210);
  EXPECT_EQ(t.end[kServiced], 0) << "a new request clears the previous one's points";
}

}  // namespace
}  // namespace wsb
