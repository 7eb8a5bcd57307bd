// The commands a MULTI queues until EXEC, and what they cost. Each command is kept as one
// allocation holding its arguments, so a queue costs about its bytes; the session caps the
// count and the bytes (resp.max_queued_commands, resp.max_queued_bytes), and what a large queue
// took is handed back to the system when it goes (glibc keeps freed heap memory otherwise).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::server::resp {

class TransactionQueue {
 public:
  TransactionQueue() = default;
  TransactionQueue(TransactionQueue&& other) noexcept;
  TransactionQueue& operator=(TransactionQueue&& other) noexcept;
  TransactionQueue(const TransactionQueue&) = delete;
  TransactionQueue& operator=(const TransactionQueue&) = delete;
  ~TransactionQueue();

  // The argument bytes a command counts for.
  static std::size_t bytes_of(std::span<const std::string_view> args);

  // Counts a command answered QUEUED; keeps it for EXEC only when `keep` (a transaction that
  // EXEC will refuse anyway keeps nothing).
  void add(std::span<const std::string_view> args, bool keep);
  // Drops the commands kept; the counts stay (the transaction is still open).
  void drop();
  // Empties it all (MULTI, EXEC, DISCARD, the connection's close).
  void clear();

  std::size_t commands() const { return commands_; }  // counted since MULTI
  std::size_t bytes() const { return bytes_; }
  std::size_t kept() const { return kept_.size(); }
  // The arguments of kept command `i`, as views into the queue.
  void unpack(std::size_t i, std::vector<std::string_view>& args) const;

 private:
  std::vector<std::string> kept_;  // each: per argument a 4-byte length, then its bytes
  std::size_t commands_ = 0;
  std::size_t bytes_ = 0;
  std::size_t kept_bytes_ = 0;
};

}  // namespace sluice::server::resp
