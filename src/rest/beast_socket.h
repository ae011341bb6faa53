// A blocking socket stream with an idle timeout for Beast's synchronous
// HTTP algorithms (http::read, http::write). Include it only from the Beast
// translation units (beast_server.cpp, beast_client.cpp).
//
// Why not tcp::socket directly: Asio's synchronous read_some has no timeout.
// Its usual stand-in, a non-blocking socket plus poll() when a read would
// block, costs a failed recv and a poll on every wait, i.e. two extra system
// calls on each side of every round trip: a few percent of a 16 us loopback
// round trip, which is what the benchmark measures. SO_RCVTIMEO/SO_SNDTIMEO
// put the timeout in the kernel instead, but Asio turns the resulting EAGAIN
// into an endless poll. So this adapter issues recvmsg/sendmsg on the
// socket's descriptor itself: one system call per read or write, as a plain
// blocking socket, and a kernel-enforced idle timeout. Asio still opens,
// connects, accepts and closes the socket.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/system/system_error.hpp>
#include <cerrno>
#include <chrono>
#include <cstddef>

namespace wsb::rest {

// Bytes to reserve in the flat_buffer an http::read reads into. Beast asks
// the socket for max(512, free capacity) bytes at a time, at most 64 KiB;
// the parser consumes what each read brings, so a buffer that starts empty
// stays at 512 bytes and a 30 KB body takes 60 recv calls (measured: ~100 us
// of a message-a echo). Reserved up front, each recv takes up to 64 KiB.
constexpr std::size_t kReadBufferBytes = 64 * 1024;

class TimedSocket {
 public:
  explicit TimedSocket(int fd) : fd_(fd) {}

  // Every later read or write on `fd` that waits longer than `idle` without
  // progress fails with beast::error::timeout. Returns false if the kernel
  // refuses (errno set).
  static bool set_idle_timeout(int fd, std::chrono::milliseconds idle) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(idle.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((idle.count() % 1000) * 1000);
    return ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
           ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0;
  }

  // SyncReadStream. The end of the stream is boost::asio::error::eof, as
  // Beast's parser expects.
  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
    iovec iov[kMaxIov];
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = fill(iov, buffers);
    ec = {};
    if (msg.msg_iovlen == 0) return 0;
    for (;;) {
      const ssize_t n = ::recvmsg(fd_, &msg, 0);
      if (n > 0) return static_cast<std::size_t>(n);
      if (n == 0) {
        ec = boost::asio::error::eof;
        return 0;
      }
      if (errno != EINTR) {
        ec = failure();
        return 0;
      }
    }
  }
  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers) {
    boost::system::error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  // SyncWriteStream. MSG_NOSIGNAL: a peer that has gone away is an EPIPE
  // error, not a SIGPIPE that kills the process.
  template <class ConstBufferSequence>
  std::size_t write_some(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
    iovec iov[kMaxIov];
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = fill(iov, buffers);
    ec = {};
    if (msg.msg_iovlen == 0) return 0;
    for (;;) {
      const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno != EINTR) {
        ec = failure();
        return 0;
      }
    }
  }
  template <class ConstBufferSequence>
  std::size_t write_some(const ConstBufferSequence& buffers) {
    boost::system::error_code ec;
    const std::size_t n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  // Beast hands over the start line, one buffer per header field, and the
  // body: about ten buffers here. Any beyond this many go in the next call
  // (a partial write or read is always allowed); 64 is Asio's own limit.
  static constexpr std::size_t kMaxIov = 64;

  template <class BufferSequence>
  static std::size_t fill(iovec (&iov)[kMaxIov], const BufferSequence& buffers) {
    std::size_t n = 0;
    const auto end = boost::asio::buffer_sequence_end(buffers);
    for (auto it = boost::asio::buffer_sequence_begin(buffers); it != end && n < kMaxIov; ++it) {
      const boost::asio::const_buffer b(*it);
      if (b.size() == 0) continue;
      iov[n].iov_base = const_cast<void*>(b.data());  // iovec is shared by reads and writes
      iov[n].iov_len = b.size();
      ++n;
    }
    return n;
  }

  // EAGAIN from a blocking socket means SO_RCVTIMEO/SO_SNDTIMEO expired.
  static boost::system::error_code failure() {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return boost::beast::error::timeout;
    return {errno, boost::system::system_category()};
  }

  int fd_;
};

}  // namespace wsb::rest
