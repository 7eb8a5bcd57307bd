// Header fields without a malloc per field: Beast's basic_fields allocates every field on its
// own, so a request and its response cost a dozen allocations before any work is done. The
// gateway parses each head into an Arena that the session owns and resets between messages;
// freeing a field is a no-op, and a 4 KiB block holds a typical head whole.
#pragma once

#include <boost/beast/http/fields.hpp>
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace sluice::server::gateway {

class Arena {
 public:
  static constexpr std::size_t kInline = 4096;

  void* allocate(std::size_t n, std::size_t align) {
    const std::size_t at = (used_ + align - 1) & ~(align - 1);
    if (at + n <= kInline) {
      used_ = at + n;
      return buf_ + at;
    }
    // Larger heads (up to the header limit) spill into blocks of their own.
    overflow_.push_back(std::make_unique<std::byte[]>(n));
    return overflow_.back().get();
  }

  // Only when nothing allocated here is in use any more (the parser was destroyed).
  void reset() {
    used_ = 0;
    overflow_.clear();
  }

 private:
  alignas(std::max_align_t) std::byte buf_[kInline];
  std::size_t used_ = 0;
  std::vector<std::unique_ptr<std::byte[]>> overflow_;
};

// An allocator over an Arena; default-constructed (no arena) it is plain new/delete.
template <class T>
struct ArenaAllocator {
  using value_type = T;

  ArenaAllocator() noexcept = default;
  explicit ArenaAllocator(Arena& a) noexcept : arena(&a) {}
  template <class U>
  ArenaAllocator(const ArenaAllocator<U>& other) noexcept : arena(other.arena) {}  // NOLINT

  T* allocate(std::size_t n) {
    if (arena == nullptr) return static_cast<T*>(::operator new(n * sizeof(T)));
    return static_cast<T*>(arena->allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept {
    if (arena == nullptr) ::operator delete(p);
  }

  template <class U>
  friend bool operator==(const ArenaAllocator& a, const ArenaAllocator<U>& b) {
    return a.arena == b.arena;
  }

  Arena* arena = nullptr;
};

using Fields = boost::beast::http::basic_fields<ArenaAllocator<char>>;

}  // namespace sluice::server::gateway
