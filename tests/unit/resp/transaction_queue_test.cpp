// A MULTI's queue: what it keeps comes back byte for byte, what it counts keeps counting
// after the commands are dropped, and clearing resets both.
#include "transaction_queue.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace sluice::server::resp {
namespace {

using Args = std::vector<std::string_view>;

TEST(TransactionQueue, KeepsEachCommandsArgumentsByteForByte) {
  TransactionQueue q;
  const std::string binary("a\0b\r\n", 5);
  const std::string big(100000, 'z');
  q.add(Args{"CL.THROTTLE", "k", "1", "2", "60"}, true);
  q.add(Args{"PING", "", binary}, true);
  q.add(Args{"ECHO", big}, true);
  ASSERT_EQ(q.kept(), 3u);
  EXPECT_EQ(q.commands(), 3u);
  EXPECT_EQ(q.bytes(), 11u + 1 + 1 + 1 + 2 + 4 + 0 + 5 + 4 + 100000);
  std::vector<std::string_view> args;
  q.unpack(0, args);
  EXPECT_EQ(args, (Args{"CL.THROTTLE", "k", "1", "2", "60"}));
  q.unpack(1, args);
  EXPECT_EQ(args, (Args{"PING", "", binary}));
  q.unpack(2, args);
  EXPECT_EQ(args, (Args{"ECHO", big}));
}

TEST(TransactionQueue, ADroppedQueueKeepsNothingButGoesOnCounting) {
  TransactionQueue q;
  q.add(Args{"PING", "12345678"}, true);
  q.drop();
  q.add(Args{"PING"}, false);
  EXPECT_EQ(q.kept(), 0u);
  EXPECT_EQ(q.commands(), 2u);
  EXPECT_EQ(q.bytes(), 16u);
  TransactionQueue moved = std::move(q);
  EXPECT_EQ(moved.commands(), 2u);
  EXPECT_EQ(q.commands(), 0u);  // NOLINT(bugprone-use-after-move): a moved-from queue is empty
  moved.clear();
  EXPECT_EQ(moved.commands(), 0u);
  EXPECT_EQ(moved.bytes(), 0u);
}

}  // namespace
}  // namespace sluice::server::resp
