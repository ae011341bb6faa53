// Storage for one message's header fields at a time, as Beast's
// http_server_fast example keeps them (its fields_alloc): Beast allocates
// every field of a parsed header apart, and a connection parses a header
// per message. Here a message's fields take bump allocations from a block
// the connection owns, reused whole once the message's last field is
// freed; a header larger than the block takes the rest from the heap.
// Include it only from the Beast units.
#pragma once

#include <cstddef>
#include <functional>
#include <new>

namespace wsb::beast_stack {

class FieldArena {
 public:
  // Room for the fields of any header the suite's clients and servers send
  // (a few hundred bytes) many times over.
  static constexpr std::size_t kBytes = 4096;

  void* allocate(std::size_t bytes, std::size_t align) {
    const std::size_t at = (used_ + align - 1) & ~(align - 1);
    if (align > alignof(std::max_align_t) || at + bytes > kBytes) return ::operator new(bytes);
    used_ = at + bytes;
    ++live_;
    return block_ + at;
  }

  void deallocate(void* p) noexcept {
    const std::less_equal<const void*> at_or_before;
    if (!at_or_before(block_, p) || at_or_before(block_ + kBytes, p)) {
      ::operator delete(p);  // unsized: clang before 19 lacks sized delete by default
      return;
    }
    if (--live_ == 0) used_ = 0;
  }

 private:
  alignas(std::max_align_t) char block_[kBytes];
  std::size_t used_ = 0;  // bytes of block_ handed out since it was last empty
  std::size_t live_ = 0;  // allocations in block_ not yet freed
};

// The allocator Beast's basic_fields takes, over a FieldArena.
template <class T>
class ArenaAllocator {
 public:
  using value_type = T;

  explicit ArenaAllocator(FieldArena& arena) noexcept : arena_(&arena) {}
  template <class U>
  ArenaAllocator(const ArenaAllocator<U>& other) noexcept : arena_(other.arena()) {}

  T* allocate(std::size_t n) {
    return static_cast<T*>(arena_->allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept { arena_->deallocate(p); }

  FieldArena* arena() const noexcept { return arena_; }

  template <class U>
  bool operator==(const ArenaAllocator<U>& other) const noexcept {
    return arena_ == other.arena();
  }

 private:
  FieldArena* arena_;
};

}  // namespace wsb::beast_stack
