// UpstreamPool (upstream_pool.hpp).
#include "upstream_pool.hpp"

#include <sys/socket.h>

#include <cerrno>

#include "sluice/config/loader.hpp"

namespace sluice::server::gateway {

namespace {

// A pooled connection the server closed (or wrote to unasked) must not carry a request: peek
// without blocking; "would block" is the only healthy answer.
bool still_open(Socket& s) {
  char c;
  const ssize_t n = ::recv(s.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace

UpstreamState& UpstreamPool::state(const config::Upstream& upstream, std::uint64_t version) {
  auto it = upstreams_.find(upstream.name);
  if (it == upstreams_.end()) {
    it = upstreams_.emplace(upstream.name, UpstreamState{}).first;
    it->second.stats = &stats_.upstream(upstream.name);
  }
  UpstreamState& up = it->second;
  if (up.version == version && !up.servers.empty()) return up;
  up.version = version;
  up.max_fails = upstream.max_fails;
  up.fail_timeout = upstream.fail_timeout;
  std::vector<std::shared_ptr<ServerState>> servers;
  servers.reserve(upstream.servers.size());
  for (const auto& ep : upstream.servers) {
    std::shared_ptr<ServerState> kept;
    for (auto& s : up.servers) {
      if (s && s->endpoint == ep) {
        kept = std::move(s);
        break;
      }
    }
    if (!kept) {
      kept = std::make_shared<ServerState>();
      kept->endpoint = ep;
      kept->authority = config::format_endpoint(ep);
    }
    servers.push_back(std::move(kept));
  }
  up.servers = std::move(servers);
  if (up.next >= up.servers.size()) up.next = 0;
  return up;
}

std::shared_ptr<ServerState> UpstreamPool::pick(UpstreamState& up, core::Nanos now,
                                                std::uint64_t& tried) {
  const std::size_t n = up.servers.size();
  std::size_t fallback = n;
  for (std::size_t k = 0; k < n && k < 64; ++k) {
    const std::size_t i = (up.next + k) % n;
    if (tried & (std::uint64_t{1} << i)) continue;
    if (up.servers[i]->down_until > now) {
      if (fallback == n) fallback = i;
      continue;
    }
    up.next = (i + 1) % n;
    tried |= std::uint64_t{1} << i;
    return up.servers[i];
  }
  if (fallback == n) return nullptr;
  up.next = (fallback + 1) % n;
  tried |= std::uint64_t{1} << fallback;
  return up.servers[fallback];
}

std::unique_ptr<UpstreamConnection> UpstreamPool::take_idle(ServerState& server, bool check) {
  while (!server.idle.empty()) {
    auto conn = std::move(server.idle.back());
    server.idle.pop_back();
    if (!check || still_open(conn->socket)) {
      conn->reused = true;
      return conn;
    }
  }
  return nullptr;
}

void UpstreamPool::put_idle(ServerState& server, std::unique_ptr<UpstreamConnection> conn) {
  if (server.idle.size() >= kMaxIdle) return;  // closed as it goes out of scope
  server.idle.push_back(std::move(conn));
}

void UpstreamPool::failed(UpstreamState& up, ServerState& server, core::Nanos now) {
  up.stats->failures.add();
  if (up.max_fails > 0 && ++server.fails >= up.max_fails) {  // 0: never marked down, as nginx
    server.down_until = now + up.fail_timeout;
    server.fails = 0;
    server.idle.clear();
  }
}

}  // namespace sluice::server::gateway
