// The response head the gateway relays, written from the ResponseHead view both readers fill:
// the upstream's fields less hop-by-hop ones (by name, in any case, and those Connection
// names), then the gateway's own fields and framing, the same whether a field's text was read
// as one "name: value" run or from views elsewhere.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "proxy_head.hpp"
#include "sluice/proto/http/response_head.hpp"

namespace sluice::server::gateway {
namespace {

using proto::http::HeadField;
using proto::http::ResponseHead;
using proto::http::ResponseHeadScanner;

// The relayed head of `upstream_head` (scanned as the fast path does), to an HTTP/1.1 client.
std::string relay_of(std::string_view upstream_head, Framing framing, bool drop_request_id = false,
                     bool head_request = false) {
  ResponseHeadScanner scanner;
  EXPECT_EQ(scanner.scan(upstream_head, head_request, 32u << 10), proto::http::HeadScan::kDone);
  const ResponseHead& h = scanner.head();
  std::string out;
  append_relayed_response_head(out, h, "X-Gateway: 1\r\n", framing, h.content_length.value_or(0),
                               h.keep_alive, 11, drop_request_id);
  return out;
}

TEST(RelayedHead, HopByHopFieldsGoByNameInAnyCaseAndTheGatewayStatesItsOwnFraming) {
  EXPECT_EQ(relay_of("HTTP/1.1 200 OK\r\nserver: t\r\nCONNECTION: x-hop, keep-alive\r\n"
                     "X-Hop: 1\r\nkeep-alive: timeout=5\r\nTE: trailers\r\nTrailer: X\r\n"
                     "Upgrade: h2c\r\nproxy-connection: keep-alive\r\nContent-Length: 2\r\n"
                     "ETag:  \"e\" \r\n\r\n",
                     Framing::kLength),
            "HTTP/1.1 200 OK\r\nserver: t\r\nETag: \"e\"\r\nX-Gateway: 1\r\n"
            "Content-Length: 2\r\n\r\n");
}

TEST(RelayedHead, AnAnswerToHeadKeepsItsLength) {
  EXPECT_EQ(relay_of("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", Framing::kNone, false, true),
            "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nX-Gateway: 1\r\n\r\n");
}

TEST(RelayedHead, TheUpstreamsRequestIdGivesWayToTheGateways) {
  const std::string head = "HTTP/1.1 200 OK\r\nx-request-id: up\r\nContent-Length: 0\r\n\r\n";
  EXPECT_EQ(relay_of(head, Framing::kLength, true),
            "HTTP/1.1 200 OK\r\nX-Gateway: 1\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(relay_of(head, Framing::kLength, false),
            "HTTP/1.1 200 OK\r\nx-request-id: up\r\nX-Gateway: 1\r\nContent-Length: 0\r\n\r\n");
}

TEST(RelayedHead, AnEmptyReasonIsTheStatusesOwn) {
  EXPECT_EQ(relay_of("HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n", Framing::kLength),
            "HTTP/1.1 404 Not Found\r\nX-Gateway: 1\r\nContent-Length: 0\r\n\r\n");
}

TEST(RelayedHead, FieldsFromSeparateStringsAreWrittenAsFieldsReadInOneRun) {
  // Views that are not one "name: value" run (a head built by hand, not read from bytes).
  const std::string name = "Server";
  const std::string value = "t";
  const std::vector<HeadField> fields = {{name, value}};
  ResponseHead h;
  h.status = 200;
  h.reason = "OK";
  h.fields = fields;
  std::string out;
  append_relayed_response_head(out, h, {}, Framing::kLength, 0, true, 11);
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nServer: t\r\nContent-Length: 0\r\n\r\n");
}

TEST(RelayedHead, HopByHopByName) {
  for (const char* name : {"Connection", "keep-alive", "PROXY-CONNECTION", "te", "Trailer",
                           "transfer-encoding", "Upgrade", "content-length"}) {
    EXPECT_TRUE(is_hop_by_hop(std::string_view(name))) << name;
  }
  for (const char* name : {"Content-Type", "Keep-Alivex", "T", "Server", "Upgrades"}) {
    EXPECT_FALSE(is_hop_by_hop(std::string_view(name))) << name;
  }
}

}  // namespace
}  // namespace sluice::server::gateway
