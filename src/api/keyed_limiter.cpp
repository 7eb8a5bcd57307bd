// sluice::KeyedLimiter (sluice/keyed_limiter.hpp): a local::TableLimit, the daemon's own
// bounded per-key table, behind the public types. Each decision locks only its key's slot.
#include "sluice/keyed_limiter.hpp"

#include <variant>

#include "core_conversions.hpp"
#include "limit_impl.hpp"
#include "sluice/local/table_limit.hpp"
#include "sluice/table/key_hash.hpp"

namespace sluice {

class KeyedLimiter::Impl {
 public:
  Impl(Limit limit, local::TableLimit table) : limit_(std::move(limit)), table_(std::move(table)) {}

  core::Decision decide(std::string_view key, core::Nanos now, std::int64_t cost,
                        core::Nanos max_wait) {
    return std::visit([&](auto& t) { return t->decide(key, now, cost, max_wait); }, table_.table);
  }
  table::TableStats stats() const { return local::stats_of(table_); }
  const Limit& limit() const { return limit_; }

 private:
  Limit limit_;
  local::TableLimit table_;
};

namespace {

std::unique_ptr<KeyedLimiter::Impl> make_impl(const Limit& limit, const spec::LimitSpec& spec,
                                              std::size_t memory_bytes) {
  // A table of leases would hold each key's count until released, which this API cannot do.
  if (spec.wait == spec::WaitSupport::kNotTimeBased) {
    throw LimitError(spec.algorithm +
                     " counts leases in flight, which a KeyedLimiter cannot release; use a rate "
                     "algorithm (docs/library.md)");
  }
  auto table = local::make_table_limit(spec, memory_bytes);
  if (!table) throw LimitError(table.error());
  return std::make_unique<KeyedLimiter::Impl>(limit, std::move(table).value());
}

}  // namespace

KeyedLimiter::KeyedLimiter(const Limit& limit, std::size_t memory_bytes)
    : impl_(make_impl(limit, limit.impl_->spec, memory_bytes)) {}

KeyedLimiter::KeyedLimiter(std::string_view spec, std::size_t memory_bytes)
    : KeyedLimiter(Limit(spec), memory_bytes) {}

KeyedLimiter::KeyedLimiter(KeyedLimiter&&) noexcept = default;
KeyedLimiter& KeyedLimiter::operator=(KeyedLimiter&&) noexcept = default;
KeyedLimiter::~KeyedLimiter() = default;

bool KeyedLimiter::try_acquire(std::string_view key, std::int64_t cost, Time now) {
  return decide(key, cost, {}, now).allowed;
}

std::optional<Duration> KeyedLimiter::reserve(std::string_view key, std::int64_t cost,
                                              Duration max_wait, Time now) {
  return api::reservation(decide(key, cost, max_wait, now));
}

Decision KeyedLimiter::decide(std::string_view key, std::int64_t cost, Duration max_wait,
                              Time now) {
  api::check_cost(cost);
  return api::to_public(impl_->decide(key, api::to_nanos(now), cost, api::to_max_wait(max_wait)));
}

KeyedLimiter::Stats KeyedLimiter::stats() const {
  const table::TableStats s = impl_->stats();
  return Stats{s.keys, s.capacity, s.evictions, s.idle_drops, s.memory_bytes};
}

const Limit& KeyedLimiter::limit() const { return impl_->limit(); }

}  // namespace sluice
