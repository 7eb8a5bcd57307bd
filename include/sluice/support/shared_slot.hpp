// SharedSlot<T>: one shared_ptr<const T> that threads read and swap, under a mutex.
// Instead of std::atomic<shared_ptr>: libstdc++ 12's load() ends its lock with a relaxed store
// (a race TSan reports, and weakly ordered CPUs may act on); a mutex says what it does.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

namespace sluice::support {

template <class T>
class SharedSlot {
 public:
  explicit SharedSlot(std::shared_ptr<const T> value = nullptr) : value_(std::move(value)) {}

  std::shared_ptr<const T> load() const {
    std::lock_guard lock(mutex_);
    return value_;
  }

  // The previous value is returned, so that its last owner frees it outside the lock.
  std::shared_ptr<const T> exchange(std::shared_ptr<const T> value) {
    std::lock_guard lock(mutex_);
    return std::exchange(value_, std::move(value));
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const T> value_;
};

}  // namespace sluice::support
