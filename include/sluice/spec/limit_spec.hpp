// The limit spec language, `ALGORITHM:param=value,...` (e.g. `token-bucket:rate=10/s,burst=20`),
// parsed into typed, validated parameters of a core algorithm. Shared by replay, config and API.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sluice/core/concurrency.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/core/fixed_window.hpp"
#include "sluice/core/gcra.hpp"
#include "sluice/core/leaky_bucket.hpp"
#include "sluice/core/sliding_log.hpp"
#include "sluice/core/sliding_window.hpp"
#include "sluice/core/smooth_bursty.hpp"
#include "sluice/core/smooth_warmup.hpp"
#include "sluice/core/token_bucket.hpp"
#include "sluice/core/uniform_queue.hpp"

namespace sluice::spec {

// One alternative per algorithm; the variant index is the algorithm.
using AlgorithmParams =
    std::variant<core::TokenBucket::Params, core::Gcra::Params, core::LeakyBucket::Params,
                 core::FixedWindow::Params, core::SlidingLog::Params, core::SlidingWindow::Params,
                 core::SmoothBursty::Params, core::SmoothWarmup::Params, core::UniformQueue::Params,
                 core::Concurrency::Params>;

// How an algorithm treats `--mode wait` / a max-wait.
enum class WaitSupport {
  kCallerMaxWait,  // waits up to the caller's max-wait (token-bucket, gcra, smooth-*)
  kOwnRule,        // delays by its own parameters in any mode (leaky-bucket, queue)
  kRejectOnly,     // windows: deciding now is all they do
  kNotTimeBased,   // concurrency: leases, not replayable against a trace
};

struct LimitSpec {
  std::string algorithm;  // canonical name, e.g. "token-bucket"
  AlgorithmParams params;
  WaitSupport wait = WaitSupport::kCallerMaxWait;
  std::string canonical;  // normalised text, parameters in table order with defaults filled
  // The canonical text says everything the parameters hold.
  friend bool operator==(const LimitSpec& a, const LimitSpec& b) {
    return a.canonical == b.canonical;
  }
};

// A fixed-window with align=calendar: its windows are a time zone's days, weeks or months, and
// it decides on Unix time.
inline bool calendar_aligned(const LimitSpec& spec) {
  const auto* p = std::get_if<core::FixedWindow::Params>(&spec.params);
  return p != nullptr && p->calendar != nullptr;
}

// The algorithms a rule's count_denied applies to (core::CountsDenials).
inline bool counts_denials(const LimitSpec& spec) {
  return std::holds_alternative<core::TokenBucket::Params>(spec.params) ||
         std::holds_alternative<core::Gcra::Params>(spec.params) ||
         std::holds_alternative<core::FixedWindow::Params>(spec.params) ||
         std::holds_alternative<core::SlidingWindow::Params>(spec.params);
}

// Errors name the offending algorithm, parameter or value and list what is accepted.
core::Expected<LimitSpec> parse_limit_spec(std::string_view text);

// The algorithm names the parser accepts, in documentation order.
std::vector<std::string> algorithm_names();

}  // namespace sluice::spec
