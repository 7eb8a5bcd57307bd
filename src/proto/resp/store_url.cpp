// parse_store_url and friends (sluice/proto/resp/store_url.hpp).
#include "sluice/proto/resp/store_url.hpp"

#include <charconv>

namespace sluice::proto::resp {

namespace {

constexpr std::string_view kStandaloneScheme = "redis://";
constexpr std::string_view kClusterScheme = "redis-cluster://";

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

core::Expected<Endpoint> parse_endpoint(std::string_view text, std::string_view what) {
  const std::string where = std::string(what) + " " + quoted(text);
  if (text.empty()) return core::make_error("empty " + std::string(what));
  Endpoint e{std::string(), kDefaultRedisPort};
  std::string_view port_text;
  bool has_port = false;
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return core::make_error("unclosed '[' in " + where);
    e.host = std::string(text.substr(1, close - 1));
    const auto rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return core::make_error("expected ':port' after ']' in " + where);
      port_text = rest.substr(1);
      has_port = true;
    }
  } else {
    const auto colon = text.rfind(':');
    if (colon != std::string_view::npos) {
      if (text.find(':') != colon) {
        return core::make_error("an IPv6 address needs brackets ([addr]:port) in " + where);
      }
      port_text = text.substr(colon + 1);
      has_port = true;
      text = text.substr(0, colon);
    }
    e.host = std::string(text);
  }
  if (e.host.empty()) return core::make_error("empty host in " + where);
  for (const char c : e.host) {
    if (c == '/' || c == '@' || c == '?' || c == '#' || c == ' ' || c == ',') {
      return core::make_error("bad character '" + std::string(1, c) + "' in the host of " + where);
    }
  }
  if (has_port) {
    unsigned port = 0;
    const auto* end = port_text.data() + port_text.size();
    const auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
    if (port_text.empty() || ec != std::errc() || ptr != end || port == 0 || port > 65535) {
      return core::make_error("bad port " + quoted(port_text) + " in " + where +
                              " (expected 1-65535)");
    }
    e.port = static_cast<std::uint16_t>(port);
  }
  return e;
}

core::Expected<StoreUrl> parse_store_url(std::string_view text) {
  StoreUrl url;
  std::string_view rest;
  if (text.starts_with(kClusterScheme)) {
    url.cluster = true;
    rest = text.substr(kClusterScheme.size());
  } else if (text.starts_with(kStandaloneScheme)) {
    rest = text.substr(kStandaloneScheme.size());
  } else {
    const auto sep = text.find("://");
    if (sep == std::string_view::npos) {
      return core::make_error("Redis URL " + quoted(text) +
                              " has no scheme (expected redis://host:port or "
                              "redis-cluster://host:port,host:port)");
    }
    return core::make_error("unknown scheme " + quoted(text.substr(0, sep)) + " in Redis URL " +
                            quoted(text) + " (expected redis or redis-cluster)");
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty()) return core::make_error("Redis URL " + quoted(text) + " names no host");
  std::size_t index = 1;
  while (true) {
    const auto comma = rest.find(',');
    const auto item = rest.substr(0, comma);
    if (!url.cluster && comma != std::string_view::npos) {
      return core::make_error("redis:// takes one host; use redis-cluster:// for several (in " +
                              quoted(text) + ")");
    }
    const std::string what = url.cluster ? "seed " + std::to_string(index) : std::string("host");
    auto e = parse_endpoint(item, what);
    if (!e) return core::make_error(e.error() + " in Redis URL " + quoted(text));
    url.seeds.push_back(std::move(e).value());
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
    ++index;
  }
  return url;
}

std::string format_store_url(const StoreUrl& url) {
  std::string out(url.cluster ? kClusterScheme : kStandaloneScheme);
  for (std::size_t i = 0; i < url.seeds.size(); ++i) {
    if (i > 0) out += ',';
    out += format_endpoint(url.seeds[i]);
  }
  return out;
}

}  // namespace sluice::proto::resp
