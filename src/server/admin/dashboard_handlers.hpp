// The dashboard's endpoints (docs/dashboard.md): its page and scripts (/ui/), the live rates
// (GET /v1/stats/series), what the process runs (GET /v1/status) and the last rule change
// (GET /v1/changes/last). Read-only: edits go through PUT /v1/rules/{name} like any client's.
#pragma once

#include <boost/json/array.hpp>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "admin_reply.hpp"
#include "sluice/config/rule_set.hpp"
#include "sluice/metrics/registry.hpp"

namespace sluice::control {
class ConfigStore;
}  // namespace sluice::control

namespace sluice::server {

class StatsSampler;

// GET /ui/ and /ui/{file}: the page and its assets, built into the binary (ui/, embed_ui.cmake).
Reply ui_file(std::string_view file);

// GET /v1/stats/series?since=UNIX_S: every series' points after `since` (all 900 without it).
Reply stats_series(const StatsSampler& sampler, std::string_view query);

// The listeners this process was started with: [{"name", "address"}].
boost::json::array listener_list(const config::RuleSet& rules);

// GET /v1/status: build, listeners, Redis, each rule's storage and table.
Reply status(const control::ConfigStore& store, const metrics::Registry& registry,
             const StatsSampler* sampler);

// The last rule change made through the admin API: the rule's YAML before and after, so the
// dashboard can show a line diff. Thread-safe.
class LastChange {
 public:
  // `before` / `after`: none when the rule was added / deleted.
  void record(const std::string& rule, const std::optional<config::Rule>& before,
              const std::optional<config::Rule>& after, std::int64_t unix_second);
  Reply reply() const;  // GET /v1/changes/last

 private:
  mutable std::mutex mutex_;
  std::string rule_;  // "" before any change
  std::string before_, after_;
  std::int64_t at_ = 0;
};

}  // namespace sluice::server
