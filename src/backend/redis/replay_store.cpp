// ReplayStore (sluice/backend/redis/replay_store.hpp).
#include "sluice/backend/redis/replay_store.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <map>

#include "sluice/backend/redis/key_slot.hpp"
#include "sluice/backend/redis/script.hpp"

namespace sluice::backend::redis {

namespace {
// A block is one script call per slot; Redis runs a script to the end, so a generous timeout
// (a long block on a loaded machine) is not a sign of failure.
constexpr core::Nanos kReplayTimeout = 30 * core::kNanosPerSecond;
}  // namespace

ReplayStore::ReplayStore(const StoreUrl& url, const std::vector<spec::LimitSpec>& specs,
                         core::Nanos max_wait, std::string_view run)
    : script_{std::string(script_text())}, cluster_(url.cluster), max_wait_(max_wait) {
  ClientOptions options;
  options.url = url;
  options.timeout = kReplayTimeout;
  options.connect_timeout = 2 * core::kNanosPerSecond;
  options.log = nullptr;  // replay's stderr carries its own error, one line
  client_ = std::make_unique<Client>(io_, options);
  for (const auto& s : specs) {
    limits_.push_back(script_limit(s));
    const auto* window = std::get_if<core::FixedWindow::Params>(&s.params);
    calendars_.push_back(window != nullptr ? window->calendar : nullptr);
  }
  prefix_ = fmt::format("sluice:replay:{}:", run);
}

ReplayStore::~ReplayStore() {
  client_->close();
  io_.restart();
  io_.poll();
}

core::Expected<std::vector<core::Decision>> ReplayStore::decide(
    const std::vector<ReplayRequest>& block) {
  // Group by slot, keeping trace order within each group (a key's requests stay in order).
  std::map<std::uint16_t, std::vector<std::size_t>> groups;
  std::vector<std::string> keys(block.size());
  for (std::size_t i = 0; i < block.size(); ++i) {
    // All limits of one trace key share a hash tag: one script decides them together.
    keys[i] = prefix_ + "{k" + block[i].key + "}:";
    groups[cluster_ ? key_slot(keys[i]) : 0].push_back(i);
  }
  std::vector<core::Decision> out(block.size());
  std::string error;
  std::size_t outstanding = groups.size();
  for (const auto& [slot, indexes] : groups) {
    // Virtual time: the script keeps states at least an hour (the trace's clock is not Redis's).
    ScriptBatch batch(ScriptTime{false, block[indexes.front()].now});
    std::vector<int> limit_ids;
    for (std::size_t l = 0; l < limits_.size(); ++l) {
      limit_ids.push_back(calendars_[l] == nullptr ? batch.add_limit(limits_[l]) : 0);
    }
    // A calendar window's bounds are those around each request's own instant (a block may
    // cross a midnight): one definition per window met.
    std::map<std::pair<std::size_t, std::int64_t>, int> calendar_ids;
    auto limit_id = [&](std::size_t l, core::Nanos at) {
      if (calendars_[l] == nullptr) return limit_ids[l];
      const CalendarBounds bounds = calendar_bounds(*calendars_[l], at);
      const auto [it, added] = calendar_ids.try_emplace({l, bounds[1]}, 0);
      if (added) it->second = batch.add_limit(with_calendar_bounds(limits_[l], bounds));
      return it->second;
    };
    for (std::size_t i : indexes) {
      std::vector<std::pair<int, int>> refs;
      for (std::size_t l = 0; l < limits_.size(); ++l) {
        refs.emplace_back(limit_id(l, block[i].now), batch.add_key(keys[i] + std::to_string(l)));
      }
      batch.add_request(RequestKind::kDecide, block[i].cost, max_wait_, refs, block[i].now);
    }
    client_->eval(script_, batch.keys(), batch.args(),
                  [&, indexes = &indexes, shape = batch.limits_per_request()](Outcome outcome) {
                    --outstanding;
                    auto answers = decode_outcome(outcome, shape);
                    if (!answers) {
                      error = answers.error();
                      return;
                    }
                    for (std::size_t k = 0; k < indexes->size(); ++k) {
                      out[(*indexes)[k]] = (*answers)[k].combined;
                    }
                  });
  }
  io_.restart();
  while (outstanding > 0 && io_.run_one() > 0) {
  }
  if (!error.empty()) return core::make_error(error);
  return out;
}

}  // namespace sluice::backend::redis
