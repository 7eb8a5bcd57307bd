// ScriptBatch and the reply reader (sluice/backend/redis/script_codec.hpp).
#include "sluice/backend/redis/script_codec.hpp"

#include <fmt/format.h>

#include <functional>
#include <string_view>
#include <type_traits>

#include "sluice/local/combined_decision.hpp"

namespace sluice::backend::redis {
namespace {

constexpr int kFieldsPerLimit = 8;

// A saturated duration leaves the script as the largest double below 2^63; it means forever.
constexpr long long kSaturatedDouble = 9223372036854774784LL;
core::Nanos duration(long long v) { return v >= kSaturatedDouble ? core::kForever : v; }

// Doubles as %.17g (round-trips through Lua's tonumber), integers as plain decimal.
class Fields {
 public:
  void add(double v) { out_.push_back(fmt::format("{:.17g}", v)); }
  void add(std::int64_t v) { out_.push_back(std::to_string(v)); }
  void add(bool v) { out_.emplace_back(v ? "1" : "0"); }
  void add(const core::Rate& r) {
    add(r.count);
    add(r.period);
  }
  std::vector<std::string> take() { return std::move(out_); }

 private:
  std::vector<std::string> out_;
};

std::vector<std::string> params_of(const core::TokenBucket::Params& p, core::Nanos) {
  Fields f;
  f.add(p.rate);
  f.add(p.burst);
  f.add(p.per_second);
  f.add(p.nanos_per_token);
  return f.take();
}
std::vector<std::string> params_of(const core::Gcra::Params& p, core::Nanos) {
  Fields f;
  f.add(p.rate);
  f.add(p.burst);
  f.add(p.interval);
  f.add(p.tolerance);
  f.add(p.interval_us);
  f.add(p.per_interval_us);
  return f.take();
}
std::vector<std::string> params_of(const core::LeakyBucket::Params& p, core::Nanos) {
  Fields f;
  f.add(p.rate);
  f.add(p.rate_milli);
  f.add(p.burst);
  // nodelay's sentinel (INT64_MAX / 1000) is beyond a double's exact integers: sent as -1.
  f.add(p.delay == core::LeakyBucket::kNoDelay ? std::int64_t{-1} : p.delay);
  return f.take();
}
template <class P>
requires std::is_same_v<P, core::FixedWindow::Params> ||
    std::is_same_v<P, core::SlidingLog::Params> || std::is_same_v<P, core::SlidingWindow::Params>
        std::vector<std::string> params_of(const P& p, core::Nanos) {
  Fields f;
  f.add(p.limit);
  f.add(p.window);
  return f.take();
}
std::vector<std::string> params_of(const core::SmoothBursty::Params& p, core::Nanos) {
  Fields f;
  f.add(p.rate);
  f.add(p.max_burst);
  f.add(p.permits_per_second);
  f.add(p.stable_interval_micros);
  f.add(p.max_permits);
  return f.take();
}
std::vector<std::string> params_of(const core::SmoothWarmup::Params& p, core::Nanos) {
  Fields f;
  f.add(p.rate);
  f.add(p.warmup);
  f.add(p.cold_factor);
  f.add(p.warmup_micros);
  f.add(p.permits_per_second);
  f.add(p.stable_interval_micros);
  f.add(p.threshold_permits);
  f.add(p.max_permits);
  f.add(p.slope);
  return f.take();
}
std::vector<std::string> params_of(const core::UniformQueue::Params& p, core::Nanos) {
  Fields f;
  f.add(p.rate);
  f.add(p.max_wait);
  f.add(p.count);
  f.add(p.max_queueing_ms);
  f.add(p.use_nanos);
  return f.take();
}
std::vector<std::string> params_of(const core::Concurrency::Params& p, core::Nanos lease_ttl) {
  Fields f;
  f.add(p.limit);
  f.add(lease_ttl);
  return f.take();
}

// A calendar window's time zone as a number the script compares (a change of zone starts a
// new window, FixedWindow::retune): FNV-1a of the zone's name from the canonical text, cut to
// 48 bits so a double holds it exactly.
std::string zone_number(const std::string& canonical) {
  constexpr std::string_view kField = "timezone=";
  const auto at = canonical.find(kField);
  std::string_view zone;
  if (at != std::string::npos) {
    zone = std::string_view(canonical).substr(at + kField.size());
    zone = zone.substr(0, zone.find(','));
  }
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : zone) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return std::to_string(h & ((std::uint64_t{1} << 48) - 1));
}

// Durations beyond the script's exact range: "forever" is -1 on the wire.
std::string wire_wait(core::Nanos max_wait) {
  if (max_wait == core::kForever || max_wait >= kScriptExact) return "-1";
  return std::to_string(max_wait);
}

}  // namespace

