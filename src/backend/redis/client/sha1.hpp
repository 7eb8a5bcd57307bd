// SHA-1 as lowercase hex: the name Redis gives a script (EVALSHA), computed here so the client
// needs no crypto library for a digest that is an identifier, not a security measure.
#pragma once

#include <string>
#include <string_view>

namespace sluice::backend::redis::detail {

std::string sha1_hex(std::string_view data);

}  // namespace sluice::backend::redis::detail
