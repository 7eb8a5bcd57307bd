// ScriptBatch and the reply reader (sluice/backend/redis/script_codec.hpp).
#include "sluice/backend/redis/script_codec.hpp"

#include <fmt/format.h>

#include <functional>
#include <string_view>
#include <type_traits>

#include "client/command_encoding.hpp"
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

// The protocol version and the batch's time: the arguments before the limit count.
constexpr std::size_t kHeadArgs = 3;

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

ScriptBatch::ScriptBatch(ScriptTime time) { reset(time); }

void ScriptBatch::reset(ScriptTime time) {
  head_.clear();
  limits_.clear();
  limit_args_ = 0;
  limit_count_ = 0;
  requests_.clear();
  request_args_ = 0;
  key_text_.clear();
  key_end_.clear();
  key_hash_.clear();
  per_request_.clear();
  detail::append_bulk(head_, "2");
  if (time.redis_time) {
    detail::append_bulk(head_, "");
    detail::append_bulk(head_, "0");
  } else {
    detail::append_bulk_integer(head_, time.now / core::kNanosPerSecond);
    detail::append_bulk_integer(head_, time.now % core::kNanosPerSecond);
  }
}

int ScriptBatch::add_limit(const ScriptLimit& limit) {
  const auto put = [this](std::string_view a) {
    detail::append_bulk(limits_, a);
    ++limit_args_;
  };
  const auto put_all = [&](const std::vector<std::string>& list) {
    for (const auto& a : list) put(a);
  };
  put(limit.algorithm);
  std::string flags = limit.count_denied ? "d" : "";
  if (limit.block_ms > 0) flags += "b" + std::to_string(limit.block_ms);
  if (limit.cost > 0) flags += "r" + std::to_string(limit.cost);
  if (!limit.calendar.empty()) flags += "c";
  if (limit.proportional) flags += "p";
  put(flags);
  put(std::to_string(limit.params.size()));
  put_all(limit.params);
  // The sections the flags announce, in the order the script reads them.
  put_all(limit.calendar);
  if (limit.proportional) {
    put(std::to_string(limit.replaced.size()));
    put_all(limit.replaced);
  }
  return ++limit_count_;
}
std::string_view ScriptBatch::key(std::size_t i) const {
  const std::size_t from = i == 0 ? 0 : key_end_[i - 1];
  return std::string_view(key_text_).substr(from, key_end_[i] - from);
}

std::vector<std::string> ScriptBatch::keys() const {
  std::vector<std::string> out;
  out.reserve(key_count());
  for (std::size_t i = 0; i < key_count(); ++i) out.emplace_back(key(i));
  return out;
}

int ScriptBatch::add_key(std::string_view text) {
  // Batches are mostly small (a loop turn's requests): a linear scan beats hashing every key.
  // Past kScanKeys they are looked up in an open-addressing table of their hashes, so that a
  // batch of n keys costs O(n), not n^2 (an RLS request of thousands of descriptors is one
  // batch of thousands of keys); its memory is kept from batch to batch, as the text's.
  constexpr std::size_t kScanKeys = 32;
  const std::size_t n = key_count();
  std::size_t h = 0;
  if (n < kScanKeys) {
    for (std::size_t i = 0; i < n; ++i) {
      if (key(i) == text) return static_cast<int>(i + 1);
    }
  } else {
    if (key_hash_.size() < n) {  // the first time past kScanKeys: hash what is there
      for (std::size_t i = key_hash_.size(); i < n; ++i) {
        key_hash_.push_back(std::hash<std::string_view>()(key(i)));
      }
      rehash(4 * kScanKeys);
    }
    h = std::hash<std::string_view>()(text);
    const std::size_t mask = table_.size() - 1;
    for (std::size_t at = h & mask; table_[at] != 0; at = (at + 1) & mask) {
      const auto i = static_cast<std::size_t>(table_[at] - 1);
      if (key_hash_[i] == h && key(i) == text) return table_[at];
    }
  }
  key_text_ += text;
  key_end_.push_back(static_cast<std::uint32_t>(key_text_.size()));
  if (n >= kScanKeys) {
    key_hash_.push_back(h);
    if (2 * key_count() > table_.size()) {
      rehash(2 * table_.size());
    } else {
      place(n);
    }
  }
  return static_cast<int>(n + 1);
}

void ScriptBatch::place(std::size_t i) {
  const std::size_t mask = table_.size() - 1;
  std::size_t at = key_hash_[i] & mask;
  while (table_[at] != 0) at = (at + 1) & mask;
  table_[at] = static_cast<int>(i + 1);
}

void ScriptBatch::rehash(std::size_t size) {
  table_.assign(size, 0);
  for (std::size_t i = 0; i < key_hash_.size(); ++i) place(i);
}

