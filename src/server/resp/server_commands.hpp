// The commands about the server, minimal but well-formed for the clients that send them on
// connect: COMMAND (+ COUNT, DOCS, INFO, LIST), CONFIG GET, INFO.
#pragma once

#include <span>
#include <string_view>

#include "resp_context.hpp"

namespace sluice::server::resp {

void command(Context& ctx, std::span<const std::string_view> args);
void command_count(Context& ctx, std::span<const std::string_view> args);
void command_docs(Context& ctx, std::span<const std::string_view> args);
void command_info(Context& ctx, std::span<const std::string_view> args);
void command_list(Context& ctx, std::span<const std::string_view> args);
void config_get(Context& ctx, std::span<const std::string_view> args);
void info(Context& ctx, std::span<const std::string_view> args);

}  // namespace sluice::server::resp
