// The sessions a beast or beast-tls server has alive, for the connection
// limit, the sweep (deadlines, idle memory) and stop(). Sessions end on the
// I/O threads; the acceptor, the sweep and stop() see them through this.
// Internal to src/beast; free of Beast.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wsb::beast_stack {

class SessionRegistry;

// What the registry's users call on a session, whatever its stream.
class SessionBase {
 public:
  explicit SessionBase(SessionRegistry& registry) : registry_(registry) {}
  virtual ~SessionBase();
  SessionBase(const SessionBase&) = delete;
  SessionBase& operator=(const SessionBase&) = delete;

  // Closes the session if its current step has outlived its deadline.
  virtual void close_if_overdue(std::int64_t now_ns) = 0;
  // Frees its large buffers if it has waited for a request long enough.
  virtual void release_if_idle(std::int64_t now_ns) = 0;
  // stop(): ends whatever the session waits for; its handlers then see
  // operation_aborted and let it go.
  virtual void close() = 0;

 private:
  SessionRegistry& registry_;
};

class SessionRegistry {
 public:
  // `resume_accept` is called (from the thread that ends a session) when
  // the acceptor paused at the limit may go on.
  SessionRegistry(int max_connections, std::function<void()> resume_accept)
      : max_(max_connections), resume_accept_(std::move(resume_accept)) {}

  // Registers a new session unless the server is stopping.
  bool add(SessionBase* s, std::weak_ptr<SessionBase> weak) {
    const std::lock_guard lock(mutex_);
    if (stopping_) return false;
    sessions_.emplace(s, std::move(weak));
    return true;
  }
  // Deregisters; resumes the acceptor if it waits for a free slot.
  void remove(SessionBase* s) {
    {
      const std::lock_guard lock(mutex_);
      sessions_.erase(s);
      if (!accept_paused_ || stopping_ || full()) return;
      accept_paused_ = false;
    }
    resume_accept_();
  }
  // True if the acceptor may accept now; otherwise it pauses until a
  // session ends.
  bool may_accept() {
    const std::lock_guard lock(mutex_);
    if (stopping_) return false;
    accept_paused_ = full();
    return !accept_paused_;
  }
  // Marks the server stopping and returns the sessions still alive.
  std::vector<std::shared_ptr<SessionBase>> stop() {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    return alive_locked();
  }
  std::vector<std::shared_ptr<SessionBase>> alive() {
    const std::lock_guard lock(mutex_);
    return alive_locked();
  }

 private:
  std::vector<std::shared_ptr<SessionBase>> alive_locked() {
    std::vector<std::shared_ptr<SessionBase>> alive;
    for (auto& [raw, weak] : sessions_)
      if (auto s = weak.lock()) alive.push_back(std::move(s));
    return alive;
  }

  bool full() const { return sessions_.size() >= static_cast<std::size_t>(max_); }

  const int max_;
  const std::function<void()> resume_accept_;
  std::mutex mutex_;
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions_;
  bool accept_paused_ = false;
  bool stopping_ = false;
};

inline SessionBase::~SessionBase() { registry_.remove(this); }

}  // namespace wsb::beast_stack
