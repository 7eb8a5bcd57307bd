// The built-in scenarios (sluice/simulate/builtin_scenarios.hpp), each sized for limits of about
// 10 requests a second and carrying the limits that show its point. docs/simulate.md lists them.
#include "sluice/simulate/builtin_scenarios.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace sluice::simulate {
namespace {

constexpr std::string_view kSteady =
    R"(description: One key at 20/s, evenly spaced, against limits of 10/s
duration: 10s
limits:
  - token-bucket:rate=10/s,burst=20
  - fixed-window:limit=10,window=1s
  - leaky-bucket:rate=10/s,burst=20
sources:
  - name: client
    shape: steady
    rate: 20/s
)";

constexpr std::string_view kBurst =
    R"(description: One key - 5/s for 2 s, a burst of 50 at 2 s, then 20/s
duration: 10s
limits:
  - token-bucket:rate=10/s,burst=20
  - gcra:rate=10/s,burst=19
  - leaky-bucket:rate=10/s,burst=20
  - leaky-bucket:rate=10/s,burst=20,nodelay=1
  - smooth-bursty:rate=10/s,max-burst=2s
  - queue:rate=10/s,max-wait=1s
sources:
  - name: quiet
    key: client
    shape: steady
    rate: 5/s
    end: 2s
  - name: burst
    key: client
    shape: burst
    count: 50
    at: 2s
  - name: load
    key: client
    shape: steady
    rate: 20/s
    start: 2s
)";

constexpr std::string_view kBoundary =
    R"(description: 20 requests 1 ms before each odd second and 20 on it
duration: 10s
limits:
  - fixed-window:limit=10,window=1s
  - sliding-window:limit=10,window=1s
  - sliding-log:limit=10,window=1s
  - token-bucket:rate=10/s,burst=10
sources:
  - name: client
    shape: boundary
    count: 20
    at: 1s
    gap: 1ms
    every: 2s
)";

constexpr std::string_view kPoisson = R"(description: One key, Poisson arrivals at 15/s on average
duration: 20s
limits:
  - token-bucket:rate=10/s,burst=20
  - gcra:rate=10/s,burst=19
  - sliding-window:limit=10,window=1s
  - smooth-bursty:rate=10/s
sources:
  - name: client
    shape: poisson
    rate: 15/s
)";

constexpr std::string_view kDiurnal =
    R"(description: A day in 20 s - one key from 2/s at night to 30/s at noon
duration: 20s
limits:
  - token-bucket:rate=10/s,burst=50
  - sliding-window:limit=10,window=1s
  - leaky-bucket:rate=10/s,burst=50
sources:
  - name: client
    shape: diurnal
    low: 2/s
    high: 30/s
)";

constexpr std::string_view kFlood =
    R"(description: 20 users at 1/s each and one heavy key at 50/s; from 5 s, 200/s over 10000 new keys
duration: 10s
limits:
  - token-bucket:rate=5/s,burst=10
  - fixed-window:limit=5,window=1s
  - sliding-log:limit=5,window=1s
sources:
  - name: users
    shape: poisson
    rate: 20/s
    key: user
    keys: 20
  - name: heavy
    shape: steady
    rate: 50/s
  - name: flood
    shape: flood
    rate: 200/s
    key: bot
    keys: 10000
    start: 5s
)";

constexpr std::array<BuiltinScenario, 6> kBuiltins{{{"steady", kSteady},
                                                    {"burst", kBurst},
                                                    {"boundary", kBoundary},
                                                    {"poisson", kPoisson},
                                                    {"diurnal", kDiurnal},
                                                    {"flood", kFlood}}};

std::string builtin_list() {
  std::string out;
  for (const auto& b : kBuiltins) out += (out.empty() ? "" : ", ") + std::string(b.name);
  return out;
}

core::Expected<std::string> read_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) return core::make_error(std::strerror(errno));
  std::string text(kMaxScenarioBytes + 1, '\0');
  const std::size_t n = std::fread(text.data(), 1, text.size(), f.get());
  if (std::ferror(f.get())) return core::make_error(std::strerror(errno));
  if (n > kMaxScenarioBytes) {
    return core::make_error("larger than " + std::to_string(kMaxScenarioBytes >> 20) +
                            " MiB; a scenario is a few lines");
  }
  text.resize(n);
  return text;
}

}  // namespace

std::span<const BuiltinScenario> builtin_scenarios() { return kBuiltins; }

const BuiltinScenario* find_builtin(std::string_view name) {
  for (const auto& b : kBuiltins) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

core::Expected<Scenario> load_scenario(const std::string& name_or_path) {
  if (name_or_path.find_first_of("/.") == std::string::npos) {
    const BuiltinScenario* b = find_builtin(name_or_path);
    if (b == nullptr) {
      return core::make_error("--scenario '" + name_or_path +
                              "': no built-in scenario of that name (built-in: " + builtin_list() +
                              "; a file's path has a '/' or a '.')");
    }
    auto sc = parse_scenario(b->yaml, "scenario " + name_or_path);
    if (!sc) return sc;
    Scenario out = *sc;
    out.name = name_or_path;
    return out;
  }
  auto text = read_file(name_or_path);
  if (!text) return core::make_error("--scenario '" + name_or_path + "': " + text.error());
  auto sc = parse_scenario(*text, name_or_path);
  if (!sc) return sc;
  Scenario out = *sc;
  out.name = name_or_path;
  return out;
}

}  // namespace sluice::simulate
