// SLUICE.CHECK rule key [cost]: a configured rule's decision for one key, answered with
// CL.THROTTLE's five integers. The rules engine is reached through RespServerOptions::check,
// which the composition root (sluice serve) connects; without it the command answers
// "ERR no rules configured".
#pragma once

#include <span>
#include <string_view>

#include "resp_context.hpp"

namespace sluice::server::resp {

void sluice_check(Context& ctx, std::span<const std::string_view> args);

}  // namespace sluice::server::resp
