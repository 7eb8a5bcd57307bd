// BlockTable (src/engine/block_table.hpp): what the listing of a rule's blocks reads. Blocks
// listed the longest left first, then by key; ended ones never; a long key's text cut at a
// character's start; its memory counted as held, and bounded by the table's capacity.
#include "block_table.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/units.hpp"

namespace sluice::engine::detail {
namespace {

using test::units::kSecond;

void block(BlockTable& t, const std::string& key, core::Nanos until, core::Nanos now = 0) {
  t.block(table::hash_key(key), key, until, now);
}

std::vector<std::string> texts(const std::vector<BlockTable::Listed>& listed) {
  std::vector<std::string> out;
  for (const auto& l : listed) out.push_back(l.text);
  return out;
}

TEST(BlockTable, ListsTheLongestLeftFirstThenByKeyAndNeverAnEndedBlock) {
  BlockTable t;
  block(t, "ends-first", 10 * kSecond);
  block(t, "b", 60 * kSecond);
  block(t, "a", 60 * kSecond);
  block(t, "latest", 90 * kSecond);
  std::size_t live = 0;
  EXPECT_EQ(texts(t.list(10, 0, live)),
            (std::vector<std::string>{"latest", "a", "b", "ends-first"}));
  EXPECT_EQ(live, 4u);
  EXPECT_EQ(texts(t.list(2, 0, live)), (std::vector<std::string>{"latest", "a"}));
  EXPECT_EQ(live, 4u) << "how many are in force, whatever n";

  EXPECT_EQ(texts(t.list(10, 10 * kSecond, live)), (std::vector<std::string>{"latest", "a", "b"}))
      << "a block ends at its end";
  EXPECT_EQ(live, 3u);
  EXPECT_EQ(t.size(), 3u) << "the listing dropped the ended block";

  ASSERT_TRUE(t.unblock(table::hash_key("a")));
  EXPECT_EQ(texts(t.list(10, 0, live)), (std::vector<std::string>{"latest", "b"}));
}

TEST(BlockTable, AKeyBlockedAgainKeepsItsTextAndItsLaterEnd) {
  BlockTable t;
  block(t, "k", 60 * kSecond);
  block(t, "k", 30 * kSecond);
  std::size_t live = 0;
  const auto listed = t.list(10, 0, live);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].until, 60 * kSecond);
  EXPECT_EQ(listed[0].text, "k");
  EXPECT_EQ(listed[0].key_size, 1u);
}

TEST(BlockTable, ALongKeyIsKeptCutAtACharactersStartAndBlockedWhole) {
  BlockTable t;
  const std::string ascii(300, 'k');
  std::string text = "a";  // then 200 two-byte characters: byte 256 is inside one
  for (int i = 0; i < 200; ++i) text += "\xc3\xa9";
  block(t, ascii, 60 * kSecond);
  block(t, text, 50 * kSecond);
  std::size_t live = 0;
  const auto listed = t.list(10, 0, live);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].text, ascii.substr(0, BlockTable::kKeyBytes));
  EXPECT_EQ(listed[0].key_size, 300u);
  EXPECT_EQ(listed[1].text, text.substr(0, 255)) << "not the é's first byte alone";
  EXPECT_EQ(listed[1].key_size, 401u);
  EXPECT_TRUE(t.blocked_until(table::hash_key(ascii), 0)) << "blocked by the whole key's hash";
  EXPECT_FALSE(t.blocked_until(table::hash_key(ascii.substr(0, 256)), 0));
  EXPECT_EQ(cut_key("ab", 2), "ab");
  EXPECT_EQ(cut_key("a\x80\x80\x80\x80\x80", 5), "a\x80") << "at most 3 bytes backed off";
}

TEST(BlockTable, CountsTheMemoryItHoldsAndGivesItBack) {
  BlockTable t;
  EXPECT_EQ(t.memory_bytes(), 0u);
  block(t, "203.0.113.7", 60 * kSecond);
  const std::size_t entry = t.memory_bytes();
  EXPECT_EQ(entry, 128u) << "docs/admin-api.md, Blocks: 128 bytes a short key";
  block(t, std::string(400, 'x'), 60 * kSecond);
  EXPECT_EQ(t.memory_bytes(), 2 * entry + 272) << "the text's 257 bytes, as malloc rounds them";
  ASSERT_TRUE(t.unblock(table::hash_key("203.0.113.7")));
  EXPECT_EQ(t.memory_bytes(), entry + 272);
  std::size_t live = 0;
  t.list(10, 61 * kSecond, live);  // the long key's block has ended: dropped
  EXPECT_EQ(t.memory_bytes(), 0u);
}

TEST(BlockTable, HoldsAtMostItsCapacityAndItsMemoryStaysBounded) {
  BlockTable t;
  for (int i = 0; i < static_cast<int>(BlockTable::kCapacity) + 5000; ++i) {
    block(t, "user-" + std::to_string(i), (60 + i) * kSecond, 0);
  }
  EXPECT_EQ(t.size(), BlockTable::kCapacity);
  EXPECT_EQ(t.memory_bytes(), BlockTable::kCapacity * 128);
  std::size_t live = 0;
  const auto listed = t.list(BlockList::kMaxListed, 0, live);
  EXPECT_EQ(live, BlockTable::kCapacity);
  ASSERT_EQ(listed.size(), BlockList::kMaxListed);
  EXPECT_EQ(listed.front().text, "user-" + std::to_string(BlockTable::kCapacity + 4999))
      << "the latest blocks stayed: each full stripe let go of the one ending soonest";
}

}  // namespace
}  // namespace sluice::engine::detail
