// core::InlineFunction: a callable held in place when it fits, on the heap when it does not;
// moved, it leaves the source empty; whatever it holds is destroyed exactly once.
#include "sluice/core/inline_function.hpp"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>

namespace sluice::core {
namespace {

using Small = InlineFunction<void(int), 32>;

TEST(InlineFunction, CallsWhatItHoldsWithTheArguments) {
  int got = 0;
  Small f = [&got](int v) { got = v * 2; };
  ASSERT_TRUE(f);
  f(21);
  EXPECT_EQ(got, 42);
}

TEST(InlineFunction, AnEmptyOneSaysSo) {
  Small f;
  EXPECT_FALSE(f);
}

TEST(InlineFunction, AMovedFunctionLeavesItsSourceEmptyAndKeepsItsCapture) {
  auto kept = std::make_shared<int>(7);
  int got = 0;
  Small a = [kept, &got](int v) { got = *kept + v; };
  EXPECT_EQ(kept.use_count(), 2);  // one copy, in place
  Small b = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): the moved-from state is the behaviour
  EXPECT_EQ(kept.use_count(), 2);  // moved, not copied
  b(3);
  EXPECT_EQ(got, 10);
}

TEST(InlineFunction, ACaptureTooBigForItsRoomGoesToTheHeapAndStillWorks) {
  std::array<char, 100> big{};  // 100 bytes do not fit in 32
  big[99] = 'z';
  auto kept = std::make_shared<int>(1);
  char got = 0;
  Small a = [big, kept, &got](int) { got = big[99]; };
  Small b = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move)
  b(0);
  EXPECT_EQ(got, 'z');
  EXPECT_EQ(kept.use_count(), 2);
  b.reset();
  EXPECT_EQ(kept.use_count(), 1);  // the heap copy was freed
}

TEST(InlineFunction, WhatItHoldsIsDestroyedOnceWhenReplacedResetOrDropped) {
  auto first = std::make_shared<int>(0);
  auto second = std::make_shared<int>(0);
  {
    Small f = [first](int) {};
    Small g = [second](int) {};
    EXPECT_EQ(first.use_count(), 2);
    f = std::move(g);  // first's copy destroyed, second's moved in
    EXPECT_EQ(first.use_count(), 1);
    EXPECT_EQ(second.use_count(), 2);
  }
  EXPECT_EQ(second.use_count(), 1);
}

TEST(InlineFunction, AMoveOnlyCaptureIsAccepted) {
  auto owned = std::make_unique<std::string>("permit");
  std::string got;
  Small f = [p = std::move(owned), &got](int) { got = *p; };
  f(0);
  EXPECT_EQ(got, "permit");
}

}  // namespace
}  // namespace sluice::core
