// Who may use the admin listener (docs/admin-api.md, "Access"): the bearer token it requires,
// the Host names it answers to, and whether it serves the decision API too. Changing rules is
// the most dangerous thing sluice does, so these are checked before any handler runs.
#pragma once

#include <array>
#include <boost/asio/ip/address.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/config/loader.hpp"
#include "sluice/config/rule_set.hpp"
#include "sluice/control/config_store.hpp"
#include "sluice/core/expected.hpp"
#include "sluice/support/shared_slot.hpp"

namespace sluice::server {

// One listener of the admin server, as requests are checked against it.
struct ListenerInfo {
  enum class Kind { kAdmin, kCheck };
  Kind kind = Kind::kAdmin;
  boost::asio::ip::address bound;  // the unspecified address when bound to all of them
  std::uint16_t port = 0;
  std::string configured_host;  // the config's host as written ("localhost"; "" for all)
  bool loopback() const;
};

// The settings of one RuleSet, with its token read.
struct AdminAccess {
  bool has_token = false;
  // SHA-256 of the token: a presented token is hashed and compared with CRYPTO_memcmp, so the
  // time taken says nothing of how much of it matched, nor of its length.
  std::array<unsigned char, 32> token_digest{};
  std::vector<std::string> hosts;  // admin_hosts, lower case
  bool check_on_admin = true;
};

// Reads the token of `rules.admin_auth` (its file, or its environment variable). Errors are
// `file_name:LINE: field 'admin_auth.token_file': ...`, as config errors are.
core::Expected<AdminAccess> resolve_access(const config::RuleSet& rules,
                                           const std::string& file_name);

// Refuses an admin listener that anyone on the network could reach and that would change rules
// without a token: "admin listener 0.0.0.0:9090 is not on loopback and has no token ...".
// `insecure` is `serve --admin-insecure` or `admin_auth: {insecure: true}`.
std::optional<std::string> exposure_problem(const ListenerInfo& admin, const AdminAccess& access,
                                            bool insecure);

// Whether a request's Host field value names this listener: its own address, or (a name) one
// of `hosts`, the name the config gives the listener, or `localhost` on a loopback listener. A
// page that rebinds its own domain to this address (DNS rebinding) sends its domain here.
bool host_allowed(std::string_view host, const ListenerInfo& listener,
                  const std::vector<std::string>& hosts);

// Whether an Authorization field value is `Bearer <the token>` (the scheme in any case).
bool bearer_matches(std::string_view authorization, const AdminAccess& access);

// The access in force, kept in step with the rules as a guard of the config store: each rule set
// has its token read and its exposure checked before it is put in force (a reload that names an
// unreadable token, or takes it off an exposed listener, is refused), and its access is swapped
// in once it is. Thread-safe.
class AccessKeeper : public std::enable_shared_from_this<AccessKeeper> {
 public:
  // `admin`: the admin listener as bound (none: only a check listener runs, and nothing is
  // exposed); `insecure_flag`: `serve --admin-insecure`.
  AccessKeeper(std::optional<ListenerInfo> admin, bool insecure_flag, std::string file_name);

  // Holds this keeper alive for as long as the store keeps the guard.
  control::Guard guard();
  std::shared_ptr<const AdminAccess> access() const { return access_.load(); }

 private:
  core::Expected<AdminAccess> access_of(const config::RuleSet& rules) const;

  const std::optional<ListenerInfo> admin_;
  const bool insecure_flag_;
  const std::string file_name_;
  std::optional<AdminAccess> checked_;  // the last rule set's, until it is in force
  support::SharedSlot<AdminAccess> access_{std::make_shared<const AdminAccess>()};
};

}  // namespace sluice::server
