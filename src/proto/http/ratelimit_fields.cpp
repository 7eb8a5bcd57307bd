// RateLimit-Policy / RateLimit / X-RateLimit-* / Retry-After serialisation
// (ratelimit_fields.hpp).
#include "sluice/proto/http/ratelimit_fields.hpp"

#include <fmt/format.h>

namespace sluice::proto::http {
namespace {

void append_int(std::string& out, std::int64_t v) { out += fmt::format_int(v).c_str(); }

// The inside of an sf-string: '"' and '\' escaped, bytes outside 0x20-0x7e dropped.
void append_sf_chars(std::string& out, std::string_view s) {
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c >= 0x20 && c <= 0x7e) {
      out += c;
    }
  }
}

void append_policy_item(std::string& out, std::string_view name, std::string_view suffix,
                        std::int64_t q, std::int64_t w, bool concurrent) {
  out += '"';
  append_sf_chars(out, name);
  out += suffix;
  out += "\";q=";
  append_int(out, q);
  if (concurrent) out += ";qu=\"concurrent-requests\"";
  if (w > 0) {
    out += ";w=";
    append_int(out, w);
  }
}

}  // namespace

void append_sf_string(std::string& out, std::string_view s) {
  out += '"';
  append_sf_chars(out, s);
  out += '"';
}

void append_ratelimit_fields(std::string& out, std::span<const LimitField> limits,
                             FieldChoice choice, core::Nanos retry_after) {
  if (choice.ratelimit && !limits.empty()) {
    out += "RateLimit-Policy: ";
    for (std::size_t i = 0; i < limits.size(); ++i) {
      const LimitField& l = limits[i];
      if (i > 0) out += ", ";
      append_policy_item(out, l.name, "", l.quota, l.window_seconds, l.concurrent);
      if (l.burst > 0) {
        out += ", ";
        append_policy_item(out, l.name, "-burst", l.burst, 0, false);
      }
    }
    out += "\r\nRateLimit: ";
    for (std::size_t i = 0; i < limits.size(); ++i) {
      const LimitField& l = limits[i];
      if (i > 0) out += ", ";
      append_sf_string(out, l.name);
      out += ";r=";
      append_int(out, l.remaining < 0 ? 0 : l.remaining);
      if (l.reset_seconds >= 0) {
        out += ";t=";
        append_int(out, l.reset_seconds);
      }
    }
    out += "\r\n";
  }
  if (choice.legacy && !limits.empty()) {
    const LimitField* tightest = &limits[0];
    for (const LimitField& l : limits) {
      if (l.remaining < tightest->remaining) tightest = &l;
    }
    out += "X-RateLimit-Limit: ";
    append_int(out, tightest->burst > 0 ? tightest->burst : tightest->quota);
    out += "\r\nX-RateLimit-Remaining: ";
    append_int(out, tightest->remaining < 0 ? 0 : tightest->remaining);
    out += "\r\nX-RateLimit-Reset: ";
    append_int(out, tightest->reset_seconds < 0 ? 0 : tightest->reset_seconds);
    out += "\r\n";
  }
  if (retry_after >= 0) {
    out += "Retry-After: ";
    append_int(out, retry_after_seconds(retry_after));
    out += "\r\n";
  }
}

std::int64_t retry_after_seconds(core::Nanos wait) {
  const std::int64_t s = core::ceil_seconds(wait);
  return s < 1 ? 1 : s;
}

}  // namespace sluice::proto::http
