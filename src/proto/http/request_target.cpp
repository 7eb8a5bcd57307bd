// Request target normalization (request_target.hpp).
#include "sluice/proto/http/request_target.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace sluice::proto::http {
namespace {

bool is_unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte "%XX" at s[i] stands for, or -1 when it is not two hex digits.
int escaped_byte(std::string_view s, std::size_t i) {
  if (i + 2 >= s.size()) return -1;
  const int hi = hex_value(s[i + 1]);
  const int lo = hex_value(s[i + 2]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

bool forbidden_in_path(unsigned char c) { return c < 0x21 || c == 0x7f || c == '#'; }

bool lower_letter(char c) { return c >= 'a' && c <= 'z'; }

char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c; }

bool iequals_lower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (to_lower(s[i]) != lower[i]) return false;
  }
  return true;
}

// True when `path` has nothing to decode, merge or resolve (the common case: no copy).
bool already_normal(std::string_view path) {
  for (std::size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '%') return false;
    if (c != '/') continue;
    const std::string_view rest = path.substr(i + 1);
    if (rest.starts_with('/')) return false;
    if (rest == "." || rest.starts_with("./") || rest == ".." || rest.starts_with("../")) {
      return false;
    }
  }
  return true;
}

// Decodes what RFC 3986 §6.2.2.2 allows into `out` and upper-cases the other escapes.
TargetError decode_path(std::string_view path, EscapedSlashes slashes, std::string& out) {
  out.clear();
  out.reserve(path.size());
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      out += path[i];
      continue;
    }
    const int c = escaped_byte(path, i);
    if (c < 0) return TargetError::kBadEscape;
    const int hi = c >> 4;
    const int lo = c & 15;
    i += 2;
    if (is_unreserved(static_cast<unsigned char>(c)) ||
        (c == '/' && slashes == EscapedSlashes::kDecode)) {
      out += static_cast<char>(c);
      continue;
    }
    if (c == '/' && slashes == EscapedSlashes::kReject) return TargetError::kEscapedSlash;
    out += '%';
    out += kHex[hi];
    out += kHex[lo];
  }
  return TargetError::kNone;
}

// RFC 3986 §5.2.4 over a decoded path, in place, merging runs of '/' as nginx does; a ".."
// that would climb above the root is refused, as nginx refuses it.
TargetError resolve_dots(std::string& s) {
  const std::size_t n = s.size();
  std::size_t r = 0;
  std::size_t w = 0;  // s[0, w) is the output so far; it never ends with '/'
  bool trailing = false;
  while (r < n) {
    while (r < n && s[r] == '/') ++r;
    const std::size_t start = r;
    while (r < n && s[r] != '/') ++r;
    const std::size_t len = r - start;
    if (len == 0) {
      trailing = true;
      break;
    }
    if (len == 1 && s[start] == '.') {
      trailing = true;
      continue;
    }
    if (len == 2 && s[start] == '.' && s[start + 1] == '.') {
      if (w == 0) return TargetError::kAboveRoot;
      while (s[w - 1] != '/') --w;
      --w;
      trailing = true;
      continue;
    }
    s[w++] = '/';
    std::memmove(&s[w], &s[start], len);
    w += len;
    trailing = false;
  }
  if (trailing || w == 0) s[w++] = '/';
  s.resize(w);
  return TargetError::kNone;
}

bool is_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// RFC 3986 §3.2.2's IPv6address, as inet_pton reads it (IPvFuture and zone identifiers are not
// accepted: no client sends them in Host).
bool is_ipv6_address(std::string_view text) {
  char z[INET6_ADDRSTRLEN];
  if (text.empty() || text.size() >= sizeof z) return false;
  std::memcpy(z, text.data(), text.size());
  z[text.size()] = '\0';
  unsigned char address[16];
  return ::inet_pton(AF_INET6, z, address) == 1;
}

bool all_digits(std::string_view s) {
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// An authority's host (port and a trailing dot dropped, case as sent); false when it is not
// one (RFC 3986 §3.2.2: "[" IPv6address "]", or a reg-name, which an IPv4 address also is;
// then ":" and port digits). An empty host is none: nginx answers it 400 too. A reg-name is
// held to what DNS names use (letters, digits, '-', '.', '_', '~'), not RFC 3986's sub-delims
// and %-escapes, and to non-empty labels.
bool split_host(std::string_view authority, std::string_view& host) {
  host = authority;
  if (authority.empty()) return false;
  std::string_view port;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return false;
    host = authority.substr(0, close + 1);
    if (!is_ipv6_address(host.substr(1, close - 1))) return false;
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return false;
      port = after.substr(1);
    }
  } else {
    const auto colon = authority.find(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    for (const char c : host) {
      if (!is_host_char(c)) return false;
    }
    if (host.find("..") != std::string_view::npos) return false;
    if (!host.empty() && host.back() == '.') host.remove_suffix(1);
    if (host.empty() || host.front() == '.') return false;
  }
  return port.size() <= 5 && all_digits(port);
}

