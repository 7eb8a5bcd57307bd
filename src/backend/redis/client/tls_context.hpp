// TLS to Redis: one OpenSSL context per client, made from the config's StoreTls (CA file or
// directory, else the system's store; a client certificate and key), and what each connection
// sets on its own stream (SNI, the name its certificate must carry).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <memory>
#include <string>

#include "sluice/backend/redis/endpoint.hpp"

namespace sluice::backend::redis::detail {

using TlsStream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket>;

struct TlsSetup {
  std::shared_ptr<boost::asio::ssl::context> context;  // null when `error` says why
  std::string error;  // "cannot load the CA file '...': no start line (PEM routines)"
  bool verify = true;
  std::string server_name;  // "": each connection's own host
};

// Loads the files now (the client's start, a reload); a connection reads none of them.
std::shared_ptr<const TlsSetup> make_tls_setup(const proto::resp::StoreTls& tls);

// Verification and SNI for a stream about to connect to `host`.
void prepare_tls_stream(TlsStream& stream, const TlsSetup& setup, const std::string& host);

}  // namespace sluice::backend::redis::detail
