// A shared concurrency limit with leases released by RAII: a Lease returns its permits when it
// is destroyed, on every path (return, exception, cancellation), so none can leak.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <utility>

#include "sluice/core/concurrency.hpp"

namespace sluice::core {

// Thread-safe; lock-free (one CAS per acquire, one fetch_sub per release).
class ConcurrencyLimiter {
 public:
  class Lease {
   public:
    Lease(Lease&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)), cost_(other.cost_) {}
    Lease& operator=(Lease&& other) noexcept {
      if (this != &other) {
        release();
        owner_ = std::exchange(other.owner_, nullptr);
        cost_ = other.cost_;
      }
      return *this;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { release(); }

    // Gives the permits back early; the destructor then does nothing.
    void release() {
      if (owner_ != nullptr) std::exchange(owner_, nullptr)->give_back(cost_);
    }

   private:
    friend class ConcurrencyLimiter;
    Lease(ConcurrencyLimiter* owner, std::int64_t cost) : owner_(owner), cost_(cost) {}
    ConcurrencyLimiter* owner_;
    std::int64_t cost_;
  };

  explicit ConcurrencyLimiter(std::int64_t limit) : params_{limit} {}

  // A lease when in_flight + cost <= limit, else nothing (and `why` says how full it is).
  std::optional<Lease> try_acquire(std::int64_t cost = 1, Decision* why = nullptr) {
    std::int64_t seen = in_flight_.load(std::memory_order_acquire);
    for (;;) {
      const auto step = Concurrency::acquire(params_, Concurrency::State{seen}, cost);
      if (why != nullptr) *why = step.decision;
      if (!step.decision.allowed) return std::nullopt;
      if (in_flight_.compare_exchange_weak(seen, step.next.in_flight, std::memory_order_acq_rel,
                                           std::memory_order_acquire)) {
        return Lease(this, cost);
      }
    }
  }

  std::int64_t in_flight() const { return in_flight_.load(std::memory_order_acquire); }
  std::int64_t limit() const { return params_.limit; }

 private:
  void give_back(std::int64_t cost) { in_flight_.fetch_sub(cost, std::memory_order_acq_rel); }

  Concurrency::Params params_;
  std::atomic<std::int64_t> in_flight_{0};
};

}  // namespace sluice::core
