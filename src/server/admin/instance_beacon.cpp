// InstanceBeacon (instance_beacon.hpp).
#include "instance_beacon.hpp"

#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>

#include "dashboard_handlers.hpp"
#include "sluice/control/config_store.hpp"
#include "sluice/version.hpp"

namespace sluice::server {
namespace {

namespace json = boost::json;

std::string hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// One listed instance: what it wrote of itself, and how it is seen from here.
json::object row(const engine::InstanceRecord& r, std::int64_t now_ms, const std::string& self) {
  json::object o;
  if (r.live) {
    boost::system::error_code ec;
    json::value about = json::parse(r.about, ec);
    if (!ec && about.is_object()) o = std::move(about.as_object());
  }
  o["id"] = r.id;
  o["self"] = r.id == self;
  o["live"] = r.live;
  o["last_seen_unix_ms"] = r.last_seen_ms;
  o["seen_seconds_ago"] = static_cast<double>(now_ms - r.last_seen_ms) / 1000.0;
  return o;
}

}  // namespace

InstanceBeacon::InstanceBeacon(boost::asio::io_context& io, engine::Loop& loop,
                               std::shared_ptr<const control::ConfigStore> store,
                               const core::Clock& wall)
    : loop_(loop), store_(std::move(store)), wall_(wall), timer_(io), host_(hostname()) {
  started_ms_ = wall_.now() / core::kNanosPerMilli;
  id_ = host_ + ":" + std::to_string(::getpid()) + ":" + std::to_string(started_ms_);
}

void InstanceBeacon::start() {
  boost::asio::post(timer_.get_executor(), [self = shared_from_this()] {
    self->beat();
    self->arm();
  });
}

void InstanceBeacon::stop() {
  boost::asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
}

void InstanceBeacon::arm() {
  timer_.expires_after(std::chrono::milliseconds(engine::kHeartbeatEveryMs));
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    self->beat();
    self->arm();
  });
}

void InstanceBeacon::beat() { loop_.heartbeat(id_, about(), wall_.now() / core::kNanosPerMilli); }

std::string InstanceBeacon::about() const {
  const auto rules = store_->rules();
  return json::serialize(json::object{{"host", host_},
                                      {"pid", static_cast<std::int64_t>(::getpid())},
                                      {"version", sluice::version()},
                                      {"commit", sluice::git_commit()},
                                      {"config_version", store_->engine().version()},
                                      {"started_unix_ms", started_ms_},
                                      {"listeners", listener_list(*rules)}});
}

Reply InstanceBeacon::list() {
  Reply reply;
  reply.later = [self = shared_from_this()](std::function<void(Reply)> done) {
    const std::int64_t now_ms = self->wall_.now() / core::kNanosPerMilli;
    if (const auto rules = self->store_->rules(); !(rules->redis && rules->redis->configured())) {
      done(json_reply(
          200, json::object{{"redis", false}, {"self", self->id_}, {"instances", json::array{}}}));
      return;
    }
    self->loop_.instances(now_ms, [self, now_ms, done = std::move(done)](auto records) {
      if (!records) {
        done(error_reply(503, "Redis did not answer the list of instances", "redis"));
        return;
      }
      json::array rows;
      for (const auto& r : *records) rows.push_back(row(r, now_ms, self->id_));
      done(json_reply(200, json::object{{"redis", true},
                                        {"self", self->id_},
                                        {"heartbeat_every_ms", engine::kHeartbeatEveryMs},
                                        {"heartbeat_ttl_ms", engine::kHeartbeatTtlMs},
                                        {"instances", std::move(rows)}}));
    });
  };
  return reply;
}

}  // namespace sluice::server
