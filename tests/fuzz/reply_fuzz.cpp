// Fuzz target: the Redis client's RESP2 reply reader (src/backend/redis/client/reply_reader.cpp),
// fed what a Redis server sends, in reads of any size, as the connection delivers them.
//
// Input: byte 0 picks the read size (bits 1-7: 1 to 128 bytes) and whether replies are asked for
// in the store's compact form (bit 0: arrays of integers into Reply::integers); the rest is the
// server's bytes. Besides not crashing, the reader must give the same replies however the bytes
// are cut (it resumes a split array at the element it stopped in), the same error, and stay
// failed after one. In compact form, an array's integers must be the ones the tree form reads.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "reply_reader.hpp"

namespace {

using sluice::backend::redis::Reply;
using sluice::backend::redis::detail::ReplyReader;

struct Outcome {
  std::vector<Reply> replies;
  bool failed = false;
  std::string error;
};

bool same(const Reply& a, const Reply& b) {
  if (a.type != b.type || a.str != b.str || a.integer != b.integer || a.integers != b.integers ||
      a.elements.size() != b.elements.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.elements.size(); ++i) {
    if (!same(a.elements[i], b.elements[i])) return false;
  }
  return true;
}

bool same(const std::vector<Reply>& a, const std::vector<Reply>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(),
                    [](const Reply& x, const Reply& y) { return same(x, y); });
}

// The compact form of a tree reply: an array whose elements are all integers, as integers.
Reply compacted(const Reply& r) {
  if (r.type != Reply::Type::kArray || r.elements.empty()) return r;
  if (!std::all_of(r.elements.begin(), r.elements.end(),
                   [](const Reply& e) { return e.type == Reply::Type::kInteger; })) {
    return r;
  }
  Reply c;
  c.type = Reply::Type::kArray;
  for (const Reply& e : r.elements) c.integers.push_back(e.integer);
  return c;
}

Outcome read_in_pieces(std::string_view bytes, std::size_t read, bool compact) {
  ReplyReader reader;
  Outcome out;
  for (std::size_t fed = 0; fed < bytes.size() && !out.failed;) {
    const std::size_t n = std::min(read, bytes.size() - fed);
    reader.feed(bytes.data() + fed, n);
    fed += n;
    for (;;) {
      Reply reply;
      const ReplyReader::Status s = reader.next(reply, compact);
      if (s == ReplyReader::Status::kNeedMore) break;
      if (s == ReplyReader::Status::kError) {
        out.failed = true;
        out.error = reader.error();
        SLUICE_FUZZ_CHECK(!out.error.empty(), "an error says what it is");
        Reply after;
        SLUICE_FUZZ_CHECK(reader.next(after, compact) == ReplyReader::Status::kError,
                          "an error is final");
        break;
      }
      SLUICE_FUZZ_CHECK(compact || reply.integers.empty(), "integers only when asked for");
      out.replies.push_back(std::move(reply));
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool compact = (data[0] & 1) != 0;
  const std::size_t read = 1 + (data[0] >> 1);
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome whole = read_in_pieces(bytes, bytes.size() + 1, compact);
  const Outcome pieces = read_in_pieces(bytes, read, compact);
  SLUICE_FUZZ_CHECK(same(whole.replies, pieces.replies), "the replies depend on how TCP cuts them");
  SLUICE_FUZZ_CHECK(whole.failed == pieces.failed, "an error depends on how TCP cuts the bytes");
  SLUICE_FUZZ_CHECK(whole.error == pieces.error, "the error's text depends on the cuts");
  if (compact && !whole.failed) {
    const Outcome tree = read_in_pieces(bytes, bytes.size() + 1, false);
    SLUICE_FUZZ_CHECK(!tree.failed, "the compact form accepts what the tree form refuses");
    std::vector<Reply> expected;
    for (const Reply& r : tree.replies) expected.push_back(compacted(r));
    SLUICE_FUZZ_CHECK(same(whole.replies, expected), "compact integers differ from the tree's");
  }
  return 0;
}
