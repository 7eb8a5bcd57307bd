// The admin listener's access checks (admin_access.hpp).
#include "admin_access.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <boost/algorithm/string/predicate.hpp>
#include <cstdlib>
#include <stdexcept>

#include "sluice/core/utf8.hpp"
#include "sluice/proto/http/request_target.hpp"

namespace sluice::server {
namespace {

namespace ip = boost::asio::ip;

constexpr std::size_t kMinToken = 16;  // below this a token can be guessed
constexpr std::size_t kMaxToken = 1024;
constexpr std::size_t kMaxTokenFile = 4096;

std::array<unsigned char, 32> sha256(std::string_view text) {
  std::array<unsigned char, 32> out{};
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), out.data(), &size, EVP_sha256(), nullptr) != 1 ||
      size != out.size()) {
    throw std::runtime_error("SHA-256 of the admin token failed (OpenSSL EVP_Digest)");
  }
  return out;
}

// RFC 6750's b64token: what a client can put after "Bearer " unquoted.
std::optional<std::string> token_problem(std::string_view token) {
  if (token.size() < kMinToken || token.size() > kMaxToken) {
    return "the token has " + std::to_string(token.size()) + " characters; give it " +
           std::to_string(kMinToken) + " to " + std::to_string(kMaxToken) +
           " (e.g. the output of `openssl rand -hex 32`)";
  }
  const auto body_end = token.find_last_not_of('=');
  for (std::size_t i = 0; i <= body_end && body_end != std::string_view::npos; ++i) {
    const char c = token[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("-._~+/").find(c) != std::string_view::npos;
    if (!ok) {
      return "the token holds '" + core::printable(token.substr(i, 1)) + "'" +
             "; a bearer token is letters, digits and -._~+/ (then '=' padding)";
    }
  }
  return std::nullopt;
}

std::string_view trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

ip::address plain(const ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) return ip::make_address_v4(ip::v4_mapped, a.to_v6());
  return a;
}

}  // namespace

bool ListenerInfo::loopback() const { return plain(bound).is_loopback(); }

core::Expected<AdminAccess> resolve_access(const config::RuleSet& rules,
                                           const std::string& file_name) {
  AdminAccess out;
  out.hosts = rules.admin_hosts;
  out.check_on_admin = rules.check_on_admin;
  const config::AdminAuth& a = rules.admin_auth;
  const char* field = a.token_file.empty() ? "token_env" : "token_file";
  auto fail = [&](const std::string& problem) {
    return core::make_error(config::ConfigError{
        file_name, a.line, "field 'admin_auth." + std::string(field) + "': " + problem}
                                .format());
  };
  std::string token;
  if (!a.token_file.empty()) {
    // The config's reader: bounded, and a FIFO never blocks the config thread.
    auto text = config::read_config_file(a.token_file, kMaxTokenFile, "a token file");
    if (!text) return fail("'" + core::printable(a.token_file) + "' " + text.error());
    token = *text;
  } else if (!a.token_env.empty()) {
    const char* value = std::getenv(a.token_env.c_str());
    if (value == nullptr) return fail("the environment variable " + a.token_env + " is not set");
    token = value;
  } else {
    return out;
  }
  const std::string_view t = trimmed(token);  // a file written by `echo` ends in a newline
  if (auto problem = token_problem(t)) return fail(*problem);
  out.has_token = true;
  out.token_digest = sha256(t);
  return out;
}

std::optional<std::string> exposure_problem(const ListenerInfo& admin, const AdminAccess& access,
                                            bool insecure) {
  if (access.has_token || insecure || admin.loopback()) return std::nullopt;
  const std::string where =
      admin.bound.is_v6() ? "[" + admin.bound.to_string() + "]" : admin.bound.to_string();
  return "admin listener " + where + ":" + std::to_string(admin.port) +
         " is not on loopback and has no token, so anyone who can reach it could change the "
         "rules; give it one (admin_auth: {token_file: PATH} or {token_env: NAME}), or allow it "
         "without on a network you control (admin_auth: {insecure: true}, or serve "
         "--admin-insecure)";
}

bool host_allowed(std::string_view host, const ListenerInfo& listener,
                  const std::vector<std::string>& hosts) {
  std::string scratch;
  std::string_view name;
  if (!proto::http::routing_host(host, scratch, name) || name.empty()) return false;
  if (std::find(hosts.begin(), hosts.end(), name) != hosts.end()) return true;
  std::string_view literal = name;
  if (literal.size() > 2 && literal.front() == '[' && literal.back() == ']') {
    literal = literal.substr(1, literal.size() - 2);
  }
  boost::system::error_code ec;
  const ip::address address = ip::make_address(std::string(literal), ec);
  if (!ec) {
    // An address cannot be rebound: it reached this listener, so it names it, whichever of the
    // machine's addresses it is when the listener takes them all.
    return listener.bound.is_unspecified() || plain(address) == plain(listener.bound);
  }
  if (!listener.configured_host.empty() &&
      boost::algorithm::iequals(name, listener.configured_host)) {
    return true;
  }
  return listener.loopback() && (name == "localhost" || name.ends_with(".localhost"));
}

bool bearer_matches(std::string_view authorization, const AdminAccess& access) {
  if (!access.has_token) return false;
  const std::string_view value = trimmed(authorization);
  const auto space = value.find(' ');
  if (space == std::string_view::npos ||
      !boost::algorithm::iequals(value.substr(0, space), "bearer")) {
    return false;
  }
  const auto digest = sha256(trimmed(value.substr(space + 1)));
  return CRYPTO_memcmp(digest.data(), access.token_digest.data(), digest.size()) == 0;
}

AccessKeeper::AccessKeeper(std::optional<ListenerInfo> admin, bool insecure_flag,
                           std::string file_name)
    : admin_(std::move(admin)), insecure_flag_(insecure_flag), file_name_(std::move(file_name)) {}

core::Expected<AdminAccess> AccessKeeper::access_of(const config::RuleSet& rules) const {
  auto access = resolve_access(rules, file_name_);
  if (!access || !admin_) return access;
  if (auto problem =
          exposure_problem(*admin_, *access, insecure_flag_ || rules.admin_auth.insecure)) {
    return core::make_error(
        config::ConfigError{file_name_, rules.admin_auth.line, *problem}.format());
  }
  return access;
}

// The store calls both under its lock: check() for a rule set, then applied() if it went in.
control::Guard AccessKeeper::guard() {
  auto self = shared_from_this();
  return control::Guard{
      [self](const config::RuleSet& rules) -> std::vector<std::string> {
        auto access = self->access_of(rules);
        if (!access) return {access.error()};
        self->checked_ = std::move(*access);
        return {};
      },
      [self](const config::RuleSet&) {
        if (self->checked_) {
          self->access_.exchange(std::make_shared<const AdminAccess>(std::move(*self->checked_)));
        }
        self->checked_.reset();
      }};
}

}  // namespace sluice::server
