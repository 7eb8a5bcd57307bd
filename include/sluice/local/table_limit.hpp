// A limit of any fixed-size-state algorithm whose per-key states live in a bounded, shared
// KeyedTable: what policies and the daemon's rules are made of.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <variant>

#include "sluice/core/expected.hpp"
#include "sluice/spec/limit_spec.hpp"
#include "sluice/table/keyed_table.hpp"

namespace sluice::local {

template <class A>
using TablePtr = std::shared_ptr<table::KeyedTable<A>>;

// Every algorithm except the sliding log (whose per-key log has no fixed size).
using AnyTable =
    std::variant<TablePtr<core::TokenBucket>, TablePtr<core::Gcra>, TablePtr<core::LeakyBucket>,
                 TablePtr<core::FixedWindow>, TablePtr<core::SlidingWindow>,
                 TablePtr<core::SmoothBursty>, TablePtr<core::SmoothWarmup>,
                 TablePtr<core::UniformQueue>, TablePtr<core::Concurrency>>;

struct TableLimit {
  spec::LimitSpec spec;
  AnyTable table;
};

// A table of `budget_bytes` for the spec's algorithm. Errors: sliding-log (no fixed-size
// state), a budget below one bucket.
core::Expected<TableLimit> make_table_limit(const spec::LimitSpec& spec, std::size_t budget_bytes);

table::TableStats stats_of(const TableLimit& limit);

}  // namespace sluice::local
