// TransactionQueue (transaction_queue.hpp).
#include "transaction_queue.hpp"

#include <malloc.h>

#include <cstdint>
#include <cstring>
#include <utility>

namespace sluice::server::resp {

namespace {

// A queue that held this much gives its pages back (malloc_trim) when it goes. Smaller ones
// are left to the allocator: their memory is reused by the next requests, and trimming walks
// every arena, which is not free.
constexpr std::size_t kTrimAfter = 1u << 20;

void give_back(std::size_t held) {
  if (held >= kTrimAfter) ::malloc_trim(0);
}

}  // namespace

TransactionQueue::TransactionQueue(TransactionQueue&& other) noexcept
    : kept_(std::move(other.kept_)),
      commands_(std::exchange(other.commands_, 0)),
      bytes_(std::exchange(other.bytes_, 0)),
      kept_bytes_(std::exchange(other.kept_bytes_, 0)) {
  other.kept_.clear();
}

TransactionQueue& TransactionQueue::operator=(TransactionQueue&& other) noexcept {
  if (this != &other) {
    clear();
    kept_ = std::move(other.kept_);
    other.kept_.clear();
    commands_ = std::exchange(other.commands_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    kept_bytes_ = std::exchange(other.kept_bytes_, 0);
  }
  return *this;
}

TransactionQueue::~TransactionQueue() { clear(); }

std::size_t TransactionQueue::bytes_of(std::span<const std::string_view> args) {
  std::size_t n = 0;
  for (std::string_view a : args) n += a.size();
  return n;
}

void TransactionQueue::add(std::span<const std::string_view> args, bool keep) {
  const std::size_t n = bytes_of(args);
  ++commands_;
  bytes_ += n;
  if (!keep) return;
  std::string packed;
  packed.reserve(n + args.size() * sizeof(std::uint32_t));
  for (std::string_view a : args) {
    // The parser caps an argument far below 4 GiB (ParserLimits::max_bulk).
    const auto size = static_cast<std::uint32_t>(a.size());
    char prefix[sizeof size];
    std::memcpy(prefix, &size, sizeof size);
    packed.append(prefix, sizeof size);
    packed.append(a);
  }
  kept_bytes_ += packed.capacity();
  kept_.push_back(std::move(packed));
}

void TransactionQueue::drop() {
  const std::size_t held = kept_bytes_;
  std::vector<std::string>().swap(kept_);
  kept_bytes_ = 0;
  give_back(held);
}

void TransactionQueue::clear() {
  drop();
  commands_ = 0;
  bytes_ = 0;
}

void TransactionQueue::unpack(std::size_t i, std::vector<std::string_view>& args) const {
  args.clear();
  const std::string& packed = kept_[i];
  std::size_t at = 0;
  while (at < packed.size()) {
    std::uint32_t size = 0;
    std::memcpy(&size, packed.data() + at, sizeof size);
    at += sizeof size;
    args.emplace_back(packed.data() + at, size);
    at += size;
  }
}

}  // namespace sluice::server::resp
