#include "xmlrpc/xmlrpc_front.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include "xmlrpc/xmlrpc_http_head.h"

// Abyss 1.33's channel and channel switch interfaces (lib/abyss/src/
// channel.h, chanswitch.h): exported by libxmlrpc_abyss, not installed.
// Abyss's C `bool` is an int-sized enum (its ConnWrite reads `failed` as
// 32 bits), so it is AbyssBool here.
extern "C" {
using AbyssBool = int;
struct TChannelVtbl {
  void (*destroy)(TChannel*);
  void (*write)(TChannel*, const unsigned char*, std::uint32_t, AbyssBool*);
  void (*read)(TChannel*, unsigned char*, std::uint32_t, std::uint32_t*, AbyssBool*);
  void (*wait)(TChannel*, AbyssBool, AbyssBool, std::uint32_t, AbyssBool*, AbyssBool*, AbyssBool*);
  void (*interrupt)(TChannel*);
  void (*formatPeerInfo)(TChannel*, const char**);
};
struct _TChannel {
  unsigned int signature;
  void* implP;
  TChannelVtbl vtbl;
};
struct TChanSwitchVtbl {
  void (*destroy)(TChanSwitch*);
  void (*listen)(TChanSwitch*, std::uint32_t, const char**);
  void (*accept)(TChanSwitch*, TChannel**, void**, const char**);
  void (*interrupt)(TChanSwitch*);
};
struct _TChanSwitch {
  unsigned int signature;
  void* implP;
  TChanSwitchVtbl vtbl;
};
void ChannelCreate(const TChannelVtbl*, void*, TChannel**);
void ChanSwitchCreate(const TChanSwitchVtbl*, void*, TChanSwitch**);
}

namespace wsb::xmlrpc {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kWaitForever = 0xffffffff;  // Abyss's TIME_INFINITE
// Closing with the client's bytes unread makes the kernel send a reset,
// which can destroy the reply in flight (RFC 9112 9.6): a closing
// connection reads and discards for this long at most, and stops after
// this long without input (as the Beast server's linger_close).
constexpr auto kLingerTotal = std::chrono::seconds(5);
constexpr int kLingerIdleMs = 500;
constexpr std::size_t kReadChunk = 16 * 1024;
constexpr std::string_view kAllowPost = "Allow: POST\r\n";

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), s.begin(),
                    [](char p, char c) { return p == (c | 0x20) || p == c; });
}

bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The Date field, formatted once a second per thread.
const std::string& current_date_field() {
  thread_local std::time_t at = 0;
  thread_local std::string field;
  if (const std::time_t now = std::time(nullptr); now != at) {
    at = now;
    field = date_field(now);
  }
  return field;
}

