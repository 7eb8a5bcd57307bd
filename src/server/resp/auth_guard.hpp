// What a failed AUTH costs the client who sent it: counted (INFO stats, metrics), said on
// stderr at most once a second, charged to its peer address so that reconnecting does not
// restore the guessing rate, and after resp.max_auth_failures on one connection, the close.
// The per-address count is the engine's (an inline GCRA limit); none is kept here.
#pragma once

#include <boost/asio/ip/address.hpp>
#include <string>
#include <string_view>

#include "resp_context.hpp"

namespace sluice::server::resp {

// The address a peer's failures are counted under: the IP for IPv4 (and IPv4-mapped IPv6),
// the /64 for IPv6 (one host commonly holds a whole /64).
std::string peer_of(const boost::asio::ip::address& ip);

// Before a password is looked at: true when the peer may try one more. Otherwise the refusal
// is answered (and counted as a failure) and false returned.
bool auth_admitted(Context& ctx, std::string_view user);

// A user or password that did not match: answers WRONGPASS (with the close said when it is
// the connection's last), counts and charges it.
void auth_failed(Context& ctx, std::string_view user);

}  // namespace sluice::server::resp
