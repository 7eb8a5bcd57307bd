// SLUICE.PEEK rule key: the key's state without charging it, as CL.THROTTLE's five integers
// (limited: whether a request of cost 1 would be refused now) and a sixth, 1 when the key had
// state; SLUICE.RESET rule key: forgets the key (its next request finds a full quota) and
// answers 1 when it had state, 0 when not, as DEL counts. Both are the engine's KeyAsk.
#pragma once

#include <span>
#include <string_view>

#include "resp_context.hpp"

namespace sluice::server::resp {

void sluice_peek(Context& ctx, std::span<const std::string_view> args);
void sluice_reset(Context& ctx, std::span<const std::string_view> args);

}  // namespace sluice::server::resp
