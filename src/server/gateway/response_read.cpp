// ClientSession (client_session.hpp), reading the upstream's response: its head through the
// hand-written scanner (proto/http/response_head.hpp) when the scanner takes it, else through
// Beast's parser exactly as before; its body piece by piece. The scanner takes only a head
// with one Content-Length or no body, so its body is a count of bytes and needs no parser.
#include <algorithm>
#include <cstring>

#include "client_session.hpp"
#include "http_io.hpp"
#include "response_view.hpp"

namespace sluice::server::gateway {

namespace asio = boost::asio;
using boost::system::error_code;
using proto::http::HeadScan;

namespace {

// A head that trickles in is scanned again whole at each read: after this many reads the
// parser, which resumes where it stopped, takes over.
constexpr int kScanReads = 4;

}  // namespace

void ClientSession::reset_response() {
  response_.reset();
  response_fast_ = false;
  response_begun_ = false;
  response_left_ = 0;
}

bool ClientSession::response_got_some() const {
  return response_begun_ || (response_ && response_->got_some());
}

bool ClientSession::response_done() const {
  return response_fast_ ? response_left_ == 0 : response_->is_done();
}

Awaitable<error_code> ClientSession::read_response_head(UpstreamConnection& conn,
                                                        bool head_request) {
  reset_response();
  auto [ec, scan] = co_await scan_response_head(conn, head_request);
  if (ec) co_return ec;
  if (scan == HeadScan::kDone) {
    response_head_ = response_scan_->head();
    response_left_ = proto::http::has_body(response_head_.status, head_request)
                         ? *response_head_.content_length
                         : 0;
    response_fast_ = true;
    co_return ec;
  }
  // The bytes are all still in the buffer: the parser reads them as it did without the scanner.
  ResponseParser* rp = &new_response_parser(head_request);
  ec = co_await read_head(conn.socket, conn.buffer, *rp);
  // Interim responses (103 Early Hints...) are not relayed; 100 was answered here.
  while (!ec && rp->get().result_int() / 100 == 1 && rp->get().result_int() != 101) {
    rp = &new_response_parser(head_request);
    ec = co_await read_head(conn.socket, conn.buffer, *rp);
  }
  if (!ec) response_head_ = response_view(*rp, response_fields_);
  co_return ec;
}

Awaitable<std::pair<error_code, HeadScan>> ClientSession::scan_response_head(
    UpstreamConnection& conn, bool head_request) {
  if (!response_scan_) response_scan_ = std::make_unique<proto::http::ResponseHeadScanner>();
  proto::http::ResponseHeadScanner& scanner = *response_scan_;
  for (int reads = 0;; ++reads) {
    if (conn.buffer.size() > 0) {
      response_begun_ = true;
      const auto data = conn.buffer.data();
      const std::string_view bytes(static_cast<const char*>(data.data()), data.size());
      const HeadScan scan = scanner.scan(bytes, head_request, kMaxHeaderBytes);
      if (scan == HeadScan::kDone) {
        // The next read may move the buffer's bytes: the head's views follow a copy of its own.
        response_bytes_.assign(bytes.data(), scanner.size());
        scanner.moved(bytes.data(), response_bytes_.data());
        conn.buffer.consume(scanner.size());
        co_return std::pair{error_code{}, scan};
      }
      if (scan == HeadScan::kFallback || reads >= kScanReads) {
        co_return std::pair{error_code{}, HeadScan::kFallback};
      }
    }
    if (error_code ec = co_await http_io::fill_raw(conn.socket, conn.buffer)) {
      // As the parser says it: nothing came, or the head was cut short.
      if (ec == asio::error::eof) {
        ec = response_begun_ ? http::error::partial_message : http::error::end_of_stream;
      }
      co_return std::pair{ec, HeadScan::kNeedMore};
    }
  }
}

Awaitable<std::pair<error_code, std::size_t>> ClientSession::read_response_piece(
    UpstreamConnection& conn) {
  if (!response_fast_) {
    co_return co_await read_body_piece(conn.socket, conn.buffer, *response_, body_.get(),
                                       kPieceBytes);
  }
  while (response_left_ > 0) {
    if (conn.buffer.size() > 0) {
      const std::size_t n = static_cast<std::size_t>(
          std::min<std::uint64_t>({conn.buffer.size(), kPieceBytes, response_left_}));
      std::memcpy(body_.get(), conn.buffer.data().data(), n);
      conn.buffer.consume(n);
      response_left_ -= n;
      co_return std::pair{error_code{}, n};
    }
    if (error_code ec = co_await http_io::fill_raw(conn.socket, conn.buffer)) {
      if (ec == asio::error::eof) ec = http::error::partial_message;  // short of its length
      co_return std::pair{ec, std::size_t{0}};
    }
  }
  co_return std::pair{error_code{}, std::size_t{0}};
}

ClientSession::ResponseParser& ClientSession::new_response_parser(bool head_request) {
  std::optional<ResponseParser>& rp = response_;
  rp.reset();
  response_arena_.reset();
  rp.emplace(std::piecewise_construct, std::make_tuple(),
             std::make_tuple(ArenaAllocator<char>(response_arena_)));
  rp->header_limit(kMaxHeaderBytes);
  rp->body_limit(boost::none);
  if (head_request) rp->skip(true);
  return *rp;
}

}  // namespace sluice::server::gateway
