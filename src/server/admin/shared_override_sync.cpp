// SharedOverrideSync (shared_override_sync.hpp).
#include "shared_override_sync.hpp"

#include <boost/asio/post.hpp>
#include <chrono>
#include <utility>

#include "sluice/engine/engine.hpp"
#include "sluice/log/log.hpp"
#include "sluice/spec/limit_spec.hpp"

namespace sluice::server {

namespace asio = boost::asio;

SharedOverrideSync::SharedOverrideSync(asio::io_context& io, engine::Loop& loop,
                                       std::shared_ptr<control::ConfigStore> store,
                                       asio::any_io_executor config_work)
    : loop_(loop), store_(std::move(store)), config_work_(std::move(config_work)), timer_(io) {}

void SharedOverrideSync::start() {
  asio::post(timer_.get_executor(), [self = shared_from_this()] { self->poll(); });
}

void SharedOverrideSync::stop() {
  asio::post(timer_.get_executor(), [self = shared_from_this()] {
    self->stopped_ = true;  // a read still on its way arms no timer after this
    self->timer_.cancel();
  });
}

void SharedOverrideSync::arm() {
  if (stopped_) return;
  timer_.expires_after(std::chrono::milliseconds(engine::kSharedOverridesPollMs));
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->poll();
  });
}

void SharedOverrideSync::poll() {
  loop_.read_shared_overrides(generation_, [self = shared_from_this()](auto read) {
    // Redis down or unset: the overrides last read stay in force.
    if (read) self->adopt(*read);
    // Every round, not only when Redis's set moved: a reload or a rule's PUT may have made a
    // rule one that the set applies to.
    asio::post(self->config_work_, [self] { self->apply(nullptr); });
    self->arm();
  });
}

void SharedOverrideSync::adopt(const engine::SharedOverridesRead& read) {
  if (read.too_many) {
    if (read.generation != generation_) {
      log::warn("sluice: Redis holds more shared overrides than are read; the ones in force stay",
                {{"hash", std::string(engine::kSharedOverridesHash)},
                 {"most", static_cast<std::int64_t>(engine::kMaxSharedOverrides)}});
    }
    generation_ = read.generation;
    return;
  }
  if (!read.hash) return;  // the generation known: nothing moved
  auto next = std::make_shared<config::SharedOverrides>(config::read_shared_overrides(*read.hash));
  if (!next->problems.empty()) {
    log::warn("sluice: shared overrides in Redis left out",
              {{"hash", std::string(engine::kSharedOverridesHash)}, {"problems", next->problems}});
  }
  if (!generation_.empty() || !read.hash->empty()) {
    log::info("sluice: shared overrides read",
              {{"generation", read.generation},
               {"overrides", static_cast<std::int64_t>(read.hash->size())}});
  }
  generation_ = read.generation;
  std::lock_guard lock(mutex_);
  shared_ = std::move(next);
  ++revision_;
}

std::shared_ptr<const config::SharedOverrides> SharedOverrideSync::shared() const {
  std::lock_guard lock(mutex_);
  return shared_;
}

void SharedOverrideSync::apply(const Written& done) {
  std::shared_ptr<const config::SharedOverrides> shared;
  std::uint64_t revision = 0;
  {
    std::lock_guard lock(mutex_);
    shared = shared_;
    revision = revision_;
  }
  const auto round = [&] {
    return std::to_string(revision) + "/" + std::to_string(store_->engine().version());
  };
  const std::string attempt = round();
  control::ChangeOutcome outcome;  // kUnchanged
  // Nothing moved since the last round found them in force (or refused them): nothing to do.
  const bool seen = attempt == settled_ || attempt == failed_;
  if (shared && (done || !seen) && !config::has_shared_overrides(*store_->rules(), *shared)) {
    std::vector<std::string> problems;
    outcome = store_->change(
        [&](config::RuleSet& set) { return config::set_shared_overrides(set, *shared, problems); },
        false);
    if (outcome.kind == control::ChangeOutcome::Kind::kApplied && !problems.empty()) {
      log::warn("sluice: shared overrides left out", {{"problems", std::move(problems)}});
    }
    if (outcome.kind == control::ChangeOutcome::Kind::kInvalid) {
      failed_ = attempt;  // said once, tried again when Redis's set or the rules change
      std::vector<std::string> errors;
      for (const auto& e : outcome.errors) errors.push_back(e.message);
      log::error("sluice: shared overrides not applied; the ones in force stay",
                 {{"errors", std::move(errors)}});
    }
  }
  if (shared && outcome.kind != control::ChangeOutcome::Kind::kInvalid) settled_ = round();
  if (done) done(engine::SharedWrite::kDone, outcome);
}

void SharedOverrideSync::write(const std::string& rule, const std::string& key,
                               const std::optional<std::string>& limit, Written done) {
  loop_.write_shared_override(
      rule, key, limit,
      [self = shared_from_this(), rule, key, limit, done = std::move(done)](
          engine::SharedWrite result, const std::string& generation) {
        if (result != engine::SharedWrite::kDone) {
          asio::post(self->config_work_, [result, done] { done(result, {}); });
          return;
        }
        // The generation after ours is ours alone: no need to read the hash again.
        if (!self->generation_.empty() &&
            generation == std::to_string(std::stoll(self->generation_) + 1)) {
          self->generation_ = generation;
        }
        std::optional<config::LimitVariant> variant;
        if (limit) {
          if (auto spec = spec::parse_limit_spec(*limit)) {
            variant = config::LimitVariant{key, *limit, std::move(*spec), 0};
          }
        }
        {
          std::lock_guard lock(self->mutex_);
          auto next = self->shared_ ? std::make_shared<config::SharedOverrides>(*self->shared_)
                                    : std::make_shared<config::SharedOverrides>();
          config::put_shared_override(*next, rule, key, variant);
          self->shared_ = std::move(next);
          ++self->revision_;
        }
        asio::post(self->config_work_, [self, done] { self->apply(done); });
      });
}

}  // namespace sluice::server
