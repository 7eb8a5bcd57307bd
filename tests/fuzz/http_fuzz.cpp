// Fuzz target: the gateway's request path without sockets: the raw-byte head scan and
// Boost.Beast parsing with the gateway's limits, the framing checks, target/Host
// normalization, the engine's decision and its rate-limit fields.
//
// Input: byte 0 picks the read size, how "%2F" is treated and whether the peer is a trusted
// proxy; the rest is what a client sends on one connection (up to four pipelined requests).
// Each request goes the way ClientSession::serve_one takes it, through the same functions
// (request_framing, request_head.hpp, proxy_head), against a small fixed config that uses
// every key kind and every algorithm a table holds. A forwarded request's upstream head must
// parse back as exactly one request with the normalized target and the same body framing:
// what the gateway judged is what the upstream gets.
#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "client_session.hpp"  // the gateway's limits (kMaxHeaderBytes, kMaxTargetBytes)
#include "common/limit_fields.hpp"
#include "fields_arena.hpp"
#include "fuzz_check.hpp"
#include "proxy_head.hpp"
#include "request_framing.hpp"
#include "request_head.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/engine/engine.hpp"
#include "sluice/proto/http/ratelimit_fields.hpp"

namespace {

namespace gw = sluice::server::gateway;
namespace http = boost::beast::http;
using boost::system::error_code;
using sluice::core::Nanos;

// Routes on host, path and method; keys of every kind; each algorithm; trusted proxies so
// X-Forwarded-For and Forwarded are walked. Small tables: the fuzzer makes many keys.
// (Every algorithm but sliding-log, which a fixed-size table cannot hold.)
constexpr const char* kConfig = R"(
listen: 127.0.0.1:8080
trusted_proxies: [10.0.0.0/8, "::1"]
memory: 64KiB
headers: {ratelimit: true, legacy: true}
upstreams:
  app: {servers: ["127.0.0.1:9"]}
routes:
  - {name: health, match: {path_exact: /healthz, methods: [GET, HEAD]}, respond: {status: 200, body: "ok\n"}}
  - {name: login, match: {path_exact: /login, methods: [POST]}, upstream: app, rules: [login]}
  - name: api
    match: {host: api.example.com, path_prefix: /api/}
    upstream: app
    rules: [global, per-user, per-key, trial]
    combine: all
  - {name: search, match: {path_prefix: /search/}, upstream: app, rules: [global, per-ip], combine: first}
  - {name: upload, match: {path_prefix: /upload/, methods: [POST, PUT]}, upstream: app, rules: [in-flight]}
  - {name: reports, match: {path_prefix: /reports/}, upstream: app, rules: [queue, smooth, warm, log]}
  - {name: rest, match: {path_prefix: /}, upstream: app, rules: [per-ip, per-host]}
rules:
  per-ip: {limit: "token-bucket:rate=5/s,burst=10", key: client_ip}
  global: {limit: "gcra:rate=1000/s,burst=100", key: "const:global"}
  per-user: {limit: "token-bucket:rate=10/s,burst=20", key: "query:userId", action: delay, max_wait: 500ms}
  per-key: {limit: "sliding-window:limit=600,window=1m", key: "header:X-Api-Key", on_missing_key: deny, status: 401}
  trial: {limit: "fixed-window:limit=100,window=1m", key: [client_ip, method], action: dry-run}
  login: {limit: "sliding-window:limit=5,window=1m", key: [client_ip, path]}
  in-flight: {limit: "concurrency:limit=2", key: "cookie:session", status: 503}
  queue: {limit: "queue:rate=10/s,max-wait=1s", key: [client_ip, route], action: delay, max_wait: 5s}
  smooth: {limit: "smooth-bursty:rate=20/s", key: [host, path], action: delay, max_wait: 1s}
  warm: {limit: "smooth-warmup:rate=20/s,warmup=2s", key: "header:X-Tenant", action: delay, max_wait: 1s}
  log: {limit: "leaky-bucket:rate=2/s,burst=10,delay=3", key: "cookie:session", action: delay, max_wait: 5s}
  per-host: {limit: "sliding-window:limit=50,window=1s", key: host}
)";