void ScriptBatch::add_request(RequestKind kind, std::int64_t cost, core::Nanos max_wait,
                              const std::vector<std::pair<int, int>>& refs,
                              std::optional<core::Nanos> at) {
  // Composed on the stack and appended at once: a request is a few short numbers.
  char buf[6 * detail::kMaxBulkInteger];
  char* end = buf;
  const char k = static_cast<char>(kind);
  end = detail::put_bulk(end, std::string_view(&k, 1));
  if (at) {
    end = detail::put_bulk_integer(end, *at / core::kNanosPerSecond);
    end = detail::put_bulk_integer(end, *at % core::kNanosPerSecond);
  } else {
    end = detail::put_bulk(end, "");
    end = detail::put_bulk(end, "");
  }
  end = detail::put_bulk_integer(end, cost);
  // A wait beyond the script's exact range is "forever": -1 on the wire.
  end = detail::put_bulk_integer(
      end, max_wait == core::kForever || max_wait >= kScriptExact ? -1 : max_wait);
  end = detail::put_bulk_integer(end, static_cast<std::int64_t>(refs.size()));
  requests_.append(buf, static_cast<std::size_t>(end - buf));
  for (const auto& [limit, key] : refs) {
    end = detail::put_bulk_integer(buf, limit);
    end = detail::put_bulk_integer(end, key);
    requests_.append(buf, static_cast<std::size_t>(end - buf));
  }
  request_args_ += 6 + 2 * refs.size();
  per_request_.push_back(static_cast<int>(refs.size()));
}

WireArgs ScriptBatch::wire() const {
  WireArgs out;
  out.wire.reserve(key_text_.size() + 16 * key_count() + head_.size() + 16 + limits_.size() +
                   requests_.size());
  for (std::size_t i = 0; i < key_count(); ++i) detail::append_bulk(out.wire, key(i));
  out.wire += head_;
  detail::append_bulk_integer(out.wire, limit_count_);
  out.wire += limits_;
  out.wire += requests_;
  out.count = key_count() + kHeadArgs + 1 + limit_args_ + request_args_;
  return out;
}

std::vector<std::string> ScriptBatch::args() const {
  std::string argv = head_;
  detail::append_bulk_integer(argv, limit_count_);
  argv += limits_;
  argv += requests_;
  return detail::read_bulks(argv);
}

namespace {

// One limit's 8 integers, `at(i)` the i-th.
template <class At>
LimitAnswer limit_answer(const At& at) {
  LimitAnswer a;
  core::Decision& d = a.decision;
  d.allowed = at(0) != 0;
  d.delay = duration(at(1));
  d.remaining = at(2);
  d.retry_after = at(3) < 0 ? core::kNever : duration(at(3));
  d.reset_after = duration(at(4));
  d.limit = at(5);
  d.overflow = at(6) != 0;
  a.extra = at(7);
  return a;
}

core::Error count_mismatch(std::size_t got, std::size_t limits) {
  return core::make_error(fmt::format(
      "the Redis script answered {} integers where {} were expected (a script of another "
      "version?)",
      got, limits * kFieldsPerLimit));
}

std::vector<RequestAnswer> by_request(const std::vector<LimitAnswer>& limits,
                                      const std::vector<int>& limits_per_request) {
  std::vector<RequestAnswer> out;
  out.reserve(limits_per_request.size());
  std::size_t at = 0;
  for (int n : limits_per_request) {
    RequestAnswer answer;
    local::AllMustPass fold;
    for (int j = 0; j < n; ++j, ++at) {
      fold.add(limits[at].decision);
      answer.limits.push_back(limits[at]);
    }
    answer.combined = fold.result();
    out.push_back(std::move(answer));
  }
  return out;
}

std::size_t total(const std::vector<int>& limits_per_request) {
  std::size_t n = 0;
  for (int k : limits_per_request) n += static_cast<std::size_t>(k);
  return n;
}

}  // namespace

core::Expected<std::vector<RequestAnswer>> decode_reply_integers(
    const std::vector<long long>& flat, const std::vector<int>& limits_per_request) {
  const std::size_t n = total(limits_per_request);
  if (flat.size() != n * kFieldsPerLimit) return count_mismatch(flat.size(), n);
  std::vector<LimitAnswer> limits;
  limits.reserve(n);
  for (std::size_t at = 0; at < flat.size(); at += kFieldsPerLimit) {
    limits.push_back(limit_answer([&](std::size_t i) { return flat[at + i]; }));
  }
  return by_request(limits, limits_per_request);
}

core::Expected<std::vector<LimitAnswer>> decode_limits(const Outcome& outcome, std::size_t limits) {
  if (const auto* f = std::get_if<Failure>(&outcome)) return core::make_error(f->message);
  const Reply& r = std::get<Reply>(outcome);
  if (r.type == Reply::Type::kError) return core::make_error(r.str);
  if (r.type != Reply::Type::kArray) {
    return core::make_error("the Redis script's reply is not an array");
  }
  std::vector<LimitAnswer> out;
  out.reserve(limits);
  // Read compactly (the store's calls) or as elements (any other caller's).
  const auto read = [&](const auto& values,
                        const auto& number) -> core::Expected<std::vector<LimitAnswer>> {
    if (values.size() != limits * kFieldsPerLimit) return count_mismatch(values.size(), limits);
    for (std::size_t at = 0; at < values.size(); at += kFieldsPerLimit) {
      out.push_back(limit_answer([&](std::size_t i) { return number(values[at + i]); }));
    }
    return std::move(out);
  };
  if (r.elements.empty()) return read(r.integers, [](long long v) { return v; });
  return read(r.elements, [](const Reply& e) { return e.integer; });
}

core::Expected<std::vector<RequestAnswer>> decode_outcome(
    const Outcome& outcome, const std::vector<int>& limits_per_request) {
  auto limits = decode_limits(outcome, total(limits_per_request));
  if (!limits) return core::make_error(limits.error());
  return by_request(*limits, limits_per_request);
}

}  // namespace sluice::backend::redis
