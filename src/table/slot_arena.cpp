// SlotArena (sluice/table/slot_arena.hpp): an anonymous mapping, with transparent huge pages
// requested because random slot access at millions of keys is dominated by TLB misses.
#include "sluice/table/slot_arena.hpp"

#include <sys/mman.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>

namespace sluice::table {

SlotArena::SlotArena(std::size_t bytes) : data_(nullptr), bytes_(bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, bytes, MADV_HUGEPAGE);  // best effort: ignored where THP is off
  data_ = p;
}

SlotArena::~SlotArena() { munmap(data_, bytes_); }

core::Expected<std::size_t> parse_bytes(std::string_view text) {
  const std::string s(text);
  auto fail = [&](const std::string& why) { return core::make_error("size '" + s + "' " + why); };
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0) return fail("must be bytes with an optional unit (e.g. 64MiB, 16m, 1GiB)");
  errno = 0;
  const unsigned long long n = std::strtoull(s.substr(0, digits).c_str(), nullptr, 10);
  if (errno == ERANGE) return fail("is too large");
  std::string unit = s.substr(digits);
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  unsigned long long scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  if (unit == "k" || unit == "kib" || unit == "kb") scale = 1ull << 10;
  if (unit == "m" || unit == "mib" || unit == "mb") scale = 1ull << 20;
  if (unit == "g" || unit == "gib" || unit == "gb") scale = 1ull << 30;
  if (scale == 0) return fail("has an unknown unit (accepted: bytes, k/KiB, m/MiB, g/GiB)");
  if (n > std::numeric_limits<std::size_t>::max() / scale) return fail("is too large");
  return static_cast<std::size_t>(n * scale);
}

}  // namespace sluice::table
