// A command as Redis reads it (a RESP multibulk of bulk strings), appended to a connection's
// output buffer so a whole loop turn's commands leave in one write.
// Written here rather than with hiredis's redisFormatCommandArgv, which returns a malloc'd
// copy per command: appending in place saves one allocation and one copy per command, and the
// format is three lines of the RESP spec. Replies are parsed by hiredis's reader.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sluice::backend::redis::detail {

void append_command(std::string& out, const std::vector<std::string>& args);
void append_command(std::string& out, std::initializer_list<std::string_view> args);

}  // namespace sluice::backend::redis::detail
