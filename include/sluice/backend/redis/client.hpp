// The asynchronous Redis client of the Redis backend: one per event loop, pipelined, with its
// own timeouts, reconnects and Redis Cluster routing, so the backend only sees replies or failures.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/backend/redis/endpoint.hpp"
#include "sluice/backend/redis/reply.hpp"
#include "sluice/backend/redis/wire_args.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/core/time.hpp"

namespace sluice::backend::redis {

// Writes "sluice: redis: <line>" to stderr.
void log_to_stderr(const std::string& line);

struct ClientOptions {
  // Where Redis is and how to reach it: standalone, cluster or sentinel; AUTH, db, TLS.
  StoreUrl url;
  // The time deadlines are measured in, injected by the loop that owns the client (null: the
  // steady clock, filled in by the client, so that this header reads no clock).
  const core::Clock* clock = nullptr;
  // Per command, from submit to the reply callback, redirects, retries and connect waits included.
  core::Nanos timeout = 50 * core::kNanosPerMilli;
  core::Nanos connect_timeout = 50 * core::kNanosPerMilli;
  // Delay before the next connect attempt after a loss or a failed attempt: doubles from min to
  // max while attempts fail, back to min once one succeeds.
  core::Nanos reconnect_min = 10 * core::kNanosPerMilli;
  core::Nanos reconnect_max = core::kNanosPerSecond;
  // Cluster: the slot map is read again (CLUSTER SLOTS) this often, and at once after a MOVED or
  // a lost node. 0: only then.
  core::Nanos topology_refresh = 5 * core::kNanosPerSecond;
  // Commands waiting for a reply on one connection; past that a command fails kOverloaded at once
  // rather than queueing behind a server that is not keeping up.
  std::size_t max_pending = std::size_t{1} << 16;
  // Where the client says why a connection failed, and that it is back, a line each
  // ("sluice: redis: ..."): stderr; null: nowhere (sluice replay, whose stderr is its errors).
  void (*log)(const std::string& line) = &log_to_stderr;
  friend bool operator==(const ClientOptions&, const ClientOptions&) = default;
};

// A Lua script called by its SHA1 (EVALSHA). The client loads it (SCRIPT LOAD) the first time a
// node answers NOSCRIPT (first use, after a restart or SCRIPT FLUSH) and retries the call.
class Script {
 public:
  explicit Script(std::string text);
  const std::string& text() const { return text_; }
  const std::string& sha1() const { return sha1_; }  // 40 lowercase hex digits, as Redis names it

 private:
  std::string text_;
  std::string sha1_;
};

namespace detail {
class ClientCore;
}

// One client per io_context; not thread-safe: call it only from the thread running that
// io_context. Every callback runs on that io_context exactly once, and never inside the
// command()/eval() call that submitted it. Commands submitted in one loop turn are written to
// each connection together (one write); replies come back in submission order per connection.
//
// Every connection opens with AUTH (or PING when there is no password), SELECT when the db is
// not 0, and ROLE for a master found through Sentinel, before any command is written to it; a
// refusal fails the attempt like a refused connect (Stats::refused_connects, a line on stderr).
// With TLS, the stream is verified (chain and name) unless the url's tls.verify is off.
//
// Standalone: one connection, opened at construction, reconnected by itself with backoff.
// Sentinel: the master the sentinels name (asked at construction, again when it fails or
// answers READONLY, and at each +switch-master); commands wait for the first answer within
// their deadline; a switch fails what waited on the old master and reconnects to the new one.
// Cluster: one connection per master, opened on first use; commands go to the owner of their
// key's slot; MOVED updates the slot map (and triggers a full refresh), ASK is followed once
// with ASKING, TRYAGAIN and CLUSTERDOWN are retried shortly while the deadline allows.
//
// While a connection is down (between connect attempts) its commands fail at once with
// Failure::kConnection so the caller's failure policy answers without waiting; while an attempt
// is in progress they queue and fail by their deadline if it does not succeed in time.
class Client {
 public:
  Client(boost::asio::io_context& io, ClientOptions options);
  ~Client();  // close()s
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends `args` (the command name first; binary-safe). `routing_key` picks the cluster slot
  // (hash tags honoured); standalone ignores it.
  void command(std::vector<std::string> args, std::string_view routing_key, Callback cb);

  // EVALSHA script.sha1() with `keys` and `args`; routed by keys[0] (keys may be empty: then
  // any node). NOSCRIPT is handled here: SCRIPT LOAD on that node, then the call again.
  void eval(const Script& script, std::vector<std::string> keys, std::vector<std::string> args,
            Callback cb);
  // The same with `key_count` keys and then the arguments already in RESP (ScriptBatch::wire):
  // the command is written once, around them. Routed by `routing_key` (the first key).
  void eval(const Script& script, std::string_view routing_key, std::size_t key_count,
            const WireArgs& tail, Callback cb);

  // At least one live connection (standalone: the connection).
  bool connected() const;

  struct Stats {
    std::uint64_t commands = 0;            // command() and eval() calls
    std::uint64_t replies = 0;             // callbacks given a Reply (error replies included)
    std::uint64_t failures = 0;            // callbacks given a Failure (timeouts included)
    std::uint64_t timeouts = 0;            // failures of kind kTimeout
    std::uint64_t moved = 0;               // MOVED redirects followed
    std::uint64_t ask = 0;                 // ASK redirects followed
    std::uint64_t reconnects = 0;          // connections established again after a loss
    std::uint64_t script_loads = 0;        // SCRIPT LOAD sent after NOSCRIPT
    std::uint64_t topology_refreshes = 0;  // cluster slot maps read (CLUSTER SLOTS)
    std::uint64_t refused_connects = 0;    // attempts refused at AUTH, SELECT or ROLE
    std::uint64_t tls_failures = 0;        // attempts failed at the TLS handshake or its check
    std::uint64_t master_switches = 0;     // sentinel: moves to another master (failovers)
  };
  const Stats& stats() const;

  // Fails every command still waiting with kConnection, closes the connections and stops the
  // timers; later commands fail with kConnection. May be called from a callback. Idempotent.
  void close();

 private:
  std::unique_ptr<detail::ClientCore> core_;
};

}  // namespace sluice::backend::redis
