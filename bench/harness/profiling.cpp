#include "harness/profiling.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace wsb {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(std::string(PerfControl::kEnvironment) + ": " + what + ": " +
                           std::strerror(errno));
}

}  // namespace

void CountedCall::let_other_threads_block() {
  // Under valgrind a server's work between its reply and its next blocking
  // read is a few hundred microseconds at most.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

PerfControl::PerfControl() {
  const char* spec = std::getenv(kEnvironment);
  if (spec == nullptr || *spec == '\0') return;
  const std::string text(spec);
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    errno = EINVAL;
    fail("expected CONTROL_FIFO:ACK_FIFO, got '" + text + "'");
  }
  const std::string control = text.substr(0, colon);
  const std::string ack = text.substr(colon + 1);
  // perf holds both fifos open read-write, so neither open blocks.
  control_fd_ = ::open(control.c_str(), O_WRONLY | O_CLOEXEC);
  if (control_fd_ < 0) fail("cannot open " + control);
  ack_fd_ = ::open(ack.c_str(), O_RDONLY | O_CLOEXEC);
  if (ack_fd_ < 0) {
    const int err = errno;
    ::close(control_fd_);
    control_fd_ = -1;
    errno = err;
    fail("cannot open " + ack);
  }
}

PerfControl::~PerfControl() {
  if (control_fd_ >= 0) ::close(control_fd_);
  if (ack_fd_ >= 0) ::close(ack_fd_);
}

void PerfControl::command(const std::string& what) {
  const std::string line = what + "\n";
  if (::write(control_fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    fail("cannot send '" + what + "' to perf");
  // perf answers each command with "ack\n".
  char c = 0;
  do {
    const ssize_t got = ::read(ack_fd_, &c, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got != 1) {
      if (got == 0) errno = EPIPE;
      fail("no acknowledgement from perf for '" + what + "'");
    }
  } while (c != '\n');
}

PerfControl& perf_control() {
  static PerfControl control;
  return control;
}

}  // namespace wsb
