// `sluice replay` (replay_command.hpp): validate arguments, stream the trace, write decisions.
#include "replay_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "limit_flags.hpp"
#include "sluice/backend/redis/replay_store.hpp"
#include "sluice/clock/clocks.hpp"
#include "sluice/core/byte_size.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/core/time.hpp"
#include "sluice/local/limit_set.hpp"
#include "sluice/local/policy.hpp"
#include "sluice/proto/resp/store_url.hpp"
#include "sluice/replay/trace_reader.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::cli {
namespace {

// Buffered writer: decisions go out in large writes, and are flushed before an error ends
// the run, so decisions already made stay written.
class Output {
 public:
  explicit Output(std::FILE* out) : out_(out) { buf_.reserve(kSize + 4096); }
  ~Output() { flush(); }
  void line(const replay::TraceRequest& r, const core::Decision& d) {
    const long long delay_us = d.allowed ? core::ceil_micros(d.delay) : 0;
    long long retry_us = 0;
    if (!d.allowed)
      retry_us = d.retry_after == core::kNever ? -1 : core::ceil_micros(d.retry_after);
    buf_.append(std::to_string(r.t_us));
    buf_.push_back(',');
    buf_.append(r.key);
    fmt::format_to(std::back_inserter(buf_), ",{},{},{},{},{}\n", r.cost, d.allowed ? 1 : 0,
                   delay_us, static_cast<long long>(d.remaining), retry_us);
    if (buf_.size() >= kSize) flush();
  }
  void flush() {
    if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), out_);
    buf_.clear();
    std::fflush(out_);
  }

 private:
  static constexpr std::size_t kSize = 1 << 16;
  std::FILE* out_;
  std::string buf_;
};

int fail(std::FILE* err, const std::string& message) {
  std::fprintf(err, "sluice replay: %s\n", message.c_str());
  return 2;
}

std::string overflow_message(std::int64_t line) {
  return "line " + std::to_string(line) +
         ": time or cost too large: this request's arithmetic would overflow 64-bit nanoseconds";
}

// The Redis backend decides a block of lines per round of script calls; the block is small
// enough that memory stays flat for any trace length.
int replay_through_redis(const backend::redis::StoreUrl& url,
                         const std::vector<spec::LimitSpec>& specs, core::Nanos max_wait,
                         replay::TraceReader& reader, Output& output, std::FILE* err) {
  constexpr std::size_t kBlock = 512;
  struct Line {
    std::int64_t t_us;
    std::int64_t line;
  };
  std::optional<backend::redis::ReplayStore> store;
  try {
    // Unique per run: this process and the wall time.
    store.emplace(url, specs, max_wait,
                  std::to_string(::getpid()) + "-" + std::to_string(clock::system_clock().now()));
  } catch (const std::exception& e) {
    return fail(err, std::string("--store: ") + e.what());
  }
  std::vector<backend::redis::ReplayRequest> block;
  std::vector<Line> lines;
  bool more = true;
  while (more) {
    block.clear();
    lines.clear();
    while (block.size() < kBlock) {
      auto r = reader.next();
      if (!r) {
        more = false;
        break;
      }
      block.push_back({r->t_us * core::kNanosPerMicro, std::string(r->key), r->cost});
      lines.push_back({r->t_us, r->line});
    }
    if (block.empty()) break;
    auto decisions = store->decide(block);
    if (!decisions) {
      output.flush();
      fail(err, "--store: Redis: " + decisions.error());
      return 1;  // not the input's fault: the store failed
    }
    for (std::size_t i = 0; i < block.size(); ++i) {
      const core::Decision& d = (*decisions)[i];
      if (d.overflow) {
        output.flush();
        return fail(err, overflow_message(lines[i].line));
      }
      replay::TraceRequest r;
      r.t_us = lines[i].t_us;
      r.key = block[i].key;
      r.cost = block[i].cost;
      output.line(r, d);
    }
  }
  output.flush();
  if (!reader.error().empty()) return fail(err, reader.error());
  return 0;
}

// The trace through limits kept in this process.
int replay_locally(const ReplayOptions& o, const std::vector<spec::LimitSpec>& specs,
                   core::Nanos max_wait, replay::TraceReader& reader, Output& output, std::FILE* in,
                   std::FILE* err) {
  // Without --zone every key keeps its state for the whole run (exact, memory grows with the
  // number of keys); with it, each limit's states live in a table of that budget (bounded,
  // evicting the least recently used keys).
  std::optional<local::LimitSet> exact;
  std::optional<local::Policy> bounded;
  std::vector<std::string_view> keys(specs.size());
  if (o.zone.empty()) {
    exact.emplace(specs, max_wait);
  } else {
    auto budget = core::parse_bytes(o.zone);
    if (!budget) return fail(err, "--zone: " + budget.error());
    std::vector<local::TableLimit> tables;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      auto t = local::make_table_limit(specs[i], *budget);
      if (!t) return fail(err, "--zone with --limit '" + o.limits[i] + "': " + t.error());
      tables.push_back(std::move(*t));
    }
    bounded.emplace(local::Combine::kAllMustPass, std::move(tables));
  }

  while (auto request = reader.next()) {
    const core::Nanos now = request->t_us * core::kNanosPerMicro;
    core::Decision d;
    if (exact) {
      d = exact->decide(request->key, now, request->cost);
    } else {
      std::fill(keys.begin(), keys.end(), request->key);
      d = bounded->decide(keys, now, request->cost, max_wait).decision;
    }
    if (d.overflow) {
      output.flush();
      return fail(err, overflow_message(request->line));
    }
    output.line(*request, d);
  }
  output.flush();
  if (!reader.error().empty()) return fail(err, reader.error());
  if (std::ferror(in)) return fail(err, "error reading the trace from standard input");
  return 0;
}

}  // namespace

int run_replay(const ReplayOptions& o, std::FILE* in, std::FILE* out, std::FILE* err) {
  if (o.limits.empty()) return fail(err, "--limit: at least one limit is required");
  auto patience = read_max_wait(o.mode, o.max_wait);
  if (!patience) return fail(err, patience.error());
  const bool wait = o.mode == "wait";
  const core::Nanos max_wait = *patience;
  std::optional<backend::redis::StoreUrl> redis_url;
  if (o.store != "local") {
    auto url = backend::redis::parse_store_url(o.store);
    // Replay's contract is the plain forms: no TLS, AUTH, database or sentinels to set up.
    const auto slash = o.store.find('/', o.store.find("://") + 3);
    const bool path = slash != std::string::npos && slash + 1 < o.store.size();
    if (url && (url->tls.enabled || url->sentinel || path || !url->auth.user.empty())) {
      url = core::make_error("sluice replay takes a plain Redis URL");
    }
    if (!url) {
      return fail(err, "--store: '" + o.store + "': " + url.error() +
                           " (accepted: local, redis://HOST:PORT, "
                           "redis-cluster://HOST:PORT[,HOST:PORT...])");
    }
    if (!o.zone.empty()) return fail(err, "--zone: applies to the local store only");
    redis_url = *url;
  }

  std::vector<spec::LimitSpec> specs;
  for (const auto& text : o.limits) {
    auto s = read_limit(text, wait, "--limit");
    if (!s) return fail(err, s.error());
    specs.push_back(*s);
  }

  replay::TraceReader reader(in);
  Output output(out);
  if (redis_url) return replay_through_redis(*redis_url, specs, max_wait, reader, output, err);
  return replay_locally(o, specs, max_wait, reader, output, in, err);
}

}  // namespace sluice::cli
