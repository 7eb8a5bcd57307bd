// The adaptive algorithms by name, and which of the common settings each one takes: one table
// for the gateway's routes (config) and `sluice simulate`'s collapse model alike.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/adaptive/any_limit.hpp"

namespace sluice::adaptive {

// The settings a route may give an algorithm; unset: the algorithm's own default. An algorithm
// that has no such setting ignores it (config refuses the combinations that mean nothing).
struct LimitSettings {
  std::optional<std::int64_t> initial;
  std::optional<std::int64_t> min_limit;
  std::optional<std::int64_t> max_limit;
  std::optional<Nanos> min_rtt_interval;  // envoy-gradient
};

inline constexpr std::array<std::string_view, 4> kAlgorithmNames{"envoy-gradient", "gradient2",
                                                                 "vegas", "aimd"};

namespace detail {
template <class T, class N>
void set(T& field, const std::optional<N>& value) {
  if (value) field = static_cast<T>(*value);
}
}  // namespace detail

// Each algorithm's parameters: its defaults, with the settings it has taken from `s`.
template <class L>
typename L::Params params_of(const LimitSettings& s);

template <>
inline EnvoyGradient::Params params_of<EnvoyGradient>(const LimitSettings& s) {
  EnvoyGradient::Params p;
  detail::set(p.min_concurrency, s.min_limit);
  detail::set(p.max_concurrency_limit, s.max_limit);
  detail::set(p.min_rtt_interval, s.min_rtt_interval);
  return p;
}
template <>
inline Vegas::Params params_of<Vegas>(const LimitSettings& s) {
  Vegas::Params p;
  detail::set(p.initial_limit, s.initial);
  detail::set(p.max_concurrency, s.max_limit);
  return p;
}
template <>
inline Gradient2::Params params_of<Gradient2>(const LimitSettings& s) {
  Gradient2::Params p;
  detail::set(p.initial_limit, s.initial);
  detail::set(p.min_limit, s.min_limit);
  detail::set(p.max_concurrency, s.max_limit);
  return p;
}
template <>
inline Aimd::Params params_of<Aimd>(const LimitSettings& s) {
  Aimd::Params p;
  detail::set(p.initial_limit, s.initial);
  detail::set(p.min_limit, s.min_limit);
  detail::set(p.max_limit, s.max_limit);
  return p;
}

template <class L>
core::Expected<AnyLimit> start_with(const LimitSettings& s, Nanos now, std::uint64_t seed) {
  return start_limit<L>(params_of<L>(s), now, seed);
}

// The algorithm named `name` (one of kAlgorithmNames) with `s` over its defaults, started at
// `now`; an unknown name or settings the algorithm refuses are an error.
inline core::Expected<AnyLimit> start_named(std::string_view name, const LimitSettings& s,
                                            Nanos now, std::uint64_t seed) {
  if (name == "envoy-gradient") return start_with<EnvoyGradient>(s, now, seed);
  if (name == "gradient2") return start_with<Gradient2>(s, now, seed);
  if (name == "vegas") return start_with<Vegas>(s, now, seed);
  if (name == "aimd") return start_with<Aimd>(s, now, seed);
  return core::make_error("unknown adaptive algorithm '" + std::string(name) + "'");
}

}  // namespace sluice::adaptive
