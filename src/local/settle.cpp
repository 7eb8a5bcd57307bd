// settle (sluice/local/settle.hpp).
#include "sluice/local/settle.hpp"

#include <variant>

#include "sluice/core/settle.hpp"

namespace sluice::local {

bool settle(const AnyTable& table, const table::KeyHash& key, core::Nanos now, std::int64_t delta) {
  return std::visit(
      [&](const auto& t) {
        using A = typename std::decay_t<decltype(*t)>::Algorithm;
        if constexpr (core::CountsDenials<A>) {
          auto locked = t->lock(key, now);
          if (!locked) return false;
          if (delta != 0) {
            locked->state() =
                core::Settle<A>::apply(locked->params(), locked->state(), locked->now(), delta);
          }
          return true;
        } else {
          return false;
        }
      },
      table);
}

}  // namespace sluice::local
