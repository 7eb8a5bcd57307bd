// RateLimit-Policy / RateLimit / Retry-After serialisation (ratelimit_fields.hpp).
#include "sluice/proto/http/ratelimit_fields.hpp"

namespace sluice::proto::http {

std::string sf_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c >= 0x20 && c <= 0x7e) {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string ratelimit_policy(std::span<const QuotaPolicy> items) {
  std::string out;
  for (const auto& p : items) {
    if (!out.empty()) out += ", ";
    out += sf_string(p.name);
    out += ";q=" + std::to_string(p.quota);
    if (!p.unit.empty()) out += ";qu=" + sf_string(p.unit);
    if (p.window_seconds > 0) out += ";w=" + std::to_string(p.window_seconds);
  }
  return out;
}

std::string ratelimit(std::span<const QuotaStatus> items) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += ", ";
    out += sf_string(s.name);
    out += ";r=" + std::to_string(s.remaining < 0 ? 0 : s.remaining);
    if (s.reset_seconds >= 0) out += ";t=" + std::to_string(s.reset_seconds);
  }
  return out;
}

std::int64_t retry_after_seconds(core::Nanos wait) {
  const std::int64_t s = core::ceil_seconds(wait);
  return s < 1 ? 1 : s;
}

}  // namespace sluice::proto::http
