// What a fuzz target asserts beyond "no crash": a property every input must keep (a parse
// that round-trips, a cap that holds). A broken one aborts with its text, so libFuzzer keeps
// the input and the replay test fails on it, in any build mode.
#pragma once

#include <cstdio>
#include <cstdlib>

#define SLUICE_FUZZ_CHECK(cond, what)                                                         \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "fuzz check failed at %s:%d: %s (%s)\n", __FILE__, __LINE__, what, \
                   #cond);                                                                    \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
