// The rate limit service's answer, free of protobuf: a request (domain, descriptors, hits) in,
// the overall code and one status per descriptor out, as envoyproxy/ratelimit answers, with
// Sluice's limits doing the counting. The gRPC adapter only translates to and from this.
//
// Descriptors that reach enforced limits are decided together, all or none (nginx's two
// phases): a request refused by one limit is charged to none (envoyproxy/ratelimit charges
// every descriptor). Shadow-mode limits are decided each on its own and never refuse.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "descriptor_tree.hpp"
#include "sluice/core/time.hpp"
#include "sluice/server/rls_config.hpp"

namespace sluice::server::rls {

// RateLimitResponse.Code.
enum class Code : int { kUnknown = 0, kOk = 1, kOverLimit = 2 };

// A descriptor's own limit (RateLimitDescriptor.limit): the client names the limit.
struct Override {
  std::uint32_t requests_per_unit = 0;
  int unit = 0;  // envoy.type.v3.RateLimitUnit
};

struct DescriptorView {
  std::vector<Entry> entries;
  std::optional<Override> limit;
};

struct Request {
  std::string_view domain;
  std::span<const DescriptorView> descriptors;
  std::uint32_t hits_addend = 0;  // 0 counts as 1
};

struct CurrentLimit {
  std::uint32_t requests_per_unit = 0;
  RlsUnit unit = RlsUnit::kSecond;
  std::string_view name;  // lives as long as the decider
};

struct Status {
  Code code = Code::kOk;
  std::optional<CurrentLimit> limit;  // none: no limit applied (or unlimited)
  std::uint32_t remaining = 0;        // UINT32_MAX for unlimited
  std::int64_t reset_seconds = 0;     // whole seconds until the window resets; with a limit
};

struct Answer {
  // Non-empty: the request is malformed (INVALID_ARGUMENT with this message); nothing decided.
  std::string invalid;
  // Non-empty: the request cannot be served now (RESOURCE_EXHAUSTED); nothing decided.
  std::string exhausted;
  Code overall = Code::kOk;
  std::vector<Status> statuses;  // one per request descriptor, in order
};

class Decider {
 public:
  // Throws std::invalid_argument when a limit's table cannot be made.
  explicit Decider(const RlsConfig& config);
  ~Decider();

  // Thread-safe. `now` is wall-clock time (ns since the Unix epoch), so windows start where
  // envoyproxy/ratelimit's do: at whole seconds, minutes, hours and UTC days.
  Answer decide(const Request& request, core::Nanos now);

  // Distinct client overrides kept at most (each has its own table).
  static constexpr std::size_t kMaxOverrides = 32;

 private:
  // The limit of a client's override (made at its first use); null with out.invalid or
  // out.exhausted set when there is none.
  const Limit* override_limit(const Override& o, std::size_t index, Answer& out);

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, DescriptorTree, Hash, std::equal_to<>> domains_;
  std::size_t memory_per_limit_;
  std::shared_mutex overrides_mutex_;
  std::map<std::pair<std::uint32_t, int>, std::unique_ptr<Limit>> overrides_;
};

// The key of a descriptor's state in its limit's table: the domain and every entry, length-
// prefixed so that no two descriptors share a key whatever bytes their values hold.
std::string limit_key(std::string_view domain, std::span<const Entry> entries);

}  // namespace sluice::server::rls
