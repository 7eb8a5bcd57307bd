// SHA-1 as lowercase hex: the name Redis gives a script (EVALSHA), so the client can call a
// script by its name before any SCRIPT LOAD. OpenSSL computes it.
#pragma once

#include <string>
#include <string_view>

namespace sluice::backend::redis::detail {

std::string sha1_hex(std::string_view data);

}  // namespace sluice::backend::redis::detail
