// LeaseBook and the Redis lease tokens (lease_book.hpp).
#include "lease_book.hpp"

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
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

std::optional<std::string> LeaseBook::keep(local::Lease lease, std::string_view owner,
                                           std::int64_t cap, core::Nanos now, core::Nanos ttl) {
  std::lock_guard lock(mutex_);
  auto held = held_.find(std::string(owner));
  if (held == held_.end()) held = held_.emplace(std::string(owner), 0).first;
  if (held->second >= cap) return std::nullopt;  // `lease` gives its permit back here
  std::uint64_t id = ids_();
  while (id == 0 || kept_.contains(id)) id = ids_();
  const core::Nanos expires = now + ttl;
  kept_.emplace(id, Kept{std::move(lease), expires, std::string(owner)});
  by_expiry_.emplace(expires, id);
  ++held->second;
  peak_ = std::max(peak_, kept_.size());
  return fmt::format("l-{:016x}", id);
}

void LeaseBook::forget(std::unordered_map<std::uint64_t, Kept>::iterator it) {
  if (auto h = held_.find(it->second.owner); h != held_.end() && --h->second <= 0) held_.erase(h);
  kept_.erase(it);  // the Lease gives its permit back
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
  forget(it);
  give_memory_back();
  return true;
}

void LeaseBook::expire(core::Nanos now) {
  std::lock_guard lock(mutex_);
  while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
    if (auto it = kept_.find(by_expiry_.begin()->second); it != kept_.end()) forget(it);
    by_expiry_.erase(by_expiry_.begin());
  }
  give_memory_back();
}

// A hash table keeps its buckets however few entries are left, and glibc keeps freed nodes in
// its arenas: after a burst of permits has gone (at most a quarter of the peak left, and the
// peak worth it), the table is made anew at its size and the free memory returned.
void LeaseBook::give_memory_back() {
  constexpr std::size_t kWorthIt = 4096;
  if (peak_ < kWorthIt || kept_.size() > peak_ / 4) return;
  std::unordered_map<std::uint64_t, Kept> smaller;
  smaller.reserve(kept_.size());
  for (auto& [id, k] : kept_) smaller.emplace(id, std::move(k));
  kept_ = std::move(smaller);
  peak_ = kept_.size();
  malloc_trim(0);
}

std::size_t LeaseBook::size() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

std::vector<std::pair<std::string, std::int64_t>> LeaseBook::held() const {
  std::lock_guard lock(mutex_);
  return {held_.begin(), held_.end()};
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
