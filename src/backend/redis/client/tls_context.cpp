// make_tls_setup, prepare_tls_stream (tls_context.hpp).
#include "tls_context.hpp"

#include <openssl/ssl.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

namespace sluice::backend::redis::detail {

namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

std::shared_ptr<const TlsSetup> make_tls_setup(const proto::resp::StoreTls& tls) {
  auto setup = std::make_shared<TlsSetup>();
  setup->verify = tls.verify;
  setup->server_name = tls.server_name;
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  boost::system::error_code ec;
  // TLS 1.2 at the least, as Redis's own default (tls-protocols "TLSv1.2 TLSv1.3").
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1,
                       ec);
  auto fail = [&](const std::string& what) {
    setup->error = what + ": " + ec.message();
    return setup;
  };
  if (tls.verify) {
    if (!tls.ca_file.empty()) {
      if (context->load_verify_file(tls.ca_file, ec)) {
        return fail("cannot load the CA file " + quoted(tls.ca_file));
      }
    }
    if (!tls.ca_dir.empty()) {
      if (context->add_verify_path(tls.ca_dir, ec)) {
        return fail("cannot use the CA directory " + quoted(tls.ca_dir));
      }
    }
    if (tls.ca_file.empty() && tls.ca_dir.empty() && context->set_default_verify_paths(ec)) {
      return fail("cannot use the system's CA store");
    }
  }
  if (!tls.cert_file.empty()) {
    if (context->use_certificate_chain_file(tls.cert_file, ec)) {
      return fail("cannot load the client certificate " + quoted(tls.cert_file));
    }
    if (context->use_private_key_file(tls.key_file, ssl::context::pem, ec)) {
      return fail("cannot load the client key " + quoted(tls.key_file));
    }
  }
  setup->context = std::move(context);
  return setup;
}

void prepare_tls_stream(TlsStream& stream, const TlsSetup& setup, const std::string& host) {
  const std::string& name = setup.server_name.empty() ? host : setup.server_name;
  boost::system::error_code ec;
  asio::ip::make_address(name, ec);
  const bool is_address = !ec;
  // SNI carries host names only (RFC 6066); an address is checked against the certificate's
  // IP entries by the verification below.
  if (!is_address) SSL_set_tlsext_host_name(stream.native_handle(), name.c_str());
  if (setup.verify) {
    stream.set_verify_mode(ssl::verify_peer, ec);
    stream.set_verify_callback(ssl::host_name_verification(name), ec);
  } else {
    stream.set_verify_mode(ssl::verify_none, ec);
  }
}

}  // namespace sluice::backend::redis::detail
