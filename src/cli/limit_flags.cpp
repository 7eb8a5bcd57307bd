// The shared limit and mode flags (limit_flags.hpp).
#include "limit_flags.hpp"

namespace sluice::cli {

core::Expected<core::Nanos> read_max_wait(const std::string& mode, const std::string& max_wait) {
  if (mode != "reject" && mode != "wait") {
    return core::make_error("--mode: '" + mode + "' is not a mode (accepted: reject, wait)");
  }
  const bool wait = mode == "wait";
  if (max_wait.empty()) return wait ? core::kForever : core::Nanos{0};
  if (!wait) return core::make_error("--max-wait: applies only with --mode wait");
  auto d = core::parse_duration(max_wait);
  if (!d) return core::make_error("--max-wait: " + d.error());
  return *d;
}

core::Expected<spec::LimitSpec> read_limit(const std::string& text, bool wait,
                                           const std::string& what) {
  auto s = spec::parse_limit_spec(text);
  if (!s) return core::make_error(what + " '" + text + "': " + s.error());
  if (s->wait == spec::WaitSupport::kNotTimeBased) {
    return core::make_error(
        what + " '" + text +
        "': concurrency limits cannot be replayed (a trace has no request ends)");
  }
  if (wait && s->wait == spec::WaitSupport::kRejectOnly) {
    return core::make_error(what + " '" + text + "': " + s->algorithm +
                            " decides in reject mode only; --mode wait does not apply");
  }
  return *s;
}

}  // namespace sluice::cli