// One client connection: Abyss reads and writes it through this.
class Connection {
 public:
  Connection(int fd, const FrontLimits& limits)
      : fd_(fd), wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), limits_(limits) {
    if (wake_ < 0) throw std::runtime_error("eventfd failed");
  }
  ~Connection() {
    close(wake_);
    close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Hands Abyss the current request's bytes and nothing past them, so a
  // pipelined request stays here until Abyss asks for the next one (Abyss
  // waits on the socket before it parses a request its buffer already
  // holds). 0 bytes is the end of input to Abyss.
  bool read(unsigned char* to, std::uint32_t size, std::uint32_t* got) {
    *got = 0;
    if (input_done_ || (message_left_ == 0 && !next_request())) return true;
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(size, message_left_));
    std::size_t n = 0;
    if (at_ < in_.size()) {
      n = std::min(want, in_.size() - at_);
      std::memcpy(to, in_.data() + at_, n);
      at_ += n;
    } else {
      ssize_t r = 0;
      do r = recv(fd_, to, want, 0);
      while (r < 0 && errno == EINTR);
      if (r < 0) return false;
      if (r == 0) peer_closed_ = input_done_ = true;
      n = static_cast<std::size_t>(r);
    }
    message_left_ -= n;
    *got = static_cast<std::uint32_t>(n);
    return true;
  }

  // Abyss's write of its reply, piece by piece (the status line, each
  // field, the empty line, the body): the Date field is replaced by an
  // IMF-fixdate (Abyss writes "UTC"), a 405 gets the Allow field RFC 9110
  // 15.5.6 requires (xmlrpc-c's handler sends none; its path allows POST
  // only, as its own reply to OPTIONS says), a HEAD reply's body is
  // dropped, and a reply that says Connection: close ends with a lingering
  // close.
  bool write(const unsigned char* data, std::uint32_t size) {
    if (output_done_) return true;  // the reply is over; Abyss ends the connection next
    const std::string_view piece(reinterpret_cast<const char*>(data), size);
    if (reply_.in_head) {
      if (piece == "\r\n") {
        reply_.in_head = false;
        if (reply_.needs_allow && !send_all(fd_, kAllowPost.data(), kAllowPost.size()))
          return false;
        const bool sent = send_all(fd_, piece.data(), piece.size());
        if (reply_.head_only || (reply_.has_length && reply_.body_left == 0)) reply_done();
        return sent;
      }
      if (piece.size() > 5 && piece.substr(0, 5) == "Date:") {
        const std::string& date = current_date_field();
        return send_all(fd_, date.data(), date.size());
      }
      if (piece.size() > 12 && piece.substr(0, 7) == "HTTP/1." && piece.substr(9, 3) == "405") {
        reply_.needs_allow = true;
      } else if (starts_with_nocase(piece, "allow:")) {
        reply_.needs_allow = false;
      } else if (starts_with_nocase(piece, "connection: close")) {
        reply_.closing = true;
      } else if (starts_with_nocase(piece, "content-length:")) {
        reply_.has_length = true;
        reply_.body_left = std::strtoull(piece.data() + 15, nullptr, 10);
      }
      return send_all(fd_, piece.data(), piece.size());
    }
    if (reply_.head_only || reply_.done) return true;
    const bool sent = send_all(fd_, piece.data(), piece.size());
    if (reply_.has_length)
      reply_.body_left -= std::min<std::uint64_t>(reply_.body_left, piece.size());
    // Abyss's own error pages have no Content-Length and come in one piece.
    if (!reply_.has_length || reply_.body_left == 0) reply_done();
    return sent;
  }

  bool wait(bool for_read, bool for_write, std::uint32_t ms, bool* readable, bool* writable) {
    *readable = *writable = false;
    if (for_read && (input_done_ || at_ < in_.size())) {
      *readable = true;
      return true;
    }
    pollfd fds[2] = {
        {fd_, static_cast<short>((for_read ? POLLIN : 0) | (for_write ? POLLOUT : 0)), 0},
        {wake_, POLLIN, 0}};
    const int rc = poll(fds, 2, ms == kWaitForever ? -1 : static_cast<int>(ms));
    if (rc < 0) return errno == EINTR;
    if (rc == 0 || (fds[1].revents & POLLIN) != 0) return true;  // timed out or interrupted
    *readable = for_read && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
    *writable = for_write && (fds[0].revents & (POLLOUT | POLLERR)) != 0;
    return true;
  }

  void interrupt() {
    interrupted_ = true;
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_, &one, sizeof one);
  }

  std::string peer() const {
    sockaddr_storage a{};
    socklen_t length = sizeof a;
    char host[INET6_ADDRSTRLEN] = "?";
    in_port_t port = 0;
    if (getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &length) == 0) {
      const bool v6 = a.ss_family == AF_INET6;
      const auto* in4 = reinterpret_cast<const sockaddr_in*>(&a);
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
      inet_ntop(a.ss_family, v6 ? static_cast<const void*>(&in6->sin6_addr) : &in4->sin_addr, host,
                sizeof host);
      port = ntohs(v6 ? in6->sin6_port : in4->sin_port);
    }
    return std::string(host) + ":" + std::to_string(port);
  }

 private:
  struct Reply {
    bool in_head = true;
    bool head_only = false;  // the request was HEAD
    bool closing = false;    // Connection: close
    bool has_length = false;
    bool done = false;
    bool needs_allow = false;  // a 405 without Allow so far
    std::uint64_t body_left = 0;
  };

  // Reads and checks the next request's head; false if the connection
  // ends instead (refused, closed by the client, or the server stops).
  bool next_request() {
    if (at_ > 0) {
      in_.erase(0, at_);
      at_ = 0;
    }
    const Clock::time_point deadline =
        Clock::now() + std::chrono::seconds(limits_.request_timeout_s);
    for (;;) {
      const RequestHead head =
          check_request_head(in_, limits_.max_header_bytes, limits_.max_header_fields);
      if (head.refusal != 0) return refuse(head.refusal, head.why, head.head_method);
      if (head.length != 0) {
        message_left_ = head.length + head.content_length;
        reply_ = Reply{};
        reply_.head_only = head.head_method;
        return true;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_, POLLIN, 0}};
      const int rc = left.count() > 0 ? poll(fds, 2, static_cast<int>(left.count())) : 0;
      if (rc < 0 && errno == EINTR) continue;
      if (interrupted_ || rc < 0) return stop();
      if (rc == 0) return refuse(408, "the request's head did not arrive in time", false);
      const std::size_t had = in_.size();
      char chunk[kReadChunk];  // not in_ resized: that would zero it first
      const ssize_t r = recv(fd_, chunk, sizeof chunk, 0);
      if (r > 0) in_.append(chunk, static_cast<std::size_t>(r));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        peer_closed_ = r == 0;
        // A client that half-closes mid-head still reads our answer.
        if (r == 0 && had > 0) return refuse(400, "the request ended inside its head", false);
        return stop();
      }
    }
  }

  bool stop() {
    input_done_ = true;
    return false;
  }

  bool refuse(std::uint16_t status, const char* why, bool head_method) {
    const std::string reply = refusal_reply(status, why, head_method);
    send_all(fd_, reply.data(), reply.size());
    linger();
    output_done_ = true;
    return stop();
  }

  void reply_done() {
    reply_.done = true;
    if (!reply_.closing) return;
    linger();
    input_done_ = output_done_ = true;
  }

  // Half-closes, then discards input until the client closes, it stays
  // idle for kLingerIdleMs, kLingerTotal passes or the server stops.
  void linger() {
    in_.clear();
    at_ = 0;
    shutdown(fd_, SHUT_WR);
    if (peer_closed_) return;
    const Clock::time_point until = Clock::now() + kLingerTotal;
    char sink[4096];
    while (!interrupted_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
      if (left.count() <= 0) return;
      pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_, POLLIN, 0}};
      const int rc =
          poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), kLingerIdleMs)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc <= 0 || (fds[1].revents & POLLIN) != 0) return;
      const ssize_t r = recv(fd_, sink, sizeof sink, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return;
    }
  }

  const int fd_;
  const int wake_;  // interrupt(): ServerTerminate wakes every wait with it
  const FrontLimits limits_;
  std::string in_;  // read from the socket, not yet handed to Abyss from at_
  std::size_t at_ = 0;
  std::uint64_t message_left_ = 0;  // of the current request (head and body), for Abyss
  Reply reply_;
  bool input_done_ = false;   // Abyss gets the end of input
  bool output_done_ = false;  // Abyss's writes are dropped (the connection is closing)
  bool peer_closed_ = false;  // the client's end of input was read
  std::atomic<bool> interrupted_{false};
};

