// RESP2 and RESP3 reply serialisation.
#include "sluice/proto/resp/reply_writer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sluice::proto::resp {
namespace {

TEST(ReplyWriter, WritesRedisTypes) {
  std::string out;
  ReplyWriter w(out);
  w.simple("OK");
  w.integer(-1);
  w.integer(9223372036854775807);
  w.bulk("");
  w.bulk("a\r\nb");
  w.array(2);
  w.error("ERR bad\r\nthing");
  EXPECT_EQ(out,
            "+OK\r\n:-1\r\n:9223372036854775807\r\n$0\r\n\r\n$4\r\na\r\nb\r\n*2\r\n"
            "-ERR bad  thing\r\n");
}

TEST(ReplyWriter, WritesMapsNullsAndVerbatimPerProtocol) {
  std::string two;
  ReplyWriter w2(two, 2);
  w2.map(1);
  w2.bulk("k");
  w2.null();
  w2.verbatim("hi");
  w2.set(0);
  EXPECT_EQ(two, "*2\r\n$1\r\nk\r\n$-1\r\n$2\r\nhi\r\n*0\r\n");

  std::string three;
  ReplyWriter w3(three, 3);
  w3.map(1);
  w3.bulk("k");
  w3.null();
  w3.verbatim("hi");
  w3.set(0);
  EXPECT_EQ(three, "%1\r\n$1\r\nk\r\n_\r\n=6\r\ntxt:hi\r\n~0\r\n");
}

}  // namespace
}  // namespace sluice::proto::resp
