// IP addresses and networks as requests and the config write them: one parser for the trusted
// proxies of the config, the client address of a request and its X-Forwarded-For hops.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sluice/core/expected.hpp"

namespace sluice::proto::http {

// An IP address of `family` (AF_INET, AF_INET6) in its exact text form into `out` (4 or 16
// bytes); false for anything else.
bool parse_ip(int family, std::string_view text, unsigned char* out);

// An address in its one canonical text: IPv4 dotted quad, IPv6 as inet_ntop writes it (lower
// case, zeros compressed), an IPv4-mapped IPv6 as IPv4. Room for the longest of them.
class IpAddress {
 public:
  // Parses "192.0.2.7", "192.0.2.7:8080", "2001:db8::1", "[2001:db8::1]:8080", a quoted or
  // bracketed Forwarded node; false for anything else ("unknown", "_hidden", "garbage").
  bool parse(std::string_view text);
  std::string_view text() const { return {buf_, len_}; }
  bool v6() const { return v6_; }
  const unsigned char* bytes() const { return bytes_; }  // 4 or 16

  // Keeps the first `bits` of the address (of 32 or 128) and zeros the rest; text() becomes the
  // network, "203.0.113.0/24", "2001:db8:1:2::/64". A length at or past the address's changes
  // nothing: a /32 of an IPv4 address is the address itself, written as it was.
  void keep_prefix(int bits);

 private:
  char buf_[48] = {};
  std::size_t len_ = 0;
  bool v6_ = false;
  unsigned char bytes_[16] = {};
};

// An IPv4 or IPv6 network, "10.0.0.0/8", "::1/128"; a bare address is a /32 or /128.
struct Cidr {
  std::string text;
  bool v6 = false;
  unsigned char bytes[16] = {};
  int prefix = 0;
  bool contains(const IpAddress& address) const;
  friend bool operator==(const Cidr& a, const Cidr& b) { return a.text == b.text; }
};

// "10.0.0.0/8", "::1/128", or a bare address; host bits must be zero. The error says what is
// wrong and, for host bits, the network meant: "network '10.0.0.1/8' has address bits set
// after the /8 prefix; did you mean 10.0.0.0/8?".
core::Expected<Cidr> parse_cidr(std::string_view text);

}  // namespace sluice::proto::http
