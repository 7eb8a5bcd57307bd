// check_redis_store (internal.hpp): what no single field of `redis:` shows wrong. Redis is named
// one way (a url, or sentinels with a master); Redis Cluster has only database 0; an ACL user
// needs a password; the sentinels' own AUTH applies only with sentinels; TLS files that go
// together are given together.
#include <string>
#include <string_view>

#include "internal.hpp"
#include "sluice/proto/resp/store_url.hpp"

namespace sluice::config::internal {
namespace {

class RedisCheck {
 public:
  RedisCheck(const Origin& top, Errors& errors) : top_(top), errors_(errors) {}

  // Reports `problem` at `field` ("redis.db") unless the field was already found unreadable.
  void fail(std::string_view field, const std::string& problem) {
    if (!top_.ok(field)) return;
    errors_.add(top_.at(field), "field " + quoted(field) + ": " + problem);
  }
  bool written(std::string_view field) const { return top_.written(field); }

 private:
  const Origin& top_;
  Errors& errors_;
};

void check_url(const RedisSettings& r, const proto::resp::StoreUrl* url, RedisCheck& c) {
  if (!r.url.empty() && !r.sentinels.empty()) {
    c.fail("redis.sentinels",
           "give redis.url or redis.sentinels (with master), not both; a url of the form "
           "redis-sentinel://HOST:PORT,HOST:PORT/MASTER names sentinels too");
  }
  if (r.url.empty() && !r.sentinels.empty() && r.master.empty()) {
    c.fail("redis.sentinels",
           "the sentinels need the name of the master they watch: add master: NAME (as in "
           "the sentinels' `sentinel monitor NAME ...`)");
  }
  if (!r.master.empty() && r.sentinels.empty()) {
    c.fail("redis.master",
           "applies to Sentinel discovery: add sentinels: [HOST:PORT, ...] (or use a "
           "redis-sentinel://HOST:PORT/MASTER url)");
  }
  if (url != nullptr && url->cluster && r.db && *r.db != 0) {
    c.fail("redis.db", "Redis Cluster has only database 0, so redis-cluster:// cannot select " +
                           std::to_string(*r.db) +
                           "; leave db out, or keep the data apart by "
                           "another key prefix (another rule name)");
  }
}

void check_auth(const RedisSettings& r, const proto::resp::StoreUrl* url, RedisCheck& c) {
  const bool user = !r.auth.user.empty() || (url != nullptr && !url->auth.user.empty());
  if (user && r.auth.password_file.empty() && r.auth.password_env.empty()) {
    c.fail(c.written("redis.user") ? "redis.user" : "redis.url",
           "AUTH with an ACL user needs its password too: add password_file or password_env");
  }
  const bool sentinel = url != nullptr && url->sentinel;
  for (std::string_view f :
       {"redis.sentinel_user", "redis.sentinel_password_file", "redis.sentinel_password_env"}) {
    if (c.written(f) && !sentinel && url != nullptr) {
      c.fail(f,
             "applies only to Sentinel discovery (the sentinels' own AUTH); the data "
             "node's AUTH is user and password_file or password_env");
    }
  }
  if (!r.sentinel_auth.user.empty() && r.sentinel_auth.password_file.empty() &&
      r.sentinel_auth.password_env.empty()) {
    c.fail("redis.sentinel_user",
           "AUTH with an ACL user needs its password too: add sentinel_password_file or "
           "sentinel_password_env");
  }
}

void check_tls(const RedisSettings& r, RedisCheck& c) {
  if (!r.tls) return;
  const RedisTls& t = *r.tls;
  if (!t.cert_file.empty() && t.key_file.empty()) {
    c.fail("redis.tls.cert_file", "a client certificate needs its key too: add key_file");
  }
  if (t.cert_file.empty() && !t.key_file.empty()) {
    c.fail("redis.tls.key_file", "a client key needs its certificate too: add cert_file");
  }
  if (!t.verify) {
    for (std::string_view f : {"redis.tls.ca_file", "redis.tls.ca_dir"}) {
      if (c.written(f)) {
        c.fail(f, "verify: false checks no certificate, so a CA is not used; drop one of them");
      }
    }
  }
}

}  // namespace

void check_redis_store(const RedisSettings& r, const Origin& top, Errors& errors) {
  RedisCheck c(top, errors);
  std::optional<proto::resp::StoreUrl> url;
  if (!r.url.empty()) {
    if (auto parsed = proto::resp::parse_store_url(r.url); !parsed) {
      c.fail("redis.url", parsed.error() +
                              " (e.g. redis://127.0.0.1:6379, rediss://10.0.0.1:6380/2, "
                              "redis-cluster://10.0.0.1:7000,10.0.0.2:7000 or "
                              "redis-sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster)");
    } else {
      url = std::move(parsed).value();
    }
  } else if (!r.sentinels.empty()) {
    url.emplace();
    url->sentinel = true;
  }
  check_url(r, url ? &*url : nullptr, c);
  check_auth(r, url ? &*url : nullptr, c);
  check_tls(r, c);
}

}  // namespace sluice::config::internal
