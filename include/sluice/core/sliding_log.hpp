// Sliding log: remembers each allowed request; allowed iff the cost allowed in (t - window, t]
// plus this cost stays within `limit`. Exact, at the price of memory per request in the window.
#pragma once

#include <cstdint>
#include <deque>

#include "sluice/core/decision.hpp"

namespace sluice::core {

// The one algorithm whose state is not a few words: up to `limit` entries of 16 bytes per key
// (requests at the same instant share an entry). Use it where exactness matters more than
// memory; sliding-window estimates the same thing in 24 bytes.
struct SlidingLog {
  struct Params {
    std::int64_t limit = 0;
    Nanos window = 0;
  };
  struct Entry {
    Nanos at;
    std::int64_t cost;
  };
  struct State {
    std::deque<Entry> log;  // allowed requests, oldest first
    std::int64_t sum = 0;   // total cost in `log`
  };
  // Deciding only reads the log; committing appends and forgets what left the window.
  struct Step {
    Decision decision;
    Nanos at = 0;
    std::int64_t cost = 0;
    bool commit_on_denial = false;
  };

  static State start(const Params&, Nanos) { return State{}; }

  // Cost of the entries that have left the window (t - window, now] by `now`.
  static std::int64_t expired_cost(const Params& p, const State& s, Nanos now) {
    std::int64_t gone = 0;
    for (const Entry& e : s.log) {
      if (e.at > now - p.window) break;
      gone += e.cost;
    }
    return gone;
  }

  static Step decide(const Params& p, const State& s, Nanos now, std::int64_t cost,
                     Nanos /*max_wait: reject only*/) {
    const std::int64_t in_window = s.sum - expired_cost(p, s, now);
    Nanos reset = 0;
    if (!s.log.empty()) reset = p.window - (now - s.log.back().at);
    if (cost <= p.limit - in_window) {
      return {Decision{true, 0, p.limit - in_window - cost, 0, p.window, p.limit}, now, cost};
    }
    return {denied(retry_after(p, s, now, cost), p.limit - in_window, reset, p.limit), now, 0};
  }

  // The wait until enough of the oldest entries have left the window.
  static Nanos retry_after(const Params& p, const State& s, Nanos now, std::int64_t cost) {
    if (cost > p.limit) return kNever;
    std::int64_t in_window = s.sum;
    for (const Entry& e : s.log) {
      if (e.at > now - p.window && in_window + cost <= p.limit) break;
      in_window -= e.cost;
      if (in_window + cost <= p.limit) return std::max<Nanos>(p.window - (now - e.at), 1);
    }
    return 1;
  }

  static void commit(const Params& p, State& s, const Step& step) {
    while (!s.log.empty() && s.log.front().at <= step.at - p.window) {
      s.sum -= s.log.front().cost;
      s.log.pop_front();
    }
    if (step.cost == 0) return;
    if (!s.log.empty() && s.log.back().at == step.at) {
      s.log.back().cost += step.cost;
    } else {
      s.log.push_back(Entry{step.at, step.cost});
    }
    s.sum += step.cost;
  }

  static State retune(const Params&, const Params&, const State& s, Nanos) { return s; }

  static bool idle(const Params& p, const State& s, Nanos now) {
    return s.log.empty() || s.log.back().at <= now - p.window;
  }
};

}  // namespace sluice::core