// "http://host:port/path?q" -> authority "host:port", rest "/path?q" (or "" for no path).
TargetError split_absolute(std::string_view target, std::string_view& authority,
                           std::string_view& rest) {
  const auto colon = target.find("://");
  if (colon == std::string_view::npos || colon == 0) return TargetError::kBadForm;
  const std::string_view scheme = target.substr(0, colon);
  for (const char c : scheme) {
    if (!lower_letter(to_lower(c))) return TargetError::kBadForm;
  }
  if (!iequals_lower(scheme, "http") && !iequals_lower(scheme, "https")) {
    return TargetError::kBadScheme;
  }
  const std::string_view after = target.substr(colon + 3);
  const auto end = after.find_first_of("/?#");
  authority = after.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : after.substr(end);
  std::string_view host;
  if (!split_host(authority, host) || host.empty()) return TargetError::kBadAuthority;
  return TargetError::kNone;
}

}  // namespace

std::string_view describe(TargetError e) {
  switch (e) {
    case TargetError::kNone:
      return "";
    case TargetError::kEmpty:
      return "empty request target";
    case TargetError::kBadForm:
      return "the request target is neither a path nor an http(s) URI";
    case TargetError::kBadScheme:
      return "the request target's scheme is not http or https";
    case TargetError::kBadAuthority:
      return "the request target's host is empty or malformed";
    case TargetError::kBadEscape:
      return "'%' not followed by two hex digits in the path";
    case TargetError::kBadCharacter:
      return "a control character, space or '#' in the path";
    case TargetError::kAboveRoot:
      return "a '..' segment climbs above the root";
    case TargetError::kEscapedSlash:
      return "an encoded '/' (%2F) in the path";
  }
  return "";
}

TargetError normalize_target(std::string_view target, EscapedSlashes slashes, std::string& scratch,
                             TargetParts& out) {
  out = {};
  if (target.empty()) return TargetError::kEmpty;
  std::string_view rest = target;
  if (target.front() != '/') {
    const TargetError e = split_absolute(target, out.authority, rest);
    if (e != TargetError::kNone) return e;
  }
  const auto q = rest.find('?');
  std::string_view path = rest.substr(0, q);
  if (q != std::string_view::npos) {
    out.query = rest.substr(q + 1);
    out.has_query = true;
  }
  for (const char c : path) {
    if (forbidden_in_path(static_cast<unsigned char>(c))) return TargetError::kBadCharacter;
  }
  if (path.empty()) {
    out.path = "/";  // "http://host" and "http://host?q" ask for the root
    return TargetError::kNone;
  }
  if (already_normal(path)) {
    out.path = path;
    return TargetError::kNone;
  }
  if (TargetError e = decode_path(path, slashes, scratch); e != TargetError::kNone) return e;
  if (TargetError e = resolve_dots(scratch); e != TargetError::kNone) return e;
  out.path = scratch;
  return TargetError::kNone;
}

bool routing_host(std::string_view authority, std::string& scratch, std::string_view& out) {
  std::string_view host;
  out = {};
  if (!split_host(authority, host)) return false;
  bool upper = false;
  for (const char c : host) upper = upper || (c >= 'A' && c <= 'Z');
  if (!upper) {
    out = host;
    return true;
  }
  scratch.assign(host);
  for (char& c : scratch) c = to_lower(c);
  out = scratch;
  return true;
}

std::optional<std::string> percent_decode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    const int c = escaped_byte(in, i);
    if (c < 0) return std::nullopt;
    out += static_cast<char>(c);
    i += 2;
  }
  return out;
}

std::string form_decode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const int c = in[i] == '%' ? escaped_byte(in, i) : -1;
    if (c >= 0) {
      out += static_cast<char>(c);
      i += 2;
    } else {
      out += in[i] == '+' ? ' ' : in[i];
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> form_pairs(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    out.emplace_back(form_decode(pair.substr(0, eq)), eq == std::string_view::npos
                                                          ? std::string()
                                                          : form_decode(pair.substr(eq + 1)));
  }
  return out;
}

}  // namespace sluice::proto::http
