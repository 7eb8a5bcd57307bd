// The request target and Host as routing, keys and the upstream must all see them: one
// authority and one normalized path (RFC 9112 §3.2, RFC 3986 §6.2.2), or a refusal.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::proto::http {

// What to do with "%2F" (an encoded '/') in a path. nginx decodes it before it matches
// locations, so an upstream may read "/a%2F..%2Fadmin" as "/admin": keeping it as is lets a
// client spell a path that no route sees. `decode` (the default) treats it as '/', as nginx
// does; `reject` answers 400; `keep` leaves it encoded, for upstreams that tell the two apart.
enum class EscapedSlashes { kDecode, kReject, kKeep };

struct TargetParts {
  std::string_view authority;  // absolute-form only: "host[:port]" from the URI, else empty
  std::string_view path;       // normalized, starts with '/'
  std::string_view query;      // after '?', as sent (may be empty)
  bool has_query = false;      // a '?' was sent (an empty query is kept)
};

// Why a target cannot be normalized (nginx answers each with 400).
enum class TargetError {
  kNone,
  kEmpty,
  kBadForm,       // neither origin-form ("/...") nor absolute-form ("http://host/...")
  kBadScheme,     // absolute-form with a scheme other than http or https
  kBadAuthority,  // absolute-form with no host, userinfo, or a character a host cannot hold
  kBadEscape,     // '%' not followed by two hex digits
  kBadCharacter,  // a control character, space or '#' in the path
  kAboveRoot,     // a ".." segment that would climb above "/"
  kEscapedSlash,  // "%2F" with EscapedSlashes::kReject
};

std::string_view describe(TargetError e);

// Splits and normalizes `target`. The path is decoded where RFC 3986 allows it (unreserved
// characters; '/' as `slashes` says), other escapes are upper-cased, "." and ".." segments are
// resolved and runs of '/' merged. An already normal path is returned as a view of `target`;
// otherwise it is written to `scratch` (reused by the caller, so no allocation once it has
// grown) and the view points there.
TargetError normalize_target(std::string_view target, EscapedSlashes slashes, std::string& scratch,
                             TargetParts& out);

// A Host field value or URI authority for routing: host lower-cased, without port and
// without a trailing dot ("Public.Example.:8080" -> "public.example"). False when it is not
// a host ("", ":80", "a/b", "x@y", "[::1", "[1.2.3.4]", a port that is not digits).
// `scratch` as above.
bool routing_host(std::string_view authority, std::string& scratch, std::string_view& out);

// Every %XX decoded (a path segment read as data, such as a rule name); nullopt when a '%' is
// not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view in);

// application/x-www-form-urlencoded (a query string's names and values): '+' is a space, %XX
// a byte, and a '%' not followed by two hex digits stays as it is.
std::string form_decode(std::string_view in);

// A query string's name=value pairs, each form_decode'd, in order (empty pairs skipped; a name
// without '=' has an empty value).
std::vector<std::pair<std::string, std::string>> form_pairs(std::string_view query);

}  // namespace sluice::proto::http
