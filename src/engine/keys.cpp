// Rule keys from request parts (keys.hpp).
#include "keys.hpp"

#include "sluice/proto/http/field_values.hpp"

namespace sluice::engine::detail {

using proto::http::host_without_port;
using proto::http::query_param;

namespace {

// The client's network under a client_ip/N part; the address itself under plain client_ip.
std::string_view client_network(const config::KeyPart& p, std::string_view client,
                                proto::http::IpAddress& network) {
  if (p.v4_prefix == 32 && p.v6_prefix == 128) return client;
  if (!network.parse(client)) return client;  // not an address: a unix socket peer, kept whole
  network.keep_prefix(network.v6() ? p.v6_prefix : p.v4_prefix);
  return network.text();
}

}  // namespace

std::optional<std::string_view> part_value(const config::KeyPart& p, const RequestView& r,
                                           std::string_view client, std::string_view route,
                                           proto::http::IpAddress& network) {
  using Kind = config::KeyPart::Kind;
  std::optional<std::string_view> v;
  switch (p.kind) {
    case Kind::kClientIp:
      v = client.empty() ? client : client_network(p, client, network);
      break;
    case Kind::kHeader:
      v = find_header(r, p.name);
      break;
    case Kind::kQuery:
      v = query_param(r.query, p.name);
      break;
    case Kind::kCookie:
      v = cookie(r, p.name);
      break;
    case Kind::kPath:
      v = r.path;
      break;
    case Kind::kRoute:
      v = route;
      break;
    case Kind::kConst:
      return std::string_view(p.name);
    case Kind::kMethod:
      v = r.method;
      break;
    case Kind::kHost:
      v = host_without_port(r.host);
      break;
  }
  if (!v || v->empty()) return std::nullopt;
  return v;
}

bool hash_request_key(std::span<const config::KeyPart> parts, const RequestView& r,
                      std::string_view client, std::string_view route, table::KeyHash& out,
                      KeyTag& tag) {
  proto::http::IpAddress network;
  tag.clear(0);
  if (parts.size() == 1) {
    const auto v = part_value(parts[0], r, client, route, network);
    if (!v) return false;
    out = table::hash_key(*v);
    tag.append(*v);
  } else {
    table::KeyHasher hasher;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const auto v = part_value(parts[i], r, client, route, network);
      if (!v) return false;
      if (i > 0) {
        hasher.add("|");
        tag.append("|");
      }
      hasher.add(*v);
      tag.append(*v);
    }
    out = hasher.finish();
  }
  tag.hash = out.bucket;
  return true;
}

bool request_key_text(std::span<const config::KeyPart> parts, const RequestView& r,
                      std::string_view client, std::string_view route, std::string& out) {
  out.clear();
  proto::http::IpAddress network;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto v = part_value(parts[i], r, client, route, network);
    if (!v) return false;
    if (i > 0) out += '|';
    out.append(*v);
  }
  return true;
}

void hash_hex(std::uint64_t hash, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.assign(16, '0');
  for (int i = 15; i >= 0; --i, hash >>= 4) out[static_cast<std::size_t>(i)] = kHex[hash & 15];
}

}  // namespace sluice::engine::detail
