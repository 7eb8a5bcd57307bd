// Store::decide as an Asio asynchronous operation, so a coroutine can `co_await` a decision
// on rules kept in Redis (with use_awaitable) like any other I/O of its loop.
#pragma once

#include <boost/asio/async_result.hpp>
#include <memory>
#include <utility>

#include "sluice/backend/redis/store.hpp"

namespace sluice::backend::redis {

template <class Token>
auto async_decide(Store& store, Query query, Token&& token) {
  return boost::asio::async_initiate<Token, void(Answer)>(
      [&store](auto handler, Query q) {
        // Store callbacks are std::function (copyable); the handler is move-only.
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        store.decide(std::move(q), [shared](Answer a) { std::move (*shared)(std::move(a)); });
      },
      token, std::move(query));
}

}  // namespace sluice::backend::redis
