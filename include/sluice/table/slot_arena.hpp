// Fixed-size zeroed memory for a table, mapped once and never grown: the table's budget is
// what is reserved here. Pages are touched (and counted in RSS) only as slots get used.
#pragma once

#include <cstddef>
#include <string_view>

#include "sluice/core/expected.hpp"

namespace sluice::table {

class SlotArena {
 public:
  explicit SlotArena(std::size_t bytes);  // throws std::bad_alloc when the mapping fails
  ~SlotArena();
  SlotArena(const SlotArena&) = delete;
  SlotArena& operator=(const SlotArena&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_;
  std::size_t bytes_;
};

}  // namespace sluice::table
