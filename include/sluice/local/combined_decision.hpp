// How the decisions of several limits on one request fold into one answer. One place, shared
// by every composition (replay's limit set, policies, the daemon's rules).
#pragma once

#include <algorithm>

#include "sluice/core/decision.hpp"

namespace sluice::local {

// All must allow: allowed iff every limit allows; the delay is the longest wait; remaining and
// limit the smallest; on denial retry_after is the longest among the limits that denied
// (kNever if any never can), and the delay is 0.
class AllMustPass {
 public:
  void add(const core::Decision& d) {
    if (count_++ == 0) {
      total_ = d;
      total_.retry_after = 0;
    } else {
      total_.allowed = total_.allowed && d.allowed;
      total_.delay = std::max(total_.delay, d.delay);
      if (d.remaining >= 0) {
        total_.remaining =
            total_.remaining < 0 ? d.remaining : std::min(total_.remaining, d.remaining);
      }
      total_.reset_after = std::max(total_.reset_after, d.reset_after);
      if (d.limit >= 0) total_.limit = total_.limit < 0 ? d.limit : std::min(total_.limit, d.limit);
    }
    total_.overflow = total_.overflow || d.overflow;
    if (!d.allowed) {
      never_ = never_ || d.retry_after == core::kNever;
      retry_ = std::max(retry_, d.retry_after);
    }
  }
  bool allowed() const { return total_.allowed; }
  core::Decision result() const {
    core::Decision out = total_;
    if (!out.allowed) {
      out.delay = 0;
      out.retry_after = never_ ? core::kNever : retry_;
    }
    return out;
  }

 private:
  core::Decision total_{true, 0, -1, 0, 0, -1};  // no limit applied: allowed
  core::Nanos retry_ = 0;
  bool never_ = false;
  int count_ = 0;
};

}  // namespace sluice::local
