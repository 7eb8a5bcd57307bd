// Test support: racing threads. on_threads(n, body) starts n threads that wait on one latch,
// so they enter body(thread_index) together and contend, then joins them.
#pragma once

#include <latch>
#include <thread>
#include <vector>

namespace sluice::test {

template <class Body>
void on_threads(int n, Body body) {
  std::latch go(n);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&go, &body, t] {
      go.arrive_and_wait();
      body(t);
    });
  }
  for (auto& th : threads) th.join();
}

}  // namespace sluice::test
