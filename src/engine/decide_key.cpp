// One key of a rule looked at, reset or settled (ask.hpp: KeyAsk): in the rule's table here, or
// by the script in Redis (request kinds p, x, b, u and s). No counter moves.
#include <variant>

#include "internal.hpp"
#include "sluice/local/settle.hpp"

namespace sluice::engine::detail {
namespace {

bool is_concurrency(const CompiledLimit& limit) {
  return std::holds_alternative<core::Concurrency::Params>(limit.spec.params);
}

// The table's answer: the key's state, or after a reset the state of a new key.
void local_key(const local::AnyTable& any, const table::KeyHash& h, KeyOp op, core::Nanos now,
               Outcome& out) {
  std::visit(
      [&](const auto& table) {
        if (op == KeyOp::kReset) {
          out.key_seen = table->reset(h);
          out.total = table->peek(h, now).decision;
          return;
        }
        const auto peeked = table->peek(h, now);
        out.key_seen = peeked.seen;
        out.total = peeked.decision;
      },
      any);
}

// The key's block: whether it has one (then `total` is its refusal), lifted for kUnblock.
void block_key(const CompiledLimit& limit, const table::KeyHash& h, KeyOp op, core::Nanos now,
               Outcome& out) {
  const auto until = limit.blocks->blocked_until(h, now);
  out.key_seen = until.has_value();
  if (until) out.total = blocked_decision(*until, now, limit.quota);
  if (op == KeyOp::kUnblock && until) {
    limit.blocks->unblock(h);
    out.total = core::Decision{true, 0, -1, 0, 0, -1};
  }
}

// The key asked of the script in Redis (request `kind`, one limit): concluded by conclude_key.
Progress ask_redis(const CompiledLimit& limit, std::string_view key,
                   backend::redis::RequestKind kind, std::int64_t cost, core::Nanos now,
                   Outcome& out) {
  std::unique_ptr<Remote, RemoteDeleter> remote = take_remote(out);
  remote->kind = AskKind::kKey;
  remote->local = out.applied.back().decision;
  remote->now = now;
  RemotePart& part = remote->one();
  part.applied.push_back(0);
  part.query.items.push_back(remote_item(limit, std::string(key), 0, now));
  part.query.cost = cost;
  part.query.kind = kind;
  remote_of(out) = std::move(remote);
  return Progress::kPending;
}

// A cost reported after the fact: settled in the key's slot, then the key's state; or by the
// script in Redis (kind s), which answers the state after it.
Progress report_key(const CompiledRule& rule, const CompiledLimit& limit, const KeyAsk& a,
                    core::Nanos now, Outcome& out) {
  const std::string name(a.rule);
  const auto not_settlable = [&] {
    refuse(out, ErrorKind::kNotSettlable,
           "rule '" + name + "' is " + limit.spec.algorithm +
               ": a report settles token-bucket, gcra, fixed-window and sliding-window rules "
               "(the others queue, delay or hold permits)");
    return Progress::kDone;
  };
  const bool enforced = rule.rule.action != config::Action::kDryRun;
  if (limit.in_redis()) {
    if (!spec::counts_denials(limit.spec)) return not_settlable();
    if (const std::int64_t lease = limit.remote->options().lease; lease > 0) {
      refuse(out, ErrorKind::kNotSettlable,
             "rule '" + name + "' leases permits from Redis (lease: " + std::to_string(lease) +
                 "), spent here ahead of Redis, which a report cannot settle; use lease: 0 "
                 "(exact)");
      return Progress::kDone;
    }
    out.applied.push_back(
        applied(limit, &rule.rule, core::Decision{true, 0, -1, 0, 0, -1}, enforced, nullptr));
    return ask_redis(limit, a.key, backend::redis::RequestKind::kSettle, a.cost, now, out);
  }
  const table::KeyHash h = table::hash_key(a.key);
  const core::Nanos at = now + limit.shift(now);
  if (!limit.table || !local::settle(limit.table->table, h, at, a.cost)) return not_settlable();
  out.applied.push_back(
      applied(limit, &rule.rule, core::Decision{true, 0, -1, 0, 0, -1}, enforced, nullptr));
  local_key(limit.table->table, h, KeyOp::kPeek, at, out);
  out.applied.back().decision = out.total;
  return Progress::kDone;
}

using backend::redis::RequestKind;
RequestKind redis_kind(KeyOp op) {
  switch (op) {
    case KeyOp::kReset:
      return RequestKind::kReset;
    case KeyOp::kBlock:
      return RequestKind::kBlockPeek;
    case KeyOp::kUnblock:
      return RequestKind::kUnblock;
    default:
      return RequestKind::kPeek;
  }
}

}  // namespace

Progress start_key(const Snapshot& snap, const KeyAsk& a, core::Nanos now, Outcome& out) {
  const CompiledRule* rule = snap.rule(a.rule);
  if (rule == nullptr) {
    refuse(out, ErrorKind::kUnknownRule, "unknown rule '" + std::string(a.rule) + "'");
    return Progress::kDone;
  }
  // A key's override holds its state; a tier's cannot be told from the key alone: the default.
  const CompiledLimit& limit = rule->limit_for(a.key, std::nullopt);
  const bool blocks_in_redis = limit.in_redis() && rule->rule.block;
  if ((a.op == KeyOp::kBlock || a.op == KeyOp::kUnblock) && !blocks_in_redis) {
    if (!limit.blocks) {
      refuse(out, ErrorKind::kNoBlocks,
             "rule '" + std::string(a.rule) + "' blocks no keys (it has no on_deny: block)");
      return Progress::kDone;
    }
    out.applied.push_back(
        applied(limit, &rule->rule, core::Decision{true, 0, -1, 0, 0, -1}, true, nullptr));
    block_key(limit, table::hash_key(a.key), a.op, now, out);
    out.applied.back().decision = out.total;
    return Progress::kDone;
  }
  if (a.op == KeyOp::kReport) return report_key(*rule, limit, a, now, out);
  if (a.op == KeyOp::kReset && is_concurrency(limit)) {
    // Forgetting the count would admit past the limit while its holders still run.
    refuse(out, ErrorKind::kNotResettable,
           "rule '" + std::string(a.rule) +
               "' is a concurrency limit: its permits go back when their holders release "
               "them or their permit_ttl ends, not by a reset");
    return Progress::kDone;
  }
  const bool enforced = rule->rule.action != config::Action::kDryRun;
  out.applied.push_back(
      applied(limit, &rule->rule, core::Decision{true, 0, -1, 0, 0, -1}, enforced, nullptr));
  if (limit.in_redis()) return ask_redis(limit, a.key, redis_kind(a.op), 0, now, out);
  local_key(limit.table->table, table::hash_key(a.key), a.op, now + limit.shift(now), out);
  out.applied.back().decision = out.total;
  return Progress::kDone;
}

void conclude_key(Outcome& out) {
  const Remote& remote = *remote_of(out);
  if (remote.source != backend::redis::Source::kRedis) {
    refuse(out, ErrorKind::kUnavailable,
           "rule '" + std::string(out.applied.front().limit.name) +
               "' is kept in Redis, which did not answer; try again when it is back");
    return;
  }
  out.key_seen = remote.seen;
  out.total = out.applied.front().decision;
}

}  // namespace sluice::engine::detail
