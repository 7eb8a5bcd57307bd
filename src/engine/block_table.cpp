// BlockTable (block_table.hpp).
#include "block_table.hpp"

#include <algorithm>
#include <limits>

namespace sluice::engine::detail {
namespace {

// Longest left first, then by text (and hash, for keys cut alike): the listing's order.
bool before(const BlockTable::Listed& a, const BlockTable::Listed& b) {
  if (a.until != b.until) return a.until > b.until;
  if (a.text != b.text) return a.text < b.text;
  return a.hash.bucket < b.hash.bucket;
}

}  // namespace

std::string_view cut_key(std::string_view key, std::size_t max) {
  if (key.size() <= max) return key;
  std::size_t n = max;
  for (int i = 0; i < 3 && n > 0 && (static_cast<unsigned char>(key[n]) & 0xC0) == 0x80; ++i) --n;
  return key.substr(0, n);
}

std::size_t BlockTable::bytes_of(const Text& t) {
  const std::size_t inline_capacity = std::string().capacity();
  const std::size_t text = t.text.capacity() > inline_capacity ? t.text.capacity() + 1 : 0;
  return kEntryBytes + (text > 0 ? malloc_bytes(text) : 0);
}

void BlockTable::drop(Stripe& s, Ends::iterator it) {
  if (const auto t = s.texts.find(it->first); t != s.texts.end()) {
    bytes_.fetch_sub(bytes_of(t->second), std::memory_order_relaxed);
    s.texts.erase(t);
  }
  s.until.erase(it);
}

std::optional<core::Nanos> BlockTable::blocked_until(const table::KeyHash& h, core::Nanos now) {
  Stripe& s = stripe(h);
  std::lock_guard lock(s.mutex);
  const auto it = s.until.find(h);
  if (it == s.until.end()) return std::nullopt;
  if (it->second <= now) {
    drop(s, it);
    return std::nullopt;
  }
  return it->second;
}

void BlockTable::block(const table::KeyHash& h, std::string_view key, core::Nanos until,
                       core::Nanos now) {
  Stripe& s = stripe(h);
  std::lock_guard lock(s.mutex);
  if (const auto it = s.until.find(h); it != s.until.end()) {
    it->second = std::max(it->second, until);
    return;
  }
  if (s.until.size() >= kCapacity / kStripes) {
    for (auto it = s.until.begin(); it != s.until.end();) {
      const auto next = std::next(it);
      if (it->second <= now) drop(s, it);
      it = next;
    }
  }
  if (s.until.size() >= kCapacity / kStripes) {
    drop(s, std::min_element(s.until.begin(), s.until.end(),
                             [](const auto& a, const auto& b) { return a.second < b.second; }));
  }
  s.until.emplace(h, until);
  const auto size = static_cast<std::uint32_t>(
      std::min<std::size_t>(key.size(), std::numeric_limits<std::uint32_t>::max()));
  const auto text = s.texts.insert_or_assign(h, Text{std::string(cut_key(key, kKeyBytes)), size});
  bytes_.fetch_add(bytes_of(text.first->second), std::memory_order_relaxed);
}

bool BlockTable::unblock(const table::KeyHash& h) {
  Stripe& s = stripe(h);
  std::lock_guard lock(s.mutex);
  const auto it = s.until.find(h);
  if (it == s.until.end()) return false;
  drop(s, it);
  return true;
}

std::size_t BlockTable::size() const {
  std::size_t n = 0;
  for (const Stripe& s : stripes_) {
    std::lock_guard lock(s.mutex);
    n += s.until.size();
  }
  return n;
}

std::vector<BlockTable::Listed> BlockTable::list(std::size_t n, core::Nanos now,
                                                 std::size_t& live) {
  live = 0;
  std::vector<Listed> out;
  std::vector<Listed> mine;
  for (Stripe& s : stripes_) {
    mine.clear();
    {
      std::lock_guard lock(s.mutex);
      for (auto it = s.until.begin(); it != s.until.end();) {
        const auto next = std::next(it);
        if (it->second <= now) {
          drop(s, it);
        } else {
          // The text is copied under the lock; a stripe holds at most 1,024 of them.
          const Text& t = s.texts.at(it->first);
          mine.push_back({it->first, it->second, t.text, t.key_size});
        }
        it = next;
      }
    }
    live += mine.size();
    // This stripe's first n are all it can give to the first n overall.
    const std::size_t keep = std::min(n, mine.size());
    std::partial_sort(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(keep), mine.end(),
                      before);
    std::move(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(keep),
              std::back_inserter(out));
  }
  const std::size_t keep = std::min(n, out.size());
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(),
                    before);
  out.resize(keep);
  return out;
}

}  // namespace sluice::engine::detail
