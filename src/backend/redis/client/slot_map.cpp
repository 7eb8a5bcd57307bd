// parse_cluster_slots and parse_redirect (slot_map.hpp).
#include "slot_map.hpp"

#include <charconv>

namespace sluice::backend::redis::detail {

namespace {

std::optional<std::uint16_t> slot_of(long long v) {
  if (v < 0 || v >= kSlotCount) return std::nullopt;
  return static_cast<std::uint16_t>(v);
}

}  // namespace

std::optional<std::vector<SlotRange>> parse_cluster_slots(const Reply& reply,
                                                          std::string_view asked_host) {
  if (reply.type != Reply::Type::kArray) return std::nullopt;
  std::vector<SlotRange> out;
  for (const auto& e : reply.elements) {
    if (e.type != Reply::Type::kArray || e.elements.size() < 3) return std::nullopt;
    const auto& first = e.elements[0];
    const auto& last = e.elements[1];
    const auto& master = e.elements[2];
    if (first.type != Reply::Type::kInteger || last.type != Reply::Type::kInteger ||
        master.type != Reply::Type::kArray || master.elements.size() < 2 ||
        master.elements[1].type != Reply::Type::kInteger) {
      return std::nullopt;
    }
    const auto f = slot_of(first.integer);
    const auto l = slot_of(last.integer);
    const long long port = master.elements[1].integer;
    if (!f || !l || *f > *l || port <= 0 || port > 65535) return std::nullopt;
    SlotRange r;
    r.first = *f;
    r.last = *l;
    const std::string& host = master.elements[0].str;
    r.master.host = host.empty() || host == "?" ? std::string(asked_host) : host;
    r.master.port = static_cast<std::uint16_t>(port);
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<Redirect> parse_redirect(std::string_view error, std::string_view from_host) {
  Redirect r;
  if (error.starts_with("MOVED ")) {
    error.remove_prefix(6);
  } else if (error.starts_with("ASK ")) {
    r.ask = true;
    error.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const auto space = error.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto slot_text = error.substr(0, space);
  unsigned slot = 0;
  const auto [ptr, ec] =
      std::from_chars(slot_text.data(), slot_text.data() + slot_text.size(), slot);
  if (ec != std::errc() || ptr != slot_text.data() + slot_text.size() || slot >= kSlotCount) {
    return std::nullopt;
  }
  r.slot = static_cast<std::uint16_t>(slot);
  auto target = error.substr(space + 1);
  const auto colon = target.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string host(target.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const auto port_text = target.substr(colon + 1);
  unsigned port = 0;
  const auto [p2, ec2] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec2 != std::errc() || p2 != port_text.data() + port_text.size() || port == 0 ||
      port > 65535) {
    return std::nullopt;
  }
  r.to.host = host.empty() || host == "?" ? std::string(from_host) : std::move(host);
  r.to.port = static_cast<std::uint16_t>(port);
  return r;
}

}  // namespace sluice::backend::redis::detail
