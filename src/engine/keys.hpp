// A rule's key for one request, from the parts its config names (header, query, cookie, path,
// client address, ...): hashed where the parts stand in the request, or written out as text
// only when a store needs it (Redis, logs). Internal to the engine.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sluice/config/rule_set.hpp"
#include "sluice/engine/outcome.hpp"
#include "sluice/engine/request_view.hpp"
#include "sluice/proto/http/ip_address.hpp"
#include "sluice/table/key_hash.hpp"

namespace sluice::engine::detail {

// What one part of a key is in this request. nullopt when the request lacks it; an empty value
// (other than a constant) counts as missing, as nginx treats an empty key: not accounted.
// `network` holds a client_ip/N part's network text; the value may point into it.
std::optional<std::string_view> part_value(const config::KeyPart& part, const RequestView& r,
                                           std::string_view client, std::string_view route,
                                           proto::http::IpAddress& network);

// The key's hash, equal to table::hash_key of its text (parts joined with '|'), so a key the
// decision service is given as text meets the same state; and, in the same pass over the
// request, its text cut to KeyTag's bytes for the top keys. False when a part is missing.
bool hash_request_key(std::span<const config::KeyPart> parts, const RequestView& r,
                      std::string_view client, std::string_view route, table::KeyHash& out,
                      KeyTag& tag);

// The key's text ("part|part"); false when a part is missing.
bool request_key_text(std::span<const config::KeyPart> parts, const RequestView& r,
                      std::string_view client, std::string_view route, std::string& out);

// A key's hash as the access log shows it under log_key: hash: 16 hex digits.
void hash_hex(std::uint64_t hash, std::string& out);

}  // namespace sluice::engine::detail
