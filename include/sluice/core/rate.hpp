// A rate as the user wrote it: `count` events per `period`. Kept as two integers so each
// algorithm can derive its own representation exactly as its reference does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/expected.hpp"
#include "sluice/core/time.hpp"

namespace sluice::core {

struct Rate {
  std::int64_t count = 0;  // events, >= 1
  Nanos period = 0;        // > 0

  // Events per second as a double: count / (period / 1e9). The float references
  // (x/time/rate, Guava, Sentinel) take their rate in this form.
  double per_second() const {
    return static_cast<double>(count) / (static_cast<double>(period) / 1e9);
  }
  friend bool operator==(const Rate&, const Rate&) = default;
};

// Parses "10/s", "600/m", "5/h", "100/10s", "3/250ms". Errors name the bad token.
Expected<Rate> parse_rate(std::string_view text);

std::string format_rate(const Rate& r);

}  // namespace sluice::core
