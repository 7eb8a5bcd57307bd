// The rules in force and the config file behind them, kept in step: reloads read the file into
// the engine, admin API changes go into the engine and back to the file. One lock orders them,
// so a PUT never overwrites a reload it did not see, nor a reload a PUT.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "admin_access.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/engine/engine.hpp"
#include "sluice/engine/shared_slot.hpp"

namespace sluice::server {

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

class ConfigStore {
 public:
  // `path` "" = no file: changes are not written back, and reload() and poll() only read the
  // RLS files again. `rls_files`: envoyproxy/ratelimit files beside the config's own (serve
  // --rls-config), read again on every reload. A file over `max_size` bytes is refused as any
  // bad file is, before it is parsed.
  ConfigStore(engine::Engine& engine, std::string path, std::vector<std::string> rls_files,
              std::size_t max_size);

  // Whether there is anything on disk to reload (a config file or RLS files).
  bool has_files() const { return !path_.empty() || !rls_files_.empty(); }

  engine::Engine& engine() const { return engine_; }
  const std::string& path() const { return path_; }
  // The file name errors are reported against ("admin" without a file).
  const std::string& file_name() const { return file_name_; }

  // Reads the file and applies it. Errors (`file:line: problem`) are returned and written to
  // stderr, and the rules in force stay; success is logged on one line.
  std::vector<std::string> reload();

  // Reloads when the file is not the one last read or written. Called once a second.
  void poll();

  // Runs `edit` on a copy of the rules in force, under the lock. When it returns true, the copy
  // is validated in full, applied, and written back to the file (atomically) if there is one
  // and `write_back` is on. A failed write rolls the engine back.
  ChangeOutcome change(const std::function<bool(config::RuleSet&)>& edit);

  // The admin listener as bound, and `serve --admin-insecure`; then reads the token of the rules
  // in force. Returns its errors (`file:line: problem`), or an exposed listener without a
  // token. Called once, before any request; later reloads are checked the same way.
  std::vector<std::string> start_access(ListenerInfo admin, bool insecure_flag);

  // Who may use the admin listener now: swapped with the rules on every reload. Thread-safe.
  std::shared_ptr<const AdminAccess> access() const { return access_.load(); }

  std::uint64_t reloads_ok() const { return reloads_ok_.load(std::memory_order_relaxed); }
  std::uint64_t reloads_error() const { return reloads_error_.load(std::memory_order_relaxed); }

 private:
  std::vector<std::string> reload_locked();
  config::Loaded load() const;
  // Every file the rules in force were read from, as last seen.
  std::vector<std::pair<std::string, FileStamp>> stamps() const;
  // The access `rules` give, or why they cannot be served on the admin listener.
  core::Expected<AdminAccess> access_of(const config::RuleSet& rules) const;
  // `next` as the file should hold it.
  config::RuleSet for_file(const config::RuleSet& next) const;

  engine::Engine& engine_;
  const std::string path_;
  const std::string file_name_;
  const std::vector<std::string> rls_files_;
  const std::size_t max_size_;
  std::mutex mutex_;
  FileStamp seen_;  // the file as last read or written (guarded by mutex_)
  std::vector<std::pair<std::string, FileStamp>> seen_all_;  // and every file read with it
  ListenerInfo admin_;
  bool insecure_flag_ = false;
  engine::SharedSlot<AdminAccess> access_{std::make_shared<const AdminAccess>()};
  std::atomic<std::uint64_t> reloads_ok_{0};
  std::atomic<std::uint64_t> reloads_error_{0};
};

}  // namespace sluice::server
