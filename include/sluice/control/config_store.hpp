// The rules in force and the config file behind them, kept in step: reloads read the file into
// the engine, changes (the admin API's) go into the engine and back to the file. One lock orders
// them, so a change never overwrites a reload it did not see, nor a reload a change.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sluice/config/loader.hpp"
#include "sluice/config/rule_text_cache.hpp"
#include "sluice/core/clock.hpp"
#include "sluice/engine/engine.hpp"

namespace sluice::control {

// What identifies one version of a file on disk; a change of any part means "read it again".
struct FileStamp {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  std::int64_t mtime_ns = 0;
  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

FileStamp stamp_of(const std::string& path);

struct ChangeOutcome {
  enum class Kind {
    kApplied,      // in force, and written back if the config says so
    kUnchanged,    // the edit declined (nothing to do)
    kInvalid,      // refused by validation: `errors`
    kFileChanged,  // the file changed on disk since it was read: nothing applied
    kWriteFailed,  // the file could not be written: nothing applied (rolled back)
  };
  Kind kind = Kind::kUnchanged;
  std::vector<config::ConfigError> errors;  // kInvalid
  std::string problem;                      // kFileChanged, kWriteFailed
};

// A condition every rule set must meet before it is put in force, beyond config::validate (the
// admin listener's: a token that can be read, none taken off an exposed listener). `check`
// returns the problems (`file:line: problem`); `applied` is told the rule set once it is in
// force. Both run under the store's lock.
struct Guard {
  std::function<std::vector<std::string>(const config::RuleSet&)> check;
  std::function<void(const config::RuleSet&)> applied;
};

class ConfigStore {
 public:
  // `path` "" = no file: changes are not written back, and reload() and poll() only read the
  // RLS files again. `rls_files`: envoyproxy/ratelimit files beside the config's own (serve
  // --rls-config), read again on every reload. A file over `max_size` bytes is refused as any
  // bad file is, before it is parsed. `clock` dates each swap (a retuned limit's carry-over).
  ConfigStore(engine::Engine& engine, std::string path, std::vector<std::string> rls_files,
              std::size_t max_size, const core::Clock& clock);

  // Whether there is anything on disk to reload (a config file or RLS files).
  bool has_files() const { return !path_.empty() || !rls_files_.empty(); }

  engine::Engine& engine() const { return engine_; }
  // The rules in force.
  std::shared_ptr<const config::RuleSet> rules() const { return engine_.rules(); }
  const std::string& path() const { return path_; }
  // The file name errors are reported against ("admin" without a file).
  const std::string& file_name() const { return file_name_; }

  // Adds a guard and checks the rules in force against it; returns its problems (and then
  // leaves it out). Called before serving.
  std::vector<std::string> add_guard(Guard guard);

  // Reads the file and applies it. Errors (`file:line: problem`) are returned and written to
  // stderr, and the rules in force stay; success is logged on one line.
  std::vector<std::string> reload();

  // Reloads when the file is not the one last read or written. Called once a second.
  void poll();

  // Runs `edit` on a copy of the rules in force, under the lock. When it returns true, the copy
  // is validated in full, applied, and written back to the file (atomically) if there is one
  // and `write_back` is on. A failed write rolls the engine back. `persist` false: applied
  // only, for what is not the file's (the shared overrides Redis keeps); the file is not
  // written, nor does a change on disk stop it.
  ChangeOutcome change(const std::function<bool(config::RuleSet&)>& edit, bool persist = true);

  std::uint64_t reloads_ok() const { return reloads_ok_.load(std::memory_order_relaxed); }
  std::uint64_t reloads_error() const { return reloads_error_.load(std::memory_order_relaxed); }

 private:
  std::vector<std::string> reload_locked();
  config::Loaded load() const;
  // Every file the rules in force were read from, as last seen.
  std::vector<std::pair<std::string, FileStamp>> stamps() const;
  std::vector<std::string> guard_problems(const config::RuleSet& rules) const;
  void tell_guards(const config::RuleSet& rules) const;
  // What a change writes: `next` with the file's own listeners, as YAML.
  std::string file_text(const config::RuleSet& next);
  void remember_file_listeners(const config::RuleSet& as_read);

  engine::Engine& engine_;
  const std::string path_;
  const std::string file_name_;
  const std::vector<std::string> rls_files_;
  const std::size_t max_size_;
  const core::Clock& clock_;
  std::mutex mutex_;
  FileStamp seen_;  // the file as last read or written (guarded by mutex_)
  std::vector<std::pair<std::string, FileStamp>> seen_all_;  // and every file read with it
  // Listener addresses may come from `sluice serve` flags, which override the file for this
  // run only: written back, the file keeps its own (as last read or written).
  config::RuleSet file_listeners_;
  config::RuleTextCache texts_;  // each rule's YAML, made again only when the rule changes
  std::vector<Guard> guards_;
  std::atomic<std::uint64_t> reloads_ok_{0};
  std::atomic<std::uint64_t> reloads_error_{0};
};

}  // namespace sluice::control