sluice::engine::Engine& the_engine() {
  static sluice::engine::Engine* engine = [] {
    auto loaded = sluice::config::load_config_text(kConfig, "http_fuzz.yaml");
    if (!loaded.rules) std::fprintf(stderr, "%s\n", loaded.errors.front().format().c_str());
    SLUICE_FUZZ_CHECK(loaded.rules.has_value(), "the fuzzer's own config loads");
    return new sluice::engine::Engine(std::move(*loaded.rules), 0);
  }();
  return *engine;
}

// Reused across requests, as a session reuses its own.
sluice::engine::Outcome& outcome() {
  static auto* out = new sluice::engine::Outcome;
  return *out;
}
sluice::server::LimitFields& fields() {
  static auto* f = new sluice::server::LimitFields;
  return *f;
}

using Parser = http::request_parser<http::buffer_body, gw::ArenaAllocator<char>>;

// Feeds the head in reads of `read` bytes as read_head() does, the scanner seeing each byte
// before the parser; `pos` moves past what the parser consumed. False when the head is
// refused or the input ends first.
bool read_head(Parser& p, std::string_view bytes, std::size_t& pos, std::size_t read) {
  gw::HeadScanner scanner;
  std::size_t avail = std::min(bytes.size(), pos + read);
  while (!p.is_header_done()) {
    if (scanner.scan(bytes.substr(pos, avail - pos))) return false;  // 400
    error_code ec;
    const std::size_t used = p.put(boost::asio::buffer(bytes.data() + pos, avail - pos), ec);
    pos += used;
    scanner.consumed(used);
    if (!ec && used > 0) continue;
    if (ec && ec != http::error::need_more) return false;  // 400, 414 or 431: then close
    if (avail == bytes.size()) return false;               // the client stopped mid-head
    avail = std::min(bytes.size(), avail + read);
  }
  return true;
}

// Reads the body piece by piece as read_body_piece() does; false when it is malformed or
// cut short (the gateway answers 400 or drops the connection).
bool read_body(Parser& p, std::string_view bytes, std::size_t& pos, std::uint64_t& length) {
  char piece[512];
  while (!p.is_done()) {
    auto& body = p.get().body();
    body.data = piece;
    body.size = sizeof piece;
    error_code ec;
    if (pos == bytes.size()) {
      p.put_eof(ec);
      return !ec && p.is_done();
    }
    const std::size_t used = p.put(boost::asio::buffer(bytes.data() + pos, bytes.size() - pos), ec);
    pos += used;
    length += sizeof piece - body.size;
    if (ec == http::error::need_buffer) continue;
    if (ec == http::error::need_more) {
      p.put_eof(ec);
      return !ec && p.is_done();
    }
    if (ec) return false;
  }
  return true;
}

// The rate-limit fields go into the response head: whatever a client sent, each is one
// "Name: value" line, so no key or rule text can add a field of its own.
void check_field_lines(std::string_view lines) {
  while (!lines.empty()) {
    const std::size_t end = lines.find("\r\n");
    SLUICE_FUZZ_CHECK(end != std::string_view::npos, "every field line ends in CRLF");
    const std::string_view line = lines.substr(0, end);
    SLUICE_FUZZ_CHECK(line.find_first_of("\r\n") == std::string_view::npos,
                      "a field line holds no line break");
    SLUICE_FUZZ_CHECK(line.find(": ") != std::string_view::npos, "a field line is Name: value");
    lines.remove_prefix(end + 2);
  }
}

