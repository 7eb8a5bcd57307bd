// Server commands (command_handlers.hpp).
#include <fnmatch.h>
#include <strings.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "command_handlers.hpp"
#include "command_table.hpp"

namespace sluice::server::resp {

namespace {

// One COMMAND entry in Redis 7's shape: name, arity, flags, first key, last key, step, ACL
// categories, tips, key specs, subcommands.
void write_entry(proto::resp::ReplyWriter& out, const CommandInfo& c) {
  out.array(10);
  out.bulk(c.name);
  out.integer(c.arity);
  out.set(0);
  out.integer(c.first_key);
  out.integer(c.last_key);
  out.integer(c.key_step);
  out.set(0);
  out.array(0);
  out.array(0);
  out.array(c.subcommands.size());
  for (const CommandInfo& s : c.subcommands) write_entry(out, s);
}

// What CONFIG GET knows: enough for redis-benchmark's start-up probe ("save", "appendonly").
constexpr std::pair<std::string_view, std::string_view> kConfig[] = {
    {"appendonly", "no"}, {"databases", "1"}, {"maxmemory", "0"}, {"save", ""}};

bool wants(std::span<const std::string_view> sections, std::string_view name) {
  if (sections.empty()) return true;
  for (std::string_view s : sections) {
    if (strncasecmp(s.data(), "all", s.size()) == 0 && s.size() == 3) return true;
    if (strncasecmp(s.data(), "everything", s.size()) == 0 && s.size() == 10) return true;
    if (strncasecmp(s.data(), "default", s.size()) == 0 && s.size() == 7) return true;
    if (s.size() == name.size() && strncasecmp(s.data(), name.data(), s.size()) == 0) return true;
  }
  return false;
}

void section(std::string& info, std::string_view title) {
  if (!info.empty()) info += "\r\n";
  info += "# ";
  info += title;
  info += "\r\n";
}

void field(std::string& info, std::string_view name, const std::string& value) {
  info += name;
  info += ':';
  info += value;
  info += "\r\n";
}

// A counter of the server's, as it stands.
template <class T>
void counter(std::string& info, std::string_view name, const std::atomic<T>& value) {
  field(info, name, std::to_string(value.load(std::memory_order_relaxed)));
}

}  // namespace

void command(Context& ctx, std::span<const std::string_view>) {
  const auto rows = command_table();
  ctx.out.array(rows.size());
  for (const CommandInfo& c : rows) write_entry(ctx.out, c);
}

void command_count(Context& ctx, std::span<const std::string_view>) {
  ctx.out.integer(static_cast<std::int64_t>(command_table().size()));
}

// No documentation is served: an empty map (redis-cli then shows no hints).
void command_docs(Context& ctx, std::span<const std::string_view>) { ctx.out.map(0); }

void command_info(Context& ctx, std::span<const std::string_view> args) {
  const auto rows = command_table();
  if (args.size() == 2) return command(ctx, args);
  ctx.out.array(args.size() - 2);
  for (std::size_t i = 2; i < args.size(); ++i) {
    const CommandInfo* c = find_command(rows, args[i]);
    if (c == nullptr) {
      ctx.out.null();
    } else {
      write_entry(ctx.out, *c);
    }
  }
}

void command_list(Context& ctx, std::span<const std::string_view>) {
  const auto rows = command_table();
  ctx.out.array(rows.size());
  for (const CommandInfo& c : rows) ctx.out.bulk(c.name);
}

void config_get(Context& ctx, std::span<const std::string_view> args) {
  std::vector<std::pair<std::string_view, std::string_view>> found;
  for (const auto& kv : kConfig) {
    for (std::size_t i = 2; i < args.size(); ++i) {
      const std::string pattern(args[i]);
      const std::string name(kv.first);
      if (fnmatch(pattern.c_str(), name.c_str(), FNM_CASEFOLD) == 0) {
        found.push_back(kv);
        break;
      }
    }
  }
  ctx.out.map(found.size());
  for (const auto& [k, v] : found) {
    ctx.out.bulk(k);
    ctx.out.bulk(v);
  }
}

void info(Context& ctx, std::span<const std::string_view> args) {
  const auto sections = args.subspan(1);
  const ServerState& s = ctx.server;
  std::string text;
  if (wants(sections, "server")) {
    section(text, "Server");
    // The Redis version whose protocol subset Sluice speaks (HELLO, RESP3, error texts).
    field(text, "redis_version", "7.0.0");
    field(text, "sluice_version", SLUICE_VERSION);
    field(text, "redis_mode", "standalone");
    field(text, "arch_bits", std::to_string(sizeof(void*) * 8));
    field(text, "process_id", std::to_string(::getpid()));
    field(text, "tcp_port", std::to_string(s.port));
    field(text, "uptime_in_seconds", std::to_string((ctx.now - s.started) / core::kNanosPerSecond));
  }
  if (wants(sections, "clients")) {
    section(text, "Clients");
    counter(text, "connected_clients", s.connected);
  }
  if (wants(sections, "stats")) {
    section(text, "Stats");
    counter(text, "total_connections_received", s.connections_received);
    counter(text, "total_commands_processed", s.commands_processed);
    counter(text, "rejected_connections", s.rejected_connections);
    counter(text, "total_protocol_errors", s.protocol_errors);
    // Redis 7.2's name for the AUTHs that failed (its ACL LOG's "auth" entries).
    field(text, "acl_access_denied_auth",
          std::to_string(s.auth_wrong.load(std::memory_order_relaxed) +
                         s.auth_refused.load(std::memory_order_relaxed)));
  }
  if (wants(sections, "sluice")) {
    const engine::TableUse t = s.engine.throttle_use();
    section(text, "Sluice");
    field(text, "throttle_keys", std::to_string(t.keys));
    field(text, "throttle_capacity", std::to_string(t.capacity));
    field(text, "throttle_evictions", std::to_string(t.evictions));
    field(text, "throttle_memory_bytes", std::to_string(t.memory_bytes));
    field(text, "check_rules", ctx.loop.rules().rules.empty() ? "none" : "configured");
    counter(text, "auth_failures_refused", s.auth_refused);
    counter(text, "auth_connections_closed", s.auth_closed);
    counter(text, "queue_refused_commands", s.queue_refused);
  }
  ctx.out.verbatim(text);
}

}  // namespace sluice::server::resp
