// SlotArena (sluice/table/slot_arena.hpp): an anonymous mapping, with transparent huge pages
// requested because random slot access at millions of keys is dominated by TLB misses.
#include "sluice/table/slot_arena.hpp"

#include <sys/mman.h>

#include <new>

namespace sluice::table {

SlotArena::SlotArena(std::size_t bytes) : data_(nullptr), bytes_(bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, bytes, MADV_HUGEPAGE);  // best effort: ignored where THP is off
  data_ = p;
}

SlotArena::~SlotArena() { munmap(data_, bytes_); }

}  // namespace sluice::table
