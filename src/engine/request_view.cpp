// Key lookups over a RequestView (request_view.hpp): headers, cookies, the client address.
#include "sluice/engine/request_view.hpp"

#include "sluice/proto/http/field_values.hpp"

namespace sluice::engine {
namespace {

using proto::http::iequals;

bool trusted_address(const CanonicalAddress& a, std::span<const config::Cidr> trusted) {
  for (const auto& net : trusted) {
    if (net.contains(a)) return true;
  }
  return false;
}

// Calls f(address text) for each hop a header lists, right to left, over every field of that
// name (the last field holds the latest hops); stops when f returns false.
template <class F>
void hops_from_right(const RequestView& r, std::string_view name, bool forwarded, F&& f) {
  for (auto it = r.headers.rbegin(); it != r.headers.rend(); ++it) {
    if (!iequals(it->name, name)) continue;
    const bool go_on = proto::http::each_item_from_right(it->value, [&](std::string_view item) {
      return f(forwarded ? proto::http::forwarded_for(item) : item);
    });
    if (!go_on) return;
  }
}

bool has_header(const RequestView& r, std::string_view name) {
  for (const auto& h : r.headers) {
    if (iequals(h.name, name)) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string_view> find_header(const RequestView& r, std::string_view name) {
  for (const auto& h : r.headers) {
    if (iequals(h.name, name)) return h.value;
  }
  return std::nullopt;
}

std::optional<std::string_view> cookie(const RequestView& r, std::string_view name) {
  for (const auto& h : r.headers) {
    if (!iequals(h.name, "Cookie")) continue;
    if (auto v = proto::http::cookie_value(h.value, name)) return v;
  }
  return std::nullopt;
}

bool trusted_peer(const RequestView& request, std::span<const config::Cidr> trusted) {
  if (trusted.empty()) return false;
  if (request.peer_address != nullptr) return trusted_address(*request.peer_address, trusted);
  CanonicalAddress peer;
  return peer.parse(request.peer) && trusted_address(peer, trusted);
}

void client_address(const RequestView& request, std::span<const config::Cidr> trusted,
                    CanonicalAddress& out) {
  if (request.peer_address != nullptr) {
    out = *request.peer_address;
  } else if (!out.parse(request.peer)) {
    return;
  }
  if (trusted.empty() || !trusted_address(out, trusted)) return;
  CanonicalAddress hop;
  auto walk = [&](std::string_view name, bool forwarded) {
    hops_from_right(request, name, forwarded, [&](std::string_view item) {
      if (!hop.parse(item)) return false;  // not an address: the last trusted hop stands
      out = hop;
      return trusted_address(hop, trusted);  // the first untrusted hop is the client
    });
  };
  if (has_header(request, "X-Forwarded-For")) {
    walk("X-Forwarded-For", false);
  } else if (has_header(request, "Forwarded")) {
    walk("Forwarded", true);
  } else if (has_header(request, "X-Real-IP")) {
    walk("X-Real-IP", false);
  }
}

}  // namespace sluice::engine