Connection& connection(TChannel* channel) { return *static_cast<Connection*>(channel->implP); }

const TChannelVtbl kChannelVtbl = {
    [](TChannel* c) { delete &connection(c); },
    [](TChannel* c, const unsigned char* data, std::uint32_t size, AbyssBool* failed) {
      *failed = connection(c).write(data, size) ? 0 : 1;
    },
    [](TChannel* c, unsigned char* to, std::uint32_t size, std::uint32_t* got, AbyssBool* failed) {
      *failed = connection(c).read(to, size, got) ? 0 : 1;
    },
    [](TChannel* c, AbyssBool for_read, AbyssBool for_write, std::uint32_t ms, AbyssBool* readable,
       AbyssBool* writable, AbyssBool* failed) {
      bool r = false;
      bool w = false;
      const bool ok = connection(c).wait(for_read != 0, for_write != 0, ms, &r, &w);
      if (readable != nullptr) *readable = r ? 1 : 0;
      if (writable != nullptr) *writable = w ? 1 : 0;
      if (failed != nullptr) *failed = ok ? 0 : 1;
    },
    [](TChannel* c) { connection(c).interrupt(); },
    [](TChannel* c, const char** text) { *text = strdup(connection(c).peer().c_str()); },
};

struct Switch {
  int listen_fd;
  int wake;
  FrontLimits limits;
};

