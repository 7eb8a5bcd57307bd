// store_options (store_options.hpp).
#include "store_options.hpp"

namespace sluice::engine {

std::optional<backend::redis::StoreOptions> store_options(const config::RuleSet& rules) {
  if (!rules.redis || !rules.redis->configured()) return std::nullopt;
  // The url (or sentinels) with the db, the secrets and TLS folded in.
  auto url = rules.redis->store_url();
  if (!url) return std::nullopt;  // validate() reported it; a valid RuleSet never gets here
  backend::redis::StoreOptions o;
  o.client.url = *url;
  o.client.timeout = rules.redis->timeout;
  o.client.connect_timeout = rules.redis->timeout;
  // A Redis that comes back is found within this, so decisions return to it within a second.
  o.client.reconnect_max = 250 * core::kNanosPerMilli;
  return o;
}

}  // namespace sluice::engine
