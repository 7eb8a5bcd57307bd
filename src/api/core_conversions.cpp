// Conversions between the public API's types and the core's (core_conversions.hpp).
#include "core_conversions.hpp"

#include <stdexcept>
#include <string>

namespace sluice::api {

core::Nanos to_nanos(Time t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

core::Nanos to_max_wait(Duration max_wait) {
  return max_wait.count() < 0 ? 0 : static_cast<core::Nanos>(max_wait.count());
}

void check_cost(std::int64_t cost) {
  if (cost < 1) {
    throw std::invalid_argument("sluice: cost " + std::to_string(cost) + " is below 1");
  }
}

Decision to_public(const core::Decision& d) {
  Decision out;
  out.allowed = d.allowed && !d.overflow;
  out.wait = out.allowed ? Duration(d.delay) : Duration::zero();
  out.remaining = d.remaining;
  if (!out.allowed) {
    out.retry_after =
        d.overflow || d.retry_after == core::kNever ? kNever : Duration(d.retry_after);
  }
  out.reset_after = Duration(d.reset_after);
  out.limit = d.limit;
  return out;
}

}  // namespace sluice::api
