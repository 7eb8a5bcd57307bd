// A move-only completion handler as a copyable callable, for APIs that take std::function (the
// Redis store's callbacks, the config worker's replies). Used by Loop::async_complete and the
// admin session's settle(); one place for the shape both need.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace sluice::support {

// Calling the result (once) calls `handler` with the same arguments; copies share it.
template <class Handler>
auto shared_handler(Handler&& handler) {
  auto shared = std::make_shared<std::decay_t<Handler>>(std::forward<Handler>(handler));
  return [shared](auto&&... args) { std::move (*shared)(std::forward<decltype(args)>(args)...); };
}

}  // namespace sluice::support
