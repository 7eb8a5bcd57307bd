// The cluster's slot -> master table, and the two Redis replies that feed it: CLUSTER SLOTS (the
// whole map) and a MOVED/ASK error (one slot). Nodes are small integers the client assigns.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sluice/backend/redis/endpoint.hpp"
#include "sluice/backend/redis/key_slot.hpp"
#include "sluice/backend/redis/reply.hpp"

namespace sluice::backend::redis::detail {

using NodeId = std::uint16_t;
inline constexpr NodeId kNoNode = 0xFFFF;

class SlotMap {
 public:
  SlotMap() : owner_(kSlotCount, kNoNode) {}
  NodeId owner(std::uint16_t slot) const { return owner_[slot]; }
  void set(std::uint16_t slot, NodeId node) { owner_[slot] = node; }
  // Replaces the whole table: slots left unassigned map to kNoNode.
  void assign(std::vector<NodeId> owners) { owner_ = std::move(owners); }

 private:
  std::vector<NodeId> owner_;
};

struct SlotRange {
  std::uint16_t first = 0;
  std::uint16_t last = 0;  // inclusive, as Redis writes it
  Endpoint master;
};

// CLUSTER SLOTS: [[first, last, [host, port, id, ...], replicas...], ...]. A master whose host
// is empty or "?" (Redis does not know how it is reached) gets `asked_host`, the host the reply
// came from. Nothing: the reply is not that shape.
std::optional<std::vector<SlotRange>> parse_cluster_slots(const Reply& reply,
                                                          std::string_view asked_host);

struct Redirect {
  bool ask = false;  // ASK (this command only) rather than MOVED (the slot's new owner)
  std::uint16_t slot = 0;
  Endpoint to;
};

// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381" (an error reply's text). An empty host
// (":6381", Redis's unknown endpoint) means the host the reply came from.
std::optional<Redirect> parse_redirect(std::string_view error, std::string_view from_host);

}  // namespace sluice::backend::redis::detail
