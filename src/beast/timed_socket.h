// A blocking socket stream with a kernel-enforced idle timeout
// (SO_RCVTIMEO/SO_SNDTIMEO) for Beast's synchronous read and write: one
// system call per read or write, where Asio's own timeout needs a poll per
// wait (docs/servers/stacks/beast.md). Include it only from the Beast units.
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

namespace wsb::beast_stack {

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
    return transfer(
        buffers, ec, [](int fd, msghdr* msg) { return ::recvmsg(fd, msg, 0); }, true);
  }
  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers) {
    return or_throw([&](boost::system::error_code& ec) { return read_some(buffers, ec); });
  }

  // SyncWriteStream. MSG_NOSIGNAL: a peer that has gone away is an EPIPE
  // error, not a SIGPIPE that kills the process.
  template <class ConstBufferSequence>
  std::size_t write_some(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
    return transfer(
        buffers, ec, [](int fd, msghdr* msg) { return ::sendmsg(fd, msg, MSG_NOSIGNAL); }, false);
  }
  template <class ConstBufferSequence>
  std::size_t write_some(const ConstBufferSequence& buffers) {
    return or_throw([&](boost::system::error_code& ec) { return write_some(buffers, ec); });
  }

 private:
  // Beast hands over the start line, one buffer per header field, and the
  // body: about ten buffers here. Any beyond this many go in the next call
  // (a partial write or read is always allowed); 64 is Asio's own limit.
  static constexpr std::size_t kMaxIov = 64;

  // One recvmsg or sendmsg over the buffers, retried on EINTR.
  template <class BufferSequence, class Syscall>
  std::size_t transfer(const BufferSequence& buffers, boost::system::error_code& ec,
                       Syscall syscall, bool reading) {
    iovec iov[kMaxIov];
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = fill(iov, buffers);
    ec = {};
    if (msg.msg_iovlen == 0) return 0;
    for (;;) {
      const ssize_t n = syscall(fd_, &msg);
      if (n == 0 && reading) {
        ec = boost::asio::error::eof;
        return 0;
      }
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno != EINTR) {
        ec = failure();
        return 0;
      }
    }
  }

  template <class F>
  static std::size_t or_throw(F&& call) {
    boost::system::error_code ec;
    const std::size_t n = call(ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

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

}  // namespace wsb::beast_stack
