// make_table_limit (sluice/local/table_limit.hpp): one typed table per spec.
#include "sluice/local/table_limit.hpp"

#include <optional>
#include <stdexcept>

namespace sluice::local {
namespace {

template <class A>
core::Expected<TableLimit> make(const spec::LimitSpec& spec, const typename A::Params& p,
                                std::size_t budget) {
  try {
    return TableLimit{spec, AnyTable(std::make_shared<table::KeyedTable<A>>(p, budget))};
  } catch (const std::invalid_argument& e) {
    return core::make_error(std::string("memory budget: ") + e.what());
  } catch (const std::bad_alloc&) {
    return core::make_error("memory budget: cannot map " + std::to_string(budget) + " bytes");
  }
}

// The algorithms whose state has a fixed size, in AnyTable's order.
template <class... A>
core::Expected<TableLimit> make_any(const spec::LimitSpec& spec, std::size_t budget,
                                    std::variant<TablePtr<A>...>* /*type tag*/) {
  std::optional<core::Expected<TableLimit>> out;
  (void)((std::holds_alternative<typename A::Params>(spec.params) &&
          (out.emplace(make<A>(spec, std::get<typename A::Params>(spec.params), budget)), true)) ||
         ...);
  if (out) return *out;
  return core::make_error(spec.algorithm +
                          " keeps a log per key and cannot live in a fixed-size table; "
                          "use sliding-window for bounded memory");
}

}  // namespace

core::Expected<TableLimit> make_table_limit(const spec::LimitSpec& spec, std::size_t budget) {
  return make_any(spec, budget, static_cast<AnyTable*>(nullptr));
}

table::TableStats stats_of(const TableLimit& limit) {
  return std::visit([](const auto& t) { return t->stats(); }, limit.table);
}

}  // namespace sluice::local
