// RateLimit-Policy / RateLimit / X-RateLimit-* / Retry-After serialisation
// (ratelimit_fields.hpp).
#include "sluice/proto/http/ratelimit_fields.hpp"

#include <fmt/format.h>

#include <algorithm>

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

void append_policy_item(std::string& out, std::string_view name, std::int64_t q, std::int64_t w,
                        bool concurrent) {
  out += '"';
  append_sf_chars(out, name);
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

namespace {

// The fields through a writer: begin(name), then the value appended to value(), then end().
// One writing serves a response head (HeadWriter) and a list of pairs (PairWriter).
template <class Writer>
void write_fields(Writer& w, std::span<const LimitField> limits, FieldChoice choice,
                  core::Nanos retry_after) {
  if (choice.ratelimit && !limits.empty()) {
    std::string& policy = w.begin("RateLimit-Policy");
    for (std::size_t i = 0; i < limits.size(); ++i) {
      const LimitField& l = limits[i];
      if (i > 0) policy += ", ";
      append_policy_item(policy, l.name, l.quota, l.window_seconds, l.concurrent);
    }
    w.end();
    if (std::any_of(limits.begin(), limits.end(), [](const LimitField& l) { return l.known; })) {
      std::string& status = w.begin("RateLimit");
      const bool draft12 = choice.draft == RateLimitDraft::k12;
      bool first = true;
      for (const LimitField& l : limits) {
        if (!l.known) continue;  // what is left is unknown: no status item
        if (!first) status += ", ";
        first = false;
        append_sf_string(status, l.name);
        status += draft12 ? ";a=" : ";r=";
        append_int(status, l.remaining < 0 ? 0 : l.remaining);
        if (l.reset_seconds >= 0) {
          status += draft12 ? ";w=" : ";t=";
          append_int(status, l.reset_seconds);
        }
      }
      w.end();
    }
  }
  const LimitField* tightest = nullptr;
  for (const LimitField& l : limits) {
    if (l.known && (tightest == nullptr || l.remaining < tightest->remaining)) tightest = &l;
  }
  if (choice.legacy && tightest != nullptr) {
    append_int(w.begin("X-RateLimit-Limit"), tightest->quota);
    w.end();
    append_int(w.begin("X-RateLimit-Remaining"), tightest->remaining < 0 ? 0 : tightest->remaining);
    w.end();
    append_int(w.begin("X-RateLimit-Reset"),
               tightest->reset_seconds < 0 ? 0 : tightest->reset_seconds);
    w.end();
  }
  if (retry_after >= 0) {
    append_int(w.begin("Retry-After"), retry_after_seconds(retry_after));
    w.end();
  }
}

// "Name: value\r\n" straight into a response head.
struct HeadWriter {
  std::string& head;
  std::string& begin(std::string_view name) {
    head += name;
    head += ": ";
    return head;
  }
  void end() { head += "\r\n"; }
};

struct PairWriter {
  FieldPairs& pairs;
  std::string& begin(std::string_view name) {
    return pairs.emplace_back(name, std::string()).second;
  }
  void end() {}
};

}  // namespace

void append_ratelimit_fields(std::string& out, std::span<const LimitField> limits,
                             FieldChoice choice, core::Nanos retry_after) {
  HeadWriter w{out};
  write_fields(w, limits, choice, retry_after);
}

FieldPairs ratelimit_field_pairs(std::span<const LimitField> limits, FieldChoice choice,
                                 core::Nanos retry_after) {
  FieldPairs pairs;
  PairWriter w{pairs};
  write_fields(w, limits, choice, retry_after);
  return pairs;
}

std::int64_t retry_after_seconds(core::Nanos wait) {
  const std::int64_t s = core::ceil_seconds(wait);
  return s < 1 ? 1 : s;
}

}  // namespace sluice::proto::http
