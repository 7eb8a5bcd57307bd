// A response head as Beast's parser read it, seen as the ResponseHead the hand-written scanner
// fills: what the relay, the stale copy and settlement read, whichever of the two read the head.
#pragma once

#include <vector>

#include "sluice/proto/http/response_head.hpp"

namespace sluice::server::gateway {

// The head `parser` has read, its fields listed in `fields` (which, like the parser, must
// outlive the view).
template <class Parser>
proto::http::ResponseHead response_view(const Parser& parser,
                                        std::vector<proto::http::HeadField>& fields) {
  const auto& res = parser.get();
  fields.clear();
  for (const auto& f : res) fields.push_back({f.name_string(), f.value()});
  proto::http::ResponseHead head;
  head.status = res.result_int();
  head.version = res.version();
  head.reason = res.reason();
  head.keep_alive = parser.keep_alive();
  if (const auto cl = parser.content_length()) head.content_length = *cl;
  head.fields = fields;
  return head;
}

}  // namespace sluice::server::gateway
