// What a Redis command comes back as: the server's reply as a plain value, or the reason the
// client could not get one. Callers of the Redis client see only these.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sluice::backend::redis {

// One RESP2 value, as the client's reader parses it from the wire. Error replies are
// values too (Type::kError, the message in `str` without the leading '-'): the command reached
// Redis and Redis refused it, which the caller handles, unlike a Failure.
struct Reply {
  enum class Type { kString, kStatus, kError, kInteger, kNil, kArray };
  Type type = Type::kNil;
  std::string str;  // kString (binary-safe), kStatus, kError
  long long integer = 0;
  std::vector<Reply> elements;  // kArray
  // kArray of integers only, read for a command that asked for it (the store's script calls):
  // its elements as plain numbers, and `elements` empty. A tree of 8 Reply values per decision
  // cost more than the decision's own work.
  std::vector<long long> integers;

  bool is_error() const { return type == Type::kError; }
};

// The command got no reply the caller can use. Whether Redis ran it is unknown for kTimeout and
// kConnection (it may have, with its reply lost); it did not for kOverloaded.
struct Failure {
  enum class Kind {
    kTimeout,     // no reply within ClientOptions::timeout
    kConnection,  // not connected, the connection was lost, or the client was closed
    kRedirects,   // cluster: more MOVED/ASK redirects than the bound
    kOverloaded,  // the connection already has max_pending commands waiting
    kProtocol,    // the server sent something that is not RESP, or a bad redirect
  };
  Kind kind = Kind::kConnection;
  std::string message;
};

// "timeout", "connection", ...: for logs and metric labels.
std::string_view failure_kind_name(Failure::Kind kind);

using Outcome = std::variant<Reply, Failure>;

// Called exactly once per command, on the client's io_context.
using Callback = std::function<void(Outcome)>;

}  // namespace sluice::backend::redis
