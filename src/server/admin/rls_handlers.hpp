// The admin API's Envoy RLS domains and reload (docs/admin-api.md, "RLS domains"): domains in
// envoyproxy/ratelimit's format read, changed and removed live, and the files read again.
//
//   GET    /v1/rls/domains           every domain: its name, where it was read, its descriptors
//   GET    /v1/rls/domains/{domain}  one domain, as an envoyproxy/ratelimit document in JSON
//   PUT    /v1/rls/domains/{domain}  a document (YAML or JSON) -> 201 created / 200 replaced
//   DELETE /v1/rls/domains/{domain}  -> 200 with what was removed
//   POST   /v1/reload                the config file and RLS files read again, as on SIGHUP
// Only domains of the config's own rls.domains change through the API (written back with the
// config); a domain read from an envoyproxy/ratelimit file is changed in that file, then
// reloaded. Unchanged descriptors keep their counters, as on any reload.
#pragma once

#include <string>
#include <string_view>

#include "admin_reply.hpp"

namespace sluice::server {}  // namespace sluice::server
namespace sluice::control {
class ConfigStore;
}  // namespace sluice::control
namespace sluice::server {
using control::ConfigStore;

Reply list_rls_domains(const ConfigStore& store);
Reply get_rls_domain(const ConfigStore& store, const std::string& name);
Reply put_rls_domain(ConfigStore& store, const std::string& name, std::string_view body);
Reply delete_rls_domain(ConfigStore& store, const std::string& name);
Reply reload_files(ConfigStore& store);

}  // namespace sluice::server
