#include "harness/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace wsb {

int listen_on_loopback(int backlog, std::uint16_t& port, const char* who) {
  port = 0;
  return listen_on("127.0.0.1", backlog, port, who);
}

int listen_on(const char* ipv4, int backlog, std::uint16_t& port, const char* who) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, ipv4, &addr.sin_addr) != 1)
    throw std::runtime_error(std::string(who) + ": not an IPv4 address: " + ipv4);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string(who) + ": socket: " + std::strerror(errno));
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, backlog) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error(std::string(who) + ": listen: " + std::strerror(err));
  }
  port = ntohs(addr.sin_port);
  return fd;
}

void set_nodelay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

bool write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t put = ::send(fd, data, n, MSG_NOSIGNAL);
    if (put < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += put;
    n -= static_cast<std::size_t>(put);
  }
  return true;
}

bool read_exact(int fd, char* data, std::size_t n, std::uint64_t* receives) {
  while (n > 0) {
    const ssize_t got = ::recv(fd, data, n, 0);
    if (receives != nullptr) ++*receives;
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      return false;
    }
    data += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace wsb
