// ConfigStore (sluice/control/config_store.hpp): reload, poll and changes under one lock.
#include "sluice/control/config_store.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "atomic_file.hpp"
#include "sluice/config/shared_overrides.hpp"
#include "sluice/log/log.hpp"

namespace sluice::control {
namespace {

std::vector<std::string> formatted(const std::vector<config::ConfigError>& errors) {
  std::vector<std::string> out;
  out.reserve(errors.size());
  for (const auto& e : errors) out.push_back(e.format());
  return out;
}

}  // namespace

FileStamp stamp_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return FileStamp{
      true, st.st_dev, st.st_ino, st.st_size,
      static_cast<std::int64_t>(st.st_mtim.tv_sec) * core::kNanosPerSecond + st.st_mtim.tv_nsec};
}

ConfigStore::ConfigStore(engine::Engine& engine, std::string path,
                         std::vector<std::string> rls_files, std::size_t max_size,
                         const core::Clock& clock)
    : engine_(engine),
      path_(std::move(path)),
      file_name_(path_.empty() ? std::string("admin") : path_),
      rls_files_(std::move(rls_files)),
      max_size_(max_size),
      clock_(clock),
      seen_(path_.empty() ? FileStamp{} : stamp_of(path_)) {
  seen_all_ = stamps();
  // serve starts the engine with the file's own rules (its flags override only what it binds).
  remember_file_listeners(*engine_.rules());
}

void ConfigStore::remember_file_listeners(const config::RuleSet& as_read) {
  file_listeners_.listen = as_read.listen;
  file_listeners_.admin = as_read.admin;
  file_listeners_.check = as_read.check;
  file_listeners_.workers = as_read.workers;
}

std::string ConfigStore::file_text(const config::RuleSet& next) {
  config::RuleSet out = next;
  out.listen = file_listeners_.listen;
  out.admin = file_listeners_.admin;
  out.check = file_listeners_.check;
  out.workers = file_listeners_.workers;
  return config::to_yaml(out, texts_);
}

std::vector<std::pair<std::string, FileStamp>> ConfigStore::stamps() const {
  std::vector<std::string> paths;
  if (!path_.empty()) paths.push_back(path_);
  const auto rules = engine_.rules();
  if (rules->rls) {
    for (const auto& d : rules->rls->domains) {
      if (!d.file.empty()) paths.push_back(d.file);
    }
  }
  paths.insert(paths.end(), rls_files_.begin(), rls_files_.end());
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  std::vector<std::pair<std::string, FileStamp>> out;
  for (auto& p : paths) out.emplace_back(p, stamp_of(p));
  return out;
}

std::vector<std::string> ConfigStore::guard_problems(const config::RuleSet& rules) const {
  std::vector<std::string> out;
  for (const Guard& g : guards_) {
    auto problems = g.check(rules);
    out.insert(out.end(), problems.begin(), problems.end());
  }
  return out;
}

void ConfigStore::tell_guards(const config::RuleSet& rules) const {
  for (const Guard& g : guards_) g.applied(rules);
}

std::vector<std::string> ConfigStore::add_guard(Guard guard) {
  std::lock_guard lock(mutex_);
  const auto rules = engine_.rules();
  auto problems = guard.check(*rules);
  if (!problems.empty()) return problems;
  guard.applied(*rules);
  guards_.push_back(std::move(guard));
  return {};
}

std::vector<std::string> ConfigStore::reload() {
  if (!has_files()) return {};
  std::lock_guard lock(mutex_);
  return reload_locked();
}

void ConfigStore::poll() {
  if (!has_files()) return;
  std::lock_guard lock(mutex_);
  if (stamps() == seen_all_) return;
  reload_locked();
}

// The config file with its RLS files; without a config file, the rules in force with their
// RLS domains read again.
config::Loaded ConfigStore::load() const {
  if (!path_.empty()) return config::load_config_file(path_, rls_files_, max_size_);
  config::Loaded loaded = config::load_rls_files(rls_files_, max_size_);
  if (loaded.rules) {
    // The domains the admin API made (no file) stay; those of the files are read anew.
    config::RuleSet rules = *engine_.rules();
    config::RlsSettings next = *loaded.rules->rls;
    if (rules.rls) {
      for (const auto& d : rules.rls->domains) {
        if (d.file.empty()) next.domains.push_back(d);
      }
    }
    rules.rls = std::move(next);
    loaded.rules = std::move(rules);
  }
  return loaded;
}

