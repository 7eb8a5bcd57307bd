// LeaseBook and the Redis lease tokens (lease_book.hpp).
#include "lease_book.hpp"

#include <fmt/format.h>

#include <charconv>

namespace sluice::engine::detail {
namespace {

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

bool unhex(std::string_view text, std::string& out) {
  if (text.size() % 2 != 0) return false;
  out.clear();
  for (std::size_t i = 0; i < text.size(); i += 2) {
    unsigned v = 0;
    const auto r = std::from_chars(text.data() + i, text.data() + i + 2, v, 16);
    if (r.ec != std::errc() || r.ptr != text.data() + i + 2) return false;
    out += static_cast<char>(v);
  }
  return true;
}

}  // namespace

LeaseBook::LeaseBook() : ids_(std::random_device{}()) {}

std::string LeaseBook::keep(local::Lease lease, core::Nanos now, core::Nanos ttl) {
  std::lock_guard lock(mutex_);
  std::uint64_t id = ids_();
  while (id == 0 || kept_.contains(id)) id = ids_();
  const core::Nanos expires = now + ttl;
  kept_.emplace(id, Kept{std::move(lease), expires});
  by_expiry_.emplace(expires, id);
  return fmt::format("l-{:016x}", id);
}

bool LeaseBook::release(std::string_view token) {
  if (token.size() != 18 || !token.starts_with("l-")) return false;
  std::uint64_t id = 0;
  const auto r = std::from_chars(token.data() + 2, token.data() + token.size(), id, 16);
  if (r.ec != std::errc() || r.ptr != token.data() + token.size()) return false;
  std::lock_guard lock(mutex_);
  const auto it = kept_.find(id);
  if (it == kept_.end()) return false;
  const auto [first, last] = by_expiry_.equal_range(it->second.expires);
  for (auto e = first; e != last; ++e) {
    if (e->second == id) {
      by_expiry_.erase(e);
      break;
    }
  }
  kept_.erase(it);  // the Lease gives its permit back
  return true;
}

void LeaseBook::expire(core::Nanos now) {
  std::lock_guard lock(mutex_);
  while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
    kept_.erase(by_expiry_.begin()->second);
    by_expiry_.erase(by_expiry_.begin());
  }
}

std::size_t LeaseBook::size() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

std::string remote_lease_token(std::int64_t id, std::string_view rule, std::string_view key) {
  return fmt::format("r-{}-{}-{}", id, hex(rule), hex(key));
}

bool parse_remote_lease_token(std::string_view token, RemoteLeaseToken& out) {
  if (!token.starts_with("r-")) return false;
  token.remove_prefix(2);
  const auto a = token.find('-');
  if (a == std::string_view::npos) return false;
  const auto b = token.find('-', a + 1);
  if (b == std::string_view::npos) return false;
  const auto r = std::from_chars(token.data(), token.data() + a, out.id);
  if (r.ec != std::errc() || r.ptr != token.data() + a || out.id <= 0) return false;
  return unhex(token.substr(a + 1, b - a - 1), out.rule) && !out.rule.empty() &&
         unhex(token.substr(b + 1), out.key) && !out.key.empty();
}

}  // namespace sluice::engine::detail
