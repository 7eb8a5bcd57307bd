// Store's part in the listing of a rule's blocks (sluice/backend/redis/block_list.hpp): a block
// the script started goes into its rule's list, one lifted comes out. Fire and forget: a write
// that fails leaves the block in force, only not listed (or listed until the listing's own
// check of its block key finds it gone).
#include "sluice/backend/redis/block_list.hpp"
#include "sluice/backend/redis/store.hpp"

namespace sluice::backend::redis {

void Store::list_block(const QueryItem& item, std::int64_t ends_ms) {
  const std::string& list = item.limit->options().block_list;
  client_->eval(block_list_add_script(), {list},
                {std::to_string(ends_ms), item.key, std::to_string(kBlockListCapacity)},
                [](Outcome) {});
}

void Store::unlist_block(const QueryItem& item) {
  const std::string& list = item.limit->options().block_list;
  client_->command({"ZREM", list, item.key}, list, [](Outcome) {});
}

}  // namespace sluice::backend::redis
