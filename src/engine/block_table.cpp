// BlockTable (block_table.hpp).
#include "block_table.hpp"

#include <algorithm>

namespace sluice::engine::detail {

std::optional<core::Nanos> BlockTable::blocked_until(const table::KeyHash& h, core::Nanos now) {
  Stripe& s = stripe(h);
  std::lock_guard lock(s.mutex);
  const auto it = s.until.find(h);
  if (it == s.until.end()) return std::nullopt;
  if (it->second <= now) {
    s.until.erase(it);
    return std::nullopt;
  }
  return it->second;
}

void BlockTable::block(const table::KeyHash& h, core::Nanos until, core::Nanos now) {
  Stripe& s = stripe(h);
  std::lock_guard lock(s.mutex);
  if (const auto it = s.until.find(h); it != s.until.end()) {
    it->second = std::max(it->second, until);
    return;
  }
  if (s.until.size() >= kCapacity / kStripes) {
    std::erase_if(s.until, [now](const auto& e) { return e.second <= now; });
  }
  if (s.until.size() >= kCapacity / kStripes) {
    s.until.erase(
        std::min_element(s.until.begin(), s.until.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; }));
  }
  s.until.emplace(h, until);
}

bool BlockTable::unblock(const table::KeyHash& h) {
  Stripe& s = stripe(h);
  std::lock_guard lock(s.mutex);
  return s.until.erase(h) > 0;
}

std::size_t BlockTable::size() const {
  std::size_t n = 0;
  for (const Stripe& s : stripes_) {
    std::lock_guard lock(s.mutex);
    n += s.until.size();
  }
  return n;
}

}  // namespace sluice::engine::detail
