// SLUICE.CHECK rule key [cost]: a configured rule decided by the engine (kept here or in
// Redis), answered as CL.THROTTLE's five integers, plus the permit's token as a sixth element
// when a concurrency rule admits; SLUICE.RELEASE token gives that permit back.
#pragma once

#include <span>
#include <string_view>

#include "resp_context.hpp"

namespace sluice::server::resp {

void sluice_check(Context& ctx, std::span<const std::string_view> args);
void sluice_release(Context& ctx, std::span<const std::string_view> args);

}  // namespace sluice::server::resp
