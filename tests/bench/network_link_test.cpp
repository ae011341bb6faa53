// Links between two network namespaces (bench --link): the spec parser
// everywhere; set-up, isolation, shaping and teardown where this process
// may create namespaces (root or CAP_NET_ADMIN), skipped with the reason
// otherwise.
#include "harness/network_link.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "harness/loopback.h"

namespace wsb {
namespace {

TEST(LinkSpec, PresetsCarryTheirDocumentedFigures) {
  EXPECT_TRUE(parse_link("loopback").loopback());
  const LinkSpec lan1g = parse_link("lan1g");
  EXPECT_EQ(lan1g.rate_bps, 1'000'000'000u);
  EXPECT_DOUBLE_EQ(lan1g.delay_ms, 0.05);
  const LinkSpec lan100 = parse_link("lan100");
  EXPECT_EQ(lan100.rate_bps, 100'000'000u);
  EXPECT_DOUBLE_EQ(lan100.delay_ms, 0.1);
  const LinkSpec wlan = parse_link("wlan");
  EXPECT_EQ(wlan.rate_bps, 20'000'000u);
  EXPECT_DOUBLE_EQ(wlan.delay_ms, 2);
  EXPECT_DOUBLE_EQ(wlan.jitter_ms, 1);
  EXPECT_DOUBLE_EQ(wlan.loss_pct, 0.1);
}

TEST(LinkSpec, CustomTakesEachKeyWithItsUnit) {
  const LinkSpec s = parse_link("custom:rate=10mbit,delay=250us,jitter=1s,loss=0.5%");
  EXPECT_EQ(s.rate_bps, 10'000'000u);
  EXPECT_DOUBLE_EQ(s.delay_ms, 0.25);
  EXPECT_DOUBLE_EQ(s.jitter_ms, 1000);
  EXPECT_DOUBLE_EQ(s.loss_pct, 0.5);
  EXPECT_EQ(parse_link("custom:rate=2gbit").rate_bps, 2'000'000'000u);
  EXPECT_EQ(parse_link("custom:delay=3ms").rate_bps, 0u);
}

TEST(LinkSpec, RefusesWhatItCannotApplyExactly) {
  for (const char* bad :
       {"lan10", "custom:", "custom:rate=10", "custom:rate=10mbps", "custom:rate=-1mbit",
        "custom:rate=1bit", "custom:delay=5", "custom:delay=20s", "custom:loss=1",
        "custom:loss=200%", "custom:speed=1mbit", "custom:rate", "custom:rate=nanmbit"})
    EXPECT_THROW(parse_link(bad), std::invalid_argument) << bad;
}

bool namespace_exists(const std::string& name) {
  struct stat st {};
  return ::stat(("/run/netns/" + name).c_str(), &st) == 0;
}

class Link : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto reason = link_unavailable_reason()) GTEST_SKIP() << *reason;
  }
};

// A listening socket on the server's address, made in its namespace.
int listen_in_server(const NetworkLink& link, std::uint16_t& port) {
  int fd = -1;
  link.run_in(NetworkLink::Side::server, [&] {
    port = 0;
    fd = listen_on(NetworkLink::server_address().c_str(), 1, port, "test");
  });
  return fd;
}

// A socket made in the calling thread's namespace, connected to the
// server's address; -1 if the connect failed.
int connect_to_server(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, NetworkLink::server_address().c_str(), &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST_F(Link, JoinsTwoNamespacesAndRemovesThemWhenDone) {
  std::string client_ns, server_ns;
  {
    NetworkLink link(parse_link("lan100"));
    client_ns = link.namespace_name(NetworkLink::Side::client);
    server_ns = link.namespace_name(NetworkLink::Side::server);
    EXPECT_NE(client_ns, server_ns);
    EXPECT_TRUE(client_ns.starts_with("wsb-" + std::to_string(::getpid()) + "-")) << client_ns;
    EXPECT_TRUE(namespace_exists(client_ns));
    EXPECT_TRUE(namespace_exists(server_ns));
    EXPECT_NE(link.shaping().client_to_server.find("rate 100000000bit"), std::string::npos)
        << link.shaping().describe();
    EXPECT_EQ(link.shaping().applied_rate_bps, 100'000'000u);
    // Never claims a delay the kernel was not asked for.
    if (!link.shaping().netem_available) {
      EXPECT_EQ(link.shaping().applied_one_way_delay_ms, 0);
      EXPECT_NE(link.shaping().not_applied.find("delay 0.1ms"), std::string::npos)
          << link.shaping().describe();
    }

    // Client to server across the veth; from this (the root) namespace,
    // the server's address is not reachable.
    std::uint16_t port = 0;
    const int listener = listen_in_server(link, port);
    link.run_in(NetworkLink::Side::client, [&] {
      const int fd = connect_to_server(port);
      EXPECT_GE(fd, 0) << "client namespace to server address";
      if (fd >= 0) ::close(fd);
    });
    ::close(listener);

    // No route out: the client namespace reaches nothing but the server.
    link.run_in(NetworkLink::Side::client, [&] {
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in outside{};
      outside.sin_family = AF_INET;
      outside.sin_port = htons(80);
      outside.sin_addr.s_addr = htonl(0x08080808);  // any address outside the link
      EXPECT_NE(::connect(fd, reinterpret_cast<sockaddr*>(&outside), sizeof outside), 0);
      EXPECT_EQ(errno, ENETUNREACH);
      ::close(fd);
    });
  }
  EXPECT_FALSE(namespace_exists(client_ns));
  EXPECT_FALSE(namespace_exists(server_ns));
}

// 4 MiB at 10 Mbit/s is 3.36 s of payload; Ethernet, IP and TCP headers
// (66 of every 1514 bytes tbf counts) make it 3.5 s. 3.4 s +- 10% holds
// both, and fails if the rate were not applied (loopback: milliseconds).
TEST_F(Link, TenMegabitLinkMovesFourMebibytesInAboutThreePointFourSeconds) {
  NetworkLink link(parse_link("custom:rate=10mbit"));
  constexpr std::size_t kBytes = std::size_t{4} << 20;
  std::uint16_t port = 0;
  const int listener = listen_in_server(link, port);
  std::thread server([&] {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    const timeval limit{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    std::vector<char> buffer(kBytes);
    if (read_exact(fd, buffer.data(), kBytes)) write_all(fd, "k", 1);
    ::close(fd);
  });
  double seconds = 0;
  link.run_in(NetworkLink::Side::client, [&] {
    const int fd = connect_to_server(port);
    ASSERT_GE(fd, 0);
    const std::vector<char> data(kBytes, 'x');
    const std::int64_t start = now_ns();
    char ack = 0;
    ASSERT_TRUE(write_all(fd, data.data(), data.size()));
    ASSERT_TRUE(read_exact(fd, &ack, 1));
    seconds = static_cast<double>(now_ns() - start) * 1e-9;
    ::close(fd);
  });
  server.join();
  ::close(listener);
  RecordProperty("seconds", std::to_string(seconds));
#if defined(__SANITIZE_ADDRESS__)
  // Instrumented copies beside other tests add CPU time the link does not
  // (3.8 s seen): here only that the rate is enforced, never beaten.
  EXPECT_GE(seconds, 3.4 * 0.9) << link.shaping().describe();
  EXPECT_LE(seconds, 3.4 * 2) << link.shaping().describe();
#else
  EXPECT_NEAR(seconds, 3.4, 0.34) << link.shaping().describe();
#endif
}

// A namespace whose creator is gone is removed by the next run; one whose
// creator lives is left alone.
TEST_F(Link, LaterRunRemovesNamespacesOfDeadProcesses) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // its pid is dead now
  const std::string dead = "wsb-" + std::to_string(child) + "-0-c";
  const std::string alive = "wsb-" + std::to_string(::getpid()) + "-999-c";
  for (const auto& name : {dead, alive})
    ASSERT_EQ(std::system(("ip netns add " + name).c_str()), 0) << name;
  EXPECT_GE(remove_stale_links(), 1);
  EXPECT_FALSE(namespace_exists(dead));
  EXPECT_TRUE(namespace_exists(alive));
  std::system(("ip netns del " + alive).c_str());
}

}  // namespace
}  // namespace wsb