ScriptLimit script_limit(const spec::LimitSpec& spec, core::Nanos lease_ttl) {
  ScriptLimit out{spec.algorithm,
                  std::visit([&](const auto& p) { return params_of(p, lease_ttl); }, spec.params)};
  if (spec::calendar_aligned(spec)) out.params.push_back(zone_number(spec.canonical));
  return out;
}

CalendarBounds calendar_bounds(const core::Calendar& calendar, core::Nanos unix_now) {
  const core::CalendarWindow now = calendar.window_at(unix_now);
  const core::CalendarWindow before = calendar.window_at(now.start - 1);
  const core::CalendarWindow next = calendar.window_at(now.end);
  // Windows start on whole seconds (zone offsets are whole seconds).
  return {before.start / core::kNanosPerSecond, now.start / core::kNanosPerSecond,
          now.end / core::kNanosPerSecond, next.end / core::kNanosPerSecond};
}

ScriptLimit with_calendar_bounds(ScriptLimit limit, const CalendarBounds& bounds) {
  limit.calendar.clear();
  for (std::int64_t b : bounds) limit.calendar.push_back(std::to_string(b));
  return limit;
}

ScriptBatch::ScriptBatch(ScriptTime time) {
  head_.emplace_back("2");
  if (time.redis_time) {
    head_.emplace_back("");
    head_.emplace_back("0");
  } else {
    head_.push_back(std::to_string(time.now / core::kNanosPerSecond));
    head_.push_back(std::to_string(time.now % core::kNanosPerSecond));
  }
}

int ScriptBatch::add_limit(const ScriptLimit& limit) {
  limits_.push_back(limit.algorithm);
  std::string flags = limit.count_denied ? "d" : "";
  if (limit.block_ms > 0) flags += "b" + std::to_string(limit.block_ms);
  if (limit.cost > 0) flags += "r" + std::to_string(limit.cost);
  if (!limit.calendar.empty()) flags += "c";
  if (limit.proportional) flags += "p";
  limits_.push_back(std::move(flags));
  limits_.push_back(std::to_string(limit.params.size()));
  limits_.insert(limits_.end(), limit.params.begin(), limit.params.end());
  // The sections the flags announce, in the order the script reads them.
  limits_.insert(limits_.end(), limit.calendar.begin(), limit.calendar.end());
  if (limit.proportional) {
    limits_.push_back(std::to_string(limit.replaced.size()));
    limits_.insert(limits_.end(), limit.replaced.begin(), limit.replaced.end());
  }
  return ++limit_count_;
}

int ScriptBatch::add_key(std::string key) {
  // Batches are mostly small (a loop turn's requests): a linear scan beats hashing every key.
  // Past kScanKeys they are looked up by hash, so that a batch of n keys costs O(n), not n^2.
  constexpr std::size_t kScanKeys = 32;
  if (keys_.size() < kScanKeys) {
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] == key) return static_cast<int>(i + 1);
    }
  } else {
    const std::hash<std::string_view> hash;
    if (by_hash_.empty()) {
      for (std::size_t i = 0; i < keys_.size(); ++i) {
        by_hash_.emplace(hash(keys_[i]), static_cast<int>(i));
      }
    }
    const std::size_t h = hash(key);
    for (auto [it, end] = by_hash_.equal_range(h); it != end; ++it) {
      if (keys_[static_cast<std::size_t>(it->second)] == key) return it->second + 1;
    }
    by_hash_.emplace(h, static_cast<int>(keys_.size()));
  }
  keys_.push_back(std::move(key));
  return static_cast<int>(keys_.size());
}