Switch& switch_of(TChanSwitch* s) { return *static_cast<Switch*>(s->implP); }

// Abyss frees its error strings with free().
const char* error_text(const std::string& what) {
  return strdup((what + ": " + std::strerror(errno)).c_str());
}

void accept_connection(TChanSwitch* s, TChannel** channel, void** info, const char** error) {
  Switch& sw = switch_of(s);
  *channel = nullptr;
  *info = nullptr;
  *error = nullptr;
  for (;;) {
    pollfd fds[2] = {{sw.listen_fd, POLLIN, 0}, {sw.wake, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      *error = error_text("poll");
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) return;  // ServerTerminate: no channel
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    const int fd = accept4(sw.listen_fd, reinterpret_cast<sockaddr*>(&peer), &length, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        poll(nullptr, 0, 50);  // out of descriptors: let connections end
      else if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED && errno != EPROTO)
        return void(*error = error_text("accept"));
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // Abyss frees the channel info with free(); peer_port() reads it.
    const std::size_t info_size =
        std::max(sizeof(abyss_unix_chaninfo), offsetof(abyss_unix_chaninfo, peerAddr) + length);
    auto* chaninfo = static_cast<abyss_unix_chaninfo*>(std::calloc(1, info_size));
    Connection* conn = nullptr;
    try {
      conn = new Connection(fd, sw.limits);
    } catch (const std::exception&) {
      close(fd);
    }
    if (chaninfo != nullptr && conn != nullptr) ChannelCreate(&kChannelVtbl, conn, channel);
    if (*channel == nullptr) {
      std::free(chaninfo);
      delete conn;
      continue;
    }
    chaninfo->peerAddrLen = length;
    std::memcpy(reinterpret_cast<char*>(chaninfo) + offsetof(abyss_unix_chaninfo, peerAddr), &peer,
                length);
    *info = chaninfo;
    return;
  }
}

const TChanSwitchVtbl kSwitchVtbl = {
    [](TChanSwitch* s) {
      close(switch_of(s).wake);
      delete &switch_of(s);
    },
    [](TChanSwitch* s, std::uint32_t backlog, const char** error) {
      *error = listen(switch_of(s).listen_fd, static_cast<int>(backlog)) == 0
                   ? nullptr
                   : error_text("listen");
    },
    &accept_connection,
    [](TChanSwitch* s) {
      const std::uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = ::write(switch_of(s).wake, &one, sizeof one);
    },
};

}  // namespace

TChanSwitch* make_front_switch(int listen_fd, const FrontLimits& limits) {
  const int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0)
    throw std::runtime_error("xmlrpc-c server: eventfd: " + std::string(std::strerror(errno)));
  auto* impl = new Switch{listen_fd, wake, limits};
  TChanSwitch* made = nullptr;
  ChanSwitchCreate(&kSwitchVtbl, impl, &made);
  if (made == nullptr) {
    close(wake);
    delete impl;
    throw std::bad_alloc();
  }
  return made;
}

}  // namespace wsb::xmlrpc
