// Redis addresses and URLs under the backend's names. Where Redis lives is a value of the
// config too, so the codec itself sits below both, in proto/resp/store_url.hpp.
#pragma once

#include "sluice/proto/resp/store_url.hpp"

namespace sluice::backend::redis {

// Where Redis lives is a value of the config too, so its codec sits in proto/resp.
using proto::resp::Endpoint;
using proto::resp::format_endpoint;
using proto::resp::format_store_url;
using proto::resp::parse_endpoint;
using proto::resp::parse_store_url;
using proto::resp::StoreAuth;
using proto::resp::StoreTls;
using proto::resp::StoreUrl;

}  // namespace sluice::backend::redis
