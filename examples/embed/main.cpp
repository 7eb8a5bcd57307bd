// examples/embed: a program built against the installed libsluice, with CMake
// (find_package(Sluice), CMakeLists.txt here) or pkg-config:
//   g++ -std=c++17 main.cpp $(pkg-config --cflags --libs sluice) -o embed
// It runs on a virtual clock, so it prints the same lines on every run (tests/package checks
// them); a real program leaves `now` out and the limiters read the steady clock.
#include <chrono>
#include <cstdio>
#include <sluice/sluice.hpp>
#include <string>

using namespace std::chrono_literals;

namespace {

sluice::Time at(sluice::Duration d) { return sluice::Time(d); }

long long ms(sluice::Duration d) {
  return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

// rate.NewLimiter(10, 20): a burst of 20, then one every 100 ms.
void token_bucket() {
  sluice::Limiter limiter("token-bucket:rate=10/s,burst=20", at(0s));
  int allowed = 0;
  for (int i = 0; i < 25; ++i) allowed += limiter.allow(at(0s)) ? 1 : 0;
  const auto wait = limiter.reserve(1, sluice::kForever, at(0s));
  std::printf("token-bucket: %d of 25 allowed at once; a reservation waits %lld ms\n", allowed,
              ms(*wait));
}

// RateLimiter.create(2): Guava's SmoothBursty pays later; acquire() waits 0, 0.5 s, 1 s.
void guava() {
  sluice::Limiter limiter(sluice::Limit::smooth_bursty(sluice::Rate::per_second(2)), at(0s));
  std::printf("smooth-bursty: waits");
  for (int i = 0; i < 3; ++i)
    std::printf(" %lld", ms(*limiter.reserve(1, sluice::kForever, at(0s))));
  std::printf(" ms\n");
}

// Per client: a burst of 3 (GCRA, burst + 1), in a 64 KiB table.
void per_client() {
  sluice::KeyedLimiter limiter("gcra:rate=5/s,burst=2", 64 << 10);
  int alice = 0;
  for (int i = 0; i < 5; ++i) alice += limiter.allow("alice", at(0s)) ? 1 : 0;
  const sluice::Decision bob = limiter.decide("bob", 1, 0s, at(0s));
  const sluice::Decision again = limiter.decide("alice", 1, 0s, at(0s));
  std::printf("per client: alice %d of 5, bob %s (remaining %lld), alice retries after %lld ms\n",
              alice, bob.allowed ? "allowed" : "denied", static_cast<long long>(bob.remaining),
              ms(again.retry_after));
}

}  // namespace

int main() {
  std::printf("libsluice %s\n", std::string(sluice::version()).c_str());
  token_bucket();
  guava();
  per_client();
  std::string error;
  if (!sluice::Limit::parse("token-bucket:rate=10/s", &error)) {
    std::printf("bad spec: %s\n", error.c_str());
  }
  return 0;
}
