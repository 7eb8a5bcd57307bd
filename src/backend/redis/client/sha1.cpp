// sha1_hex (sha1.hpp), by OpenSSL's digest.
#include "sha1.hpp"

#include <openssl/evp.h>

#include <stdexcept>

#include "sluice/core/utf8.hpp"

namespace sluice::backend::redis::detail {

std::string sha1_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha1(), nullptr) != 1) {
    throw std::runtime_error("SHA-1 of the Redis script failed (OpenSSL EVP_Digest)");
  }
  return core::hex(std::string_view(reinterpret_cast<const char*>(digest), size));
}

}  // namespace sluice::backend::redis::detail
