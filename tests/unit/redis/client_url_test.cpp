// Store URLs and key slots: the parts of the Redis client that need no server.
#include <gtest/gtest.h>

#include "sluice/backend/redis/endpoint.hpp"
#include "sluice/backend/redis/key_slot.hpp"

namespace sluice::backend::redis {
namespace {

TEST(ClientUrl, Standalone) {
  auto url = parse_store_url("redis://127.0.0.1:6380");
  ASSERT_TRUE(url) << url.error();
  EXPECT_FALSE(url->cluster);
  ASSERT_EQ(url->seeds.size(), 1U);
  EXPECT_EQ(url->seeds[0], (Endpoint{"127.0.0.1", 6380}));
  EXPECT_EQ(format_store_url(*url), "redis://127.0.0.1:6380");

  auto default_port = parse_store_url("redis://redis.internal/");
  ASSERT_TRUE(default_port) << default_port.error();
  EXPECT_EQ(default_port->seeds[0], (Endpoint{"redis.internal", 6379}));

  auto v6 = parse_store_url("redis://[::1]:7000");
  ASSERT_TRUE(v6) << v6.error();
  EXPECT_EQ(v6->seeds[0], (Endpoint{"::1", 7000}));
  EXPECT_EQ(format_store_url(*v6), "redis://[::1]:7000");
}

TEST(ClientUrl, Cluster) {
  auto url = parse_store_url("redis-cluster://10.0.0.1:7000,10.0.0.2:7001,redis-3");
  ASSERT_TRUE(url) << url.error();
  EXPECT_TRUE(url->cluster);
  ASSERT_EQ(url->seeds.size(), 3U);
  EXPECT_EQ(url->seeds[1], (Endpoint{"10.0.0.2", 7001}));
  EXPECT_EQ(url->seeds[2], (Endpoint{"redis-3", 6379}));
  EXPECT_EQ(format_store_url(*url), "redis-cluster://10.0.0.1:7000,10.0.0.2:7001,redis-3:6379");
}

TEST(ClientUrl, UserDatabaseAndTlsFromTheUrl) {
  auto url = parse_store_url("rediss://sluice@10.0.0.1:6380/2");
  ASSERT_TRUE(url) << url.error();
  EXPECT_TRUE(url->tls.enabled);
  EXPECT_TRUE(url->tls.verify);
  EXPECT_EQ(url->auth.user, "sluice");
  EXPECT_EQ(url->auth.password, "");
  EXPECT_EQ(url->db, 2);
  EXPECT_EQ(url->seeds[0], (Endpoint{"10.0.0.1", 6380}));
  EXPECT_EQ(format_store_url(*url), "rediss://sluice@10.0.0.1:6380/2");

  auto plain = parse_store_url("redis://h/0");
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_FALSE(plain->tls.enabled);
  EXPECT_EQ(plain->db, 0);
  EXPECT_EQ(format_store_url(*plain), "redis://h:6379");

  auto cluster = parse_store_url("rediss-cluster://a:7000,b:7001/0");
  ASSERT_TRUE(cluster) << cluster.error();
  EXPECT_TRUE(cluster->cluster);
  EXPECT_TRUE(cluster->tls.enabled);
  EXPECT_EQ(format_store_url(*cluster), "rediss-cluster://a:7000,b:7001");
}

TEST(ClientUrl, SentinelsOnTheirPortAndTheMastersName) {
  auto url = parse_store_url("redis-sentinel://10.0.0.1,10.0.0.2:5000,[::1]/mymaster/3");
  ASSERT_TRUE(url) << url.error();
  EXPECT_TRUE(url->sentinel);
  EXPECT_FALSE(url->cluster);
  ASSERT_EQ(url->seeds.size(), 3U);
  EXPECT_EQ(url->seeds[0], (Endpoint{"10.0.0.1", 26379}));
  EXPECT_EQ(url->seeds[1], (Endpoint{"10.0.0.2", 5000}));
  EXPECT_EQ(url->seeds[2], (Endpoint{"::1", 26379}));
  EXPECT_EQ(url->master, "mymaster");
  EXPECT_EQ(url->db, 3);
  EXPECT_EQ(format_store_url(*url),
            "redis-sentinel://10.0.0.1:26379,10.0.0.2:5000,[::1]:26379/mymaster/3");
  auto again = parse_store_url(format_store_url(*url));
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(*again, *url);

  auto tls = parse_store_url("rediss-sentinel://s1:26380/cache");
  ASSERT_TRUE(tls) << tls.error();
  EXPECT_TRUE(tls->sentinel && tls->tls.enabled);
  EXPECT_EQ(tls->master, "cache");
  EXPECT_EQ(tls->db, 0);
}

TEST(ClientUrl, ErrorsNameTheBadPart) {
  auto expect_error = [](std::string_view text, std::string_view part) {
    auto url = parse_store_url(text);
    ASSERT_FALSE(url) << text;
    EXPECT_NE(url.error().find(part), std::string::npos) << url.error();
  };
  expect_error("http://h:1", "unknown scheme 'http'");
  expect_error("127.0.0.1:6379", "has no scheme");
  expect_error("redis://", "names no host");
  expect_error("redis://h:0", "bad port '0'");
  expect_error("redis://h:65536", "bad port '65536'");
  expect_error("redis://h:x1", "bad port 'x1'");
  expect_error("redis://a:1,b:2", "use redis-cluster://");
  expect_error("redis-cluster://a:1,,b:2", "empty seed 2");
  expect_error("redis-cluster://a:1,b:2x", "seed 2 'b:2x'");
  expect_error("redis://user:secret@h:1", "a password in the Redis URL");
  expect_error("redis://:secret@h:1", "a password in the Redis URL");
  expect_error("redis://@h:1", "empty user");
  expect_error("redis://h:1/x", "bad database number 'x'");
  expect_error("redis://h:1/-1", "bad database number '-1'");
  expect_error("redis://h:1/2147483648", "bad database number '2147483648'");
  expect_error("redis-cluster://a:1,b:2/3", "Redis Cluster has only database 0");
  expect_error("redis-sentinel://a:1,b:2", "needs the master's name");
  expect_error("redis-sentinel://a:1/", "needs the master's name");
  expect_error("redis-sentinel://a:1/my master", "may hold no spaces");
  expect_error("rediss://a:1,b:2", "takes one host");
  expect_error("redis-sentinel://a:1/m/x", "bad database number 'x'");
  expect_error("redis://::1:6379", "needs brackets");
  expect_error("redis://[::1:6379", "unclosed '['");
}

TEST(ClientKeySlot, ValuesFromTheClusterSpec) {
  EXPECT_EQ(crc16("123456789"), 0x31C3);
  EXPECT_EQ(key_slot("123456789"), 0x31C3 % 16384);
  EXPECT_EQ(key_slot("123456789"), 12739);
  EXPECT_EQ(key_slot(""), 0);
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
  EXPECT_EQ(key_slot("foo{}{bar}"), crc16("foo{}{bar}") % 16384);
  EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));
  EXPECT_EQ(key_slot("foo{bar}{zap}"), key_slot("bar"));
  EXPECT_EQ(key_slot("{}"), crc16("{}") % 16384);
  EXPECT_EQ(key_slot("no{close"), crc16("no{close") % 16384);
}

}  // namespace
}  // namespace sluice::backend::redis
