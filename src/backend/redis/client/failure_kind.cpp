// failure_kind_name (sluice/backend/redis/reply.hpp).
#include "sluice/backend/redis/reply.hpp"

namespace sluice::backend::redis {

std::string_view failure_kind_name(Failure::Kind kind) {
  switch (kind) {
    case Failure::Kind::kTimeout:
      return "timeout";
    case Failure::Kind::kConnection:
      return "connection";
    case Failure::Kind::kRedirects:
      return "redirects";
    case Failure::Kind::kOverloaded:
      return "overloaded";
    case Failure::Kind::kProtocol:
      return "protocol";
  }
  return "unknown";
}

}  // namespace sluice::backend::redis