std::vector<std::string> ConfigStore::reload_locked() {
  // Stamp before reading: a write racing with the read shows up as a change at the next poll.
  seen_ = path_.empty() ? FileStamp{} : stamp_of(path_);
  seen_all_ = stamps();
  config::Loaded loaded = load();
  std::vector<std::string> errors = formatted(loaded.errors);
  if (errors.empty() && loaded.rules) {
    // The guards see the rules before they are in force: a file that names an unreadable token,
    // or takes the token off an exposed listener, is refused like any bad file.
    errors = guard_problems(*loaded.rules);
    if (errors.empty()) {
      config::RuleSet as_read = *loaded.rules;
      config::keep_shared_overrides(*engine_.rules(), *loaded.rules);
      errors = engine_.apply(std::move(*loaded.rules), clock_.now());
      seen_all_ = stamps();  // the files of the rules now in force
      if (errors.empty()) {
        if (!path_.empty()) remember_file_listeners(as_read);
        tell_guards(*engine_.rules());
      }
    }
  } else if (errors.empty()) {
    errors.push_back(file_name_ + ": cannot be loaded");
  }
  // Counted after the line is written: a scrape that shows the reload finds it in the log.
  if (!errors.empty()) {
    log::warn("sluice: config reload refused, the rules in force keep serving (" +
                  std::to_string(errors.size()) + (errors.size() == 1 ? " error):" : " errors):"),
              {{"outcome", "refused"},
               {"generation", static_cast<std::int64_t>(engine_.version())},
               {"errors", errors}});
    reloads_error_.fetch_add(1, std::memory_order_relaxed);
    return errors;
  }
  log::info("sluice: config reloaded from " + (path_.empty() ? std::string("RLS files") : path_) +
                " (version " + std::to_string(engine_.version()) + ")",
            {{"outcome", "ok"}, {"generation", static_cast<std::int64_t>(engine_.version())}});
  reloads_ok_.fetch_add(1, std::memory_order_relaxed);
  return {};
}

ChangeOutcome ConfigStore::change(const std::function<bool(config::RuleSet&)>& edit, bool persist) {
  std::lock_guard lock(mutex_);
  ChangeOutcome out;
  const auto before = engine_.rules();
  config::RuleSet next = *before;
  if (!edit(next)) return out;

  const bool write_back = persist && !path_.empty() && next.write_back;
  if (write_back && stamp_of(path_) != seen_) {
    out.kind = ChangeOutcome::Kind::kFileChanged;
    out.problem = path_ +
                  " changed on disk since sluice read it; it is reloaded within a "
                  "second (or on SIGHUP): retry then";
    return out;
  }
  out.errors = config::validate(next, file_name_);
  for (auto& message : guard_problems(next)) {
    out.errors.push_back(config::ConfigError{file_name_, 0, std::move(message)});
  }
  std::string yaml;
  if (out.errors.empty() && write_back) yaml = file_text(next);
  if (out.errors.empty()) {
    for (auto& message : engine_.apply_validated(std::move(next), clock_.now())) {
      out.errors.push_back(config::ConfigError{file_name_, 0, std::move(message)});
    }
  }
  if (!out.errors.empty()) {
    out.kind = ChangeOutcome::Kind::kInvalid;
    return out;
  }
  if (write_back) {
    auto written = write_file_atomically(path_, yaml);
    if (!written) {
      // All or nothing: the engine goes back to the rules the file still holds.
      engine_.apply(*before, clock_.now());
      out.kind = ChangeOutcome::Kind::kWriteFailed;
      out.problem = "not applied: " + written.error();
      log::error("sluice: admin change not applied: " + written.error());
      return out;
    }
    seen_ = stamp_of(path_);
  }
  seen_all_ = stamps();  // what was written is not a change on disk to reload
  tell_guards(*engine_.rules());
  out.kind = ChangeOutcome::Kind::kApplied;
  return out;
}

}  // namespace sluice::control
