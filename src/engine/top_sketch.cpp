// A rule's top keys (top_sketch.hpp), and KeyTag (sluice/engine/outcome.hpp).
#include "top_sketch.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "keys.hpp"

namespace sluice::engine {

void KeyTag::clear(std::uint64_t key_hash) {
  hash = key_hash;
  size = 0;
  set = true;
}

void KeyTag::append(std::string_view piece) {
  const std::size_t n = std::min(piece.size(), TopKeys::kKeyBytes - size);
  std::memcpy(text + size, piece.data(), n);
  size = static_cast<std::uint8_t>(size + n);
}

namespace detail {
namespace {

constexpr core::Nanos kMinute = 60 * core::kNanosPerSecond;

// One key's figures over the window, summed minute by minute.
struct Sum {
  std::string_view text;
  std::uint64_t requests = 0;
  std::uint64_t denied = 0;
};

std::uint64_t ranked(const Sum& s, TopBy by) {
  return by == TopBy::kDenied ? s.denied : s.requests;
}
std::uint64_t unranked(const Sum& s, TopBy by) {
  return by == TopBy::kDenied ? s.requests : s.denied;
}

}  // namespace

bool TopBudget::take() {
  if (used_.fetch_add(1, std::memory_order_relaxed) < most_) return true;
  give();
  return false;
}

TopSlot::~TopSlot() {
  if (TopSketch* s = sketch_.load(std::memory_order_acquire)) {
    delete s;
    budget_->give();
  }
}

TopSketch* TopSlot::take() {
  if (TopSketch* s = sketch_.load(std::memory_order_acquire)) return s;
  if (budget_->spent() || !budget_->take()) {
    refused_.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  auto made = std::make_unique<TopSketch>();
  TopSketch* expected = nullptr;
  if (sketch_.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel)) {
    refused_.store(false, std::memory_order_relaxed);
    return made.release();
  }
  budget_->give();  // another loop made it first
  return expected;
}

int TopSketch::Ranking::find(std::uint64_t h) const {
  for (std::uint32_t i = 0; i < used; ++i) {
    if (hash[i] == h) return static_cast<int>(i);
  }
  return -1;
}

void TopSketch::Ranking::add(const KeyTag& tag, bool ranked_event, bool other_event) {
  if (const int i = find(tag.hash); i >= 0) {
    count[i] += ranked_event ? 1 : 0;
    other[i] += other_event ? 1 : 0;
    return;
  }
  if (!ranked_event) return;
  std::uint32_t i = used;
  std::uint32_t error = 0;
  if (used < kCapacity) {
    ++used;
  } else {
    i = static_cast<std::uint32_t>(std::min_element(count, count + kCapacity) - count);
    error = count[i];
  }
  hash[i] = tag.hash;
  count[i] = error + 1;
  other[i] = other_event ? 1 : 0;
  size[i] = tag.size;
  std::memcpy(text[i], tag.text, tag.size);
}

void TopSketch::note(const KeyTag& tag, bool denied, core::Nanos now) {
  const std::int64_t index = now / kMinute;
  Minute& m = ring_[static_cast<std::size_t>(index % TopKeys::kMinutes)];
  std::lock_guard lock(mutex_);
  if (m.index != index) {
    m.index = index;
    m.requests.used = 0;
    m.denied.used = 0;
  }
  m.requests.add(tag, true, denied);
  m.denied.add(tag, denied, true);
}

std::vector<TopKey> TopSketch::top(TopBy by, std::size_t n, core::Nanos now, bool hashed) const {
  const std::int64_t index = now / kMinute;
  std::unordered_map<std::uint64_t, Sum> sums;
  std::lock_guard lock(mutex_);
  for (const Minute& m : ring_) {
    if (m.index < 0 || m.index > index || m.index <= index - TopKeys::kMinutes) continue;
    // A key held by both rankings takes each figure from the ranking of that figure.
    const Ranking& r = m.requests;
    const Ranking& d = m.denied;
    for (std::uint32_t i = 0; i < r.used; ++i) {
      Sum& s = sums[r.hash[i]];
      s.text = std::string_view(r.text[i], r.size[i]);
      s.requests += r.count[i];
      const int j = d.find(r.hash[i]);
      s.denied += j >= 0 ? d.count[j] : r.other[i];
    }
    for (std::uint32_t i = 0; i < d.used; ++i) {
      if (r.find(d.hash[i]) >= 0) continue;
      Sum& s = sums[d.hash[i]];
      s.text = std::string_view(d.text[i], d.size[i]);
      s.requests += d.other[i];
      s.denied += d.count[i];
    }
  }
  std::vector<std::pair<std::uint64_t, Sum>> ordered;
  for (auto& [h, s] : sums) {
    s.requests = std::max(s.requests, s.denied);  // every denial was a request
    if (ranked(s, by) > 0) ordered.emplace_back(h, s);
  }
  std::sort(ordered.begin(), ordered.end(), [by](const auto& a, const auto& b) {
    if (ranked(a.second, by) != ranked(b.second, by)) {
      return ranked(a.second, by) > ranked(b.second, by);
    }
    if (unranked(a.second, by) != unranked(b.second, by)) {
      return unranked(a.second, by) > unranked(b.second, by);
    }
    return a.second.text < b.second.text;
  });
  std::vector<TopKey> keys;
  for (std::size_t i = 0; i < ordered.size() && i < n; ++i) {
    const auto& [h, s] = ordered[i];
    TopKey k;
    if (hashed) {
      hash_hex(h, k.key);
    } else {
      k.key = std::string(s.text);
    }
    k.requests = s.requests;
    k.denied = s.denied;
    keys.push_back(std::move(k));
  }
  return keys;
}

}  // namespace detail
}  // namespace sluice::engine
