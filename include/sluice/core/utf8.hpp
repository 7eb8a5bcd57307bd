// UTF-8 checks for text that comes from outside (config values, admin API bodies, rule names)
// and goes out again in messages and JSON replies. JSON and YAML are UTF-8, so a byte sequence
// that is not must be refused where it enters, and shown escaped where it is echoed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::core {

// The offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF); nullopt when `text` is valid.
std::optional<std::size_t> invalid_utf8_at(std::string_view text);

// "is not valid UTF-8 (byte 0xFF at offset 3)", for a value known to be invalid.
std::string invalid_utf8_problem(std::string_view text);

// `text` with each byte of an invalid sequence and each control character written as \xHH
// (valid UTF-8 passes unchanged), so that a message quoting client input is itself valid UTF-8
// and shows what was sent.
std::string printable(std::string_view text);

// Every byte of `bytes` as two lowercase hex digits: a key that is not text, given exactly in
// JSON; a digest.
std::string hex(std::string_view bytes);

}  // namespace sluice::core
