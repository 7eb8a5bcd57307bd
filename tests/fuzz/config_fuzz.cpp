// Fuzz target: the YAML config reader, in both its formats: sluice's own (load_config_text,
// what check-config, serve and a reload read, its `rls:` section included) and
// envoyproxy/ratelimit's files (load_rls_text).
//
// Every input goes to both. Besides not crashing: a config that loads is written back by
// to_yaml() and must load again to the same text (the admin API's write-back depends on it);
// each RLS limit that loads must give a limit spec (what the engine builds its tables from).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "sluice/config/loader.hpp"
#include "sluice/config/rls.hpp"

namespace {

void check_rls_limits(const std::vector<sluice::config::RlsDescriptor>& descriptors) {
  for (const auto& d : descriptors) {
    if (d.rate_limit && !d.rate_limit->unlimited) {
      (void)sluice::config::rls_limit_spec(*d.rate_limit);
    }
    check_rls_limits(d.descriptors);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  const auto loaded = sluice::config::load_config_text(text, "fuzz.yaml");
  SLUICE_FUZZ_CHECK(loaded.rules.has_value() == loaded.errors.empty(),
                    "a config loads, or says why not");
  for (const auto& e : loaded.errors) {
    SLUICE_FUZZ_CHECK(!e.message.empty(), "every error says what is wrong");
  }
  if (loaded.rules) {
    const std::string yaml = sluice::config::to_yaml(*loaded.rules);
    const auto again = sluice::config::load_config_text(yaml, "written.yaml");
    if (!again.rules) {
      std::fprintf(stderr, "written back:\n%s\nrefused: %s\n", yaml.c_str(),
                   again.errors.front().format().c_str());
    }
    SLUICE_FUZZ_CHECK(again.rules.has_value(), "a written-back config loads");
    SLUICE_FUZZ_CHECK(sluice::config::to_yaml(*again.rules) == yaml,
                      "a written-back config loads as itself");
    if (loaded.rules->rls) {
      for (const auto& domain : loaded.rules->rls->domains) check_rls_limits(domain.descriptors);
    }
  }

  const auto rls = sluice::config::load_rls_text(text, "fuzz.yaml");
  SLUICE_FUZZ_CHECK(rls.errors.empty() || rls.domains.empty(),
                    "an RLS file with errors gives no domain");
  for (const auto& domain : rls.domains) check_rls_limits(domain.descriptors);
  return 0;
}
