// A rule's key parts (`key: [client_ip/24, header:X-Api-Key]`, `tier: header:X-Plan`): the
// kinds a key may take, read from their text and written back as read.
#include <optional>

#include "internal.hpp"
#include "section.hpp"

namespace sluice::config::internal {

namespace {

struct KeyKind {
  std::string_view name;
  KeyPart::Kind kind;
  std::string_view argument;  // what follows "name:", empty when the kind takes none
};
constexpr KeyKind kKeyKinds[] = {
    {"client_ip", KeyPart::Kind::kClientIp, ""}, {"header", KeyPart::Kind::kHeader, "NAME"},
    {"query", KeyPart::Kind::kQuery, "NAME"},    {"cookie", KeyPart::Kind::kCookie, "NAME"},
    {"path", KeyPart::Kind::kPath, ""},          {"route", KeyPart::Kind::kRoute, ""},
    {"method", KeyPart::Kind::kMethod, ""},      {"host", KeyPart::Kind::kHost, ""},
    {"const", KeyPart::Kind::kConst, "VALUE"},
};

std::string usage_of(const KeyKind& k) {
  return std::string(k.name) + (k.argument.empty() ? "" : ":" + std::string(k.argument));
}

// "24" -> 24 within [0, max]; nullopt for anything else (signs, spaces, leading zeros).
std::optional<int> prefix_length(std::string_view text, int max) {
  if (text.empty() || text.size() > 3 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  int n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  if (n > max) return std::nullopt;
  return n;
}

// client_ip/N or client_ip/N/M (text after "client_ip/"). One length up to 32 is IPv4's (IPv6
// stays whole), one over 32 is IPv6's (IPv4 stays whole); two are IPv4's then IPv6's.
core::Expected<KeyPart> parse_client_prefix(std::string_view lengths) {
  const auto slash = lengths.find('/');
  const std::string_view first = lengths.substr(0, slash);
  const std::string usage =
      " (write client_ip/V4, client_ip/V6 or client_ip/V4/V6: e.g. client_ip/24, client_ip/64, "
      "client_ip/24/64)";
  KeyPart part{KeyPart::Kind::kClientIp, ""};
  if (slash == std::string_view::npos) {
    const auto n = prefix_length(first, 128);
    if (!n)
      return core::make_error("client_ip prefix " + quoted(first) + " is not 0 to 128" + usage);
    (*n <= 32 ? part.v4_prefix : part.v6_prefix) = *n;
    return part;
  }
  const std::string_view second = lengths.substr(slash + 1);
  const auto v4 = prefix_length(first, 32);
  const auto v6 = prefix_length(second, 128);
  if (!v4)
    return core::make_error("client_ip IPv4 prefix " + quoted(first) + " is not 0 to 32" + usage);
  if (!v6) {
    return core::make_error("client_ip IPv6 prefix " + quoted(second) + " is not 0 to 128" + usage);
  }
  part.v4_prefix = *v4;
  part.v6_prefix = *v6;
  return part;
}

}  // namespace

core::Expected<KeyPart> parse_key_part(std::string_view text) {
  if (text.starts_with("client_ip/")) return parse_client_prefix(text.substr(10));
  const auto colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const KeyKind* row = nullptr;
  for (const auto& k : kKeyKinds) {
    if (k.name == kind) row = &k;
  }
  if (row == nullptr) {
    return core::make_error("unknown key kind " + quoted(kind) +
                            " (accepted: " + join(kKeyKinds, usage_of) + ")");
  }
  const std::string argument(colon == std::string_view::npos ? "" : text.substr(colon + 1));
  if (row->argument.empty()) {
    if (colon != std::string_view::npos) {
      return core::make_error("key kind " + quoted(kind) + " takes no name (write " + quoted(kind) +
                              ")");
    }
    return KeyPart{row->kind, ""};
  }
  if (argument.empty()) {
    return core::make_error("key kind " + quoted(kind) + " needs a " + std::string(row->argument) +
                            " (e.g. " + std::string(kind) +
                            (row->kind == KeyPart::Kind::kConst ? ":global" : ":X-Api-Key") + ")");
  }
  if ((row->kind == KeyPart::Kind::kHeader || row->kind == KeyPart::Kind::kCookie) &&
      !is_token(argument)) {
    return core::make_error(std::string(kind) + " name " + quoted(argument) +
                            " is not a valid name (no spaces, quotes or separators)");
  }
  return KeyPart{row->kind, argument};
}

std::string format_key_part(const KeyPart& part) {
  if (part.kind == KeyPart::Kind::kClientIp && (part.v4_prefix != 32 || part.v6_prefix != 128)) {
    if (part.v6_prefix == 128) return "client_ip/" + std::to_string(part.v4_prefix);
    if (part.v4_prefix == 32 && part.v6_prefix > 32) {
      return "client_ip/" + std::to_string(part.v6_prefix);
    }
    return "client_ip/" + std::to_string(part.v4_prefix) + "/" + std::to_string(part.v6_prefix);
  }
  for (const auto& k : kKeyKinds) {
    if (k.kind == part.kind) {
      return std::string(k.name) + (k.argument.empty() ? "" : ":" + part.name);
    }
  }
  return "?";
}

}  // namespace sluice::config::internal