void ScriptBatch::add_request(RequestKind kind, std::int64_t cost, core::Nanos max_wait,
                              const std::vector<std::pair<int, int>>& refs,
                              std::optional<core::Nanos> at) {
  requests_.emplace_back(1, static_cast<char>(kind));
  if (at) {
    requests_.push_back(std::to_string(*at / core::kNanosPerSecond));
    requests_.push_back(std::to_string(*at % core::kNanosPerSecond));
  } else {
    requests_.emplace_back();
    requests_.emplace_back();
  }
  requests_.push_back(std::to_string(cost));
  requests_.push_back(wire_wait(max_wait));
  requests_.push_back(std::to_string(refs.size()));
  for (const auto& [limit, key] : refs) {
    requests_.push_back(std::to_string(limit));
    requests_.push_back(std::to_string(key));
  }
  per_request_.push_back(static_cast<int>(refs.size()));
}

std::vector<std::string> ScriptBatch::take_args() {
  std::vector<std::string> out;
  out.reserve(head_.size() + 1 + limits_.size() + requests_.size());
  for (auto& a : head_) out.push_back(std::move(a));
  out.push_back(std::to_string(limit_count_));
  for (auto& a : limits_) out.push_back(std::move(a));
  for (auto& a : requests_) out.push_back(std::move(a));
  return out;
}

std::vector<std::string> ScriptBatch::args() const {
  std::vector<std::string> out;
  out.reserve(head_.size() + 1 + limits_.size() + requests_.size());
  out.insert(out.end(), head_.begin(), head_.end());
  out.push_back(std::to_string(limit_count_));
  out.insert(out.end(), limits_.begin(), limits_.end());
  out.insert(out.end(), requests_.begin(), requests_.end());
  return out;
}

core::Expected<std::vector<RequestAnswer>> decode_reply_integers(
    const std::vector<long long>& flat, const std::vector<int>& limits_per_request) {
  std::size_t expected = 0;
  for (int n : limits_per_request) expected += static_cast<std::size_t>(n) * kFieldsPerLimit;
  if (flat.size() != expected) {
    return core::make_error(fmt::format(
        "the Redis script answered {} integers where {} were expected (a script of another "
        "version?)",
        flat.size(), expected));
  }
  std::vector<RequestAnswer> out;
  out.reserve(limits_per_request.size());
  std::size_t at = 0;
  for (int n : limits_per_request) {
    RequestAnswer answer;
    local::AllMustPass fold;
    for (int j = 0; j < n; ++j, at += kFieldsPerLimit) {
      LimitAnswer a;
      core::Decision& d = a.decision;
      d.allowed = flat[at] != 0;
      d.delay = duration(flat[at + 1]);
      d.remaining = flat[at + 2];
      d.retry_after = flat[at + 3] < 0 ? core::kNever : duration(flat[at + 3]);
      d.reset_after = duration(flat[at + 4]);
      d.limit = flat[at + 5];
      d.overflow = flat[at + 6] != 0;
      a.extra = flat[at + 7];
      fold.add(d);
      answer.limits.push_back(a);
    }
    answer.combined = fold.result();
    out.push_back(std::move(answer));
  }
  return out;
}

core::Expected<std::vector<RequestAnswer>> decode_outcome(
    const Outcome& outcome, const std::vector<int>& limits_per_request) {
  if (const auto* f = std::get_if<Failure>(&outcome)) return core::make_error(f->message);
  const Reply& r = std::get<Reply>(outcome);
  if (r.type == Reply::Type::kError) return core::make_error(r.str);
  if (r.type != Reply::Type::kArray) {
    return core::make_error("the Redis script's reply is not an array");
  }
  std::vector<long long> flat;
  flat.reserve(r.elements.size());
  for (const auto& e : r.elements) flat.push_back(e.integer);
  return decode_reply_integers(flat, limits_per_request);
}

}  // namespace sluice::backend::redis