// What the upstream reads from the head the gateway writes for it.
void check_upstream_head(const http::request_header<gw::Fields>& req, const gw::HeadTarget& target,
                         const Parser& client) {
  gw::Framing framing = gw::Framing::kNone;
  std::uint64_t length = 0;
  if (client.chunked()) {
    framing = gw::Framing::kChunked;
  } else if (const auto n = client.content_length()) {
    framing = gw::Framing::kLength;
    length = *n;
  }
  std::string head;
  gw::append_upstream_request_head(head, req, target.parts, "203.0.113.9", "for=203.0.113.9",
                                   framing, length, "127.0.0.1:9");
  http::request_parser<http::empty_body> up;
  up.header_limit(static_cast<std::uint32_t>(head.size()) + 1);
  up.body_limit(boost::none);  // the upstream's own limit is not the gateway's concern
  up.eager(false);
  error_code ec;
  const std::size_t used = up.put(boost::asio::buffer(head), ec);
  if (ec || !up.is_header_done()) {
    std::fprintf(stderr, "upstream head (%s):\n%s\n", ec.message().c_str(), head.c_str());
  }
  SLUICE_FUZZ_CHECK(!ec && up.is_header_done(), "the upstream head parses");
  SLUICE_FUZZ_CHECK(used == head.size(), "the upstream head is one head, nothing after it");
  std::string want(target.parts.path);
  if (target.parts.has_query) {
    want += '?';
    want += target.parts.query;
  }
  SLUICE_FUZZ_CHECK(up.get().target() == want, "the upstream gets the normalized target");
  SLUICE_FUZZ_CHECK(up.get().method_string() == req.method_string(), "the method is kept");
  SLUICE_FUZZ_CHECK(up.get().count(http::field::host) == 1, "the upstream gets one Host");
  SLUICE_FUZZ_CHECK(up.chunked() == (framing == gw::Framing::kChunked), "the body framing is kept");
  if (framing == gw::Framing::kLength) {
    SLUICE_FUZZ_CHECK(up.content_length() && *up.content_length() == length,
                      "the body length is kept");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static Nanos now = sluice::core::kNanosPerSecond;
  const std::size_t read = 1 + (data[0] & 0x1f) * 16;  // 1 to 497 bytes a read
  const auto slashes = static_cast<sluice::proto::http::EscapedSlashes>(((data[0] >> 5) & 3) % 3);
  const std::string_view peer = (data[0] & 0x80) != 0 ? "10.0.0.1" : "203.0.113.9";
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  std::size_t pos = 0;
  for (int request = 0; request < 4 && pos < bytes.size(); ++request) {
    gw::Arena arena;
    Parser p(std::piecewise_construct, std::make_tuple(),
             std::make_tuple(gw::ArenaAllocator<char>(arena)));
    p.header_limit(gw::kMaxHeaderBytes);
    p.body_limit(boost::none);
    if (!read_head(p, bytes, pos, read)) return 0;
    const auto& req = p.get();
    if (gw::check_request_framing(req)) return 0;             // 400 or 501
    if (req.target().size() > gw::kMaxTargetBytes) return 0;  // 414
    gw::HeadTarget target;
    sluice::engine::RequestView view;
    if (!gw::read_request_head(req, slashes, target, view)) return 0;  // 400
    SLUICE_FUZZ_CHECK(!view.path.empty() && view.path[0] == '/', "a routed path starts with /");

    std::vector<sluice::engine::Header> headers;
    for (const auto& f : req) headers.push_back({f.name_string(), f.value()});
    view.peer = peer;
    view.headers = headers;
    now += sluice::core::kNanosPerMilli;
    sluice::engine::Outcome& out = outcome();
    the_engine().decide(view, now, out);
    SLUICE_FUZZ_CHECK(out.verdict != sluice::engine::Verdict::kInvalid,
                      "an HTTP request is never an invalid ask");
    const auto& rules = out.rules();
    sluice::server::limit_fields(out, fields());
    std::string lines;
    sluice::proto::http::append_ratelimit_fields(
        lines, fields(), sluice::server::field_choice(rules), sluice::server::retry_after(out));
    check_field_lines(lines);
    if (out.verdict == sluice::engine::Verdict::kAllow && out.upstream() != nullptr) {
      check_upstream_head(req, target, p);
    }
    out.reset();
    std::uint64_t body = 0;
    if (!read_body(p, bytes, pos, body)) return 0;
    if (!p.keep_alive()) return 0;
  }
  return 0;
}
