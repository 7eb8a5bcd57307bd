// The metrics registry: collectors register, equal series from several loops sum, the text is
// Prometheus exposition format with each family's HELP and TYPE once.
#include "sluice/metrics/registry.hpp"

#include <gtest/gtest.h>

#include <atomic>

namespace sluice::metrics {
namespace {

constexpr Family kRequests{"sluice_test_requests_total", Kind::kCounter, "Requests, by outcome."};
constexpr Family kOpen{"sluice_test_open", Kind::kGauge, "Open things."};

TEST(Registry, SeriesOfSeveralCollectorsAreSummedAndWrittenOnce) {
  Registry r;
  std::atomic<int> loop1{3}, loop2{4};
  auto a = r.add([&](Sink& s) { s.add(kRequests, {{"outcome", "ok"}}, loop1.load()); });
  auto b = r.add([&](Sink& s) {
    s.add(kRequests, {{"outcome", "ok"}}, loop2.load());
    s.add(kRequests, {{"outcome", "denied"}}, 1);
    s.declare(kOpen);
  });
  EXPECT_EQ(r.text(),
            "# HELP sluice_test_requests_total Requests, by outcome.\n"
            "# TYPE sluice_test_requests_total counter\n"
            "sluice_test_requests_total{outcome=\"ok\"} 7\n"
            "sluice_test_requests_total{outcome=\"denied\"} 1\n"
            "# HELP sluice_test_open Open things.\n"
            "# TYPE sluice_test_open gauge\n");
  EXPECT_EQ(r.value("sluice_test_requests_total"), 8);
  EXPECT_EQ(r.value("sluice_test_requests_total", {{"outcome", "ok"}}), 7);
  loop1 = 10;
  EXPECT_EQ(r.value("sluice_test_requests_total", {{"outcome", "ok"}}), 14);
}

TEST(Registry, ARegistrationGoneTakesItsSamplesWithIt) {
  Registry r;
  auto a = r.add([](Sink& s) { s.add(kOpen, {}, 2); });
  {
    auto b = r.add([](Sink& s) { s.add(kOpen, {}, 5); });
    EXPECT_EQ(r.value("sluice_test_open"), 7);
  }
  EXPECT_EQ(r.value("sluice_test_open"), 2);
  a.reset();
  EXPECT_EQ(r.text(), "");
}

TEST(Registry, LabelValuesAreEscapedAndFractionsKept) {
  Registry r;
  auto a = r.add([](Sink& s) { s.add(kOpen, {{"rule", "a\"b\\c\nd"}}, 0.25); });
  EXPECT_NE(r.text().find("sluice_test_open{rule=\"a\\\"b\\\\c\\nd\"} 0.25\n"), std::string::npos)
      << r.text();
}

}  // namespace
}  // namespace sluice::metrics
