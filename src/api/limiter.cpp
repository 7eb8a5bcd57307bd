// sluice::Limiter (sluice/limiter.hpp): one state of the spec's algorithm behind a virtual
// decide(). One-word states (gcra, queue) live in core::SharedLimiter's atomic and decide
// lock-free; larger ones (a token bucket's double and time, a sliding log) under a mutex,
// which costs an uncontended lock per decision and keeps every algorithm's exact arithmetic.
#include "sluice/limiter.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <thread>
#include <type_traits>

#include "core_conversions.hpp"
#include "limit_impl.hpp"
#include "sluice/core/algorithm.hpp"
#include "sluice/core/shared_limiter.hpp"

namespace sluice {

class Limiter::Impl {
 public:
  explicit Impl(Limit limit) : limit_(std::move(limit)) {}
  virtual ~Impl() = default;
  virtual core::Decision decide(core::Nanos now, std::int64_t cost, core::Nanos max_wait) = 0;
  const Limit& limit() const { return limit_; }

 private:
  Limit limit_;
};

namespace {

template <class A>
class LockFree final : public Limiter::Impl {
 public:
  LockFree(Limit limit, const typename A::Params& p, core::Nanos start)
      : Impl(std::move(limit)), shared_(p, start) {}
  core::Decision decide(core::Nanos now, std::int64_t cost, core::Nanos max_wait) override {
    return shared_.decide(now, cost, max_wait);
  }

 private:
  core::SharedLimiter<A> shared_;
};

template <class A>
class Locked final : public Limiter::Impl {
 public:
  Locked(Limit limit, const typename A::Params& p, core::Nanos start)
      : Impl(std::move(limit)), params_(p), state_(A::start(p, start)) {}
  core::Decision decide(core::Nanos now, std::int64_t cost, core::Nanos max_wait) override {
    std::lock_guard lock(mutex_);
    latest_ = std::max(latest_, now);  // a caller's time read before the lock may be older
    const auto step = A::decide(params_, state_, latest_, cost, max_wait);
    if (step.decision.allowed || step.commit_on_denial) core::commit<A>(params_, state_, step);
    return step.decision;
  }

 private:
  const typename A::Params params_;
  std::mutex mutex_;
  typename A::State state_;
  core::Nanos latest_ = std::numeric_limits<core::Nanos>::min();
};

template <class A>
std::unique_ptr<Limiter::Impl> make_for(Limit limit, const typename A::Params& p,
                                        core::Nanos start) {
  using State = typename A::State;
  if constexpr (sizeof(State) == 8 && std::is_trivially_copyable_v<State>) {
    return std::make_unique<LockFree<A>>(std::move(limit), p, start);
  } else {
    return std::make_unique<Locked<A>>(std::move(limit), p, start);
  }
}

template <class... A>
struct Algorithms {};

// Every algorithm but concurrency, whose decisions are leases that need a release.
using Supported = Algorithms<core::TokenBucket, core::Gcra, core::LeakyBucket, core::FixedWindow,
                             core::SlidingLog, core::SlidingWindow, core::SmoothBursty,
                             core::SmoothWarmup, core::UniformQueue>;

template <class... A>
std::unique_ptr<Limiter::Impl> make_impl(const Limit& limit, const spec::AlgorithmParams& params,
                                         core::Nanos start, Algorithms<A...>) {
  std::unique_ptr<Limiter::Impl> out;
  (void)((std::holds_alternative<typename A::Params>(params) &&
          (out = make_for<A>(limit, std::get<typename A::Params>(params), start), true)) ||
         ...);
  if (!out) {
    throw LimitError(limit.algorithm() +
                     " counts leases in flight, which a Limiter cannot release; use a rate "
                     "algorithm (docs/library.md)");
  }
  return out;
}

}  // namespace

Limiter::Limiter(const Limit& limit, Time start)
    : impl_(make_impl(limit, limit.impl_->spec.params, api::to_nanos(start), Supported{})) {}

Limiter::Limiter(std::string_view spec, Time start) : Limiter(Limit(spec), start) {}

Limiter::Limiter(Limiter&&) noexcept = default;
Limiter& Limiter::operator=(Limiter&&) noexcept = default;
Limiter::~Limiter() = default;

bool Limiter::try_acquire(std::int64_t cost, Time now) { return decide(cost, {}, now).allowed; }

std::optional<Duration> Limiter::reserve(std::int64_t cost, Duration max_wait, Time now) {
  return api::reservation(decide(cost, max_wait, now));
}

Duration Limiter::acquire(std::int64_t cost) {
  Duration slept{0};
  for (;;) {
    const Decision d = decide(cost, kForever, Clock::now());
    if (d.allowed) {
      std::this_thread::sleep_for(d.wait);
      return slept + d.wait;
    }
    // Windows admit now or never: a denial names the wait until the next chance.
    if (d.retry_after == kNever) {
      throw LimitError("cost " + std::to_string(cost) + " can never be admitted by " +
                       limit().spec());
    }
    std::this_thread::sleep_for(d.retry_after);
    slept += d.retry_after;
  }
}

Decision Limiter::decide(std::int64_t cost, Duration max_wait, Time now) {
  api::check_cost(cost);
  return api::to_public(impl_->decide(api::to_nanos(now), cost, api::to_max_wait(max_wait)));
}

const Limit& Limiter::limit() const { return impl_->limit(); }

}  // namespace sluice
