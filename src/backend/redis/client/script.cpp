// Script (sluice/backend/redis/client.hpp): its SHA1 is computed once, here, not per call.
#include "sha1.hpp"
#include "sluice/backend/redis/client.hpp"

namespace sluice::backend::redis {

Script::Script(std::string text) : text_(std::move(text)), sha1_(detail::sha1_hex(text_)) {}

}  // namespace sluice::backend::redis
