// Proxy heads (proxy_head.hpp).
#include "proxy_head.hpp"

#include <fmt/format.h>

#include <array>
#include <boost/beast/core/string.hpp>

namespace sluice::server::gateway {

// Each hop states its own framing, hence Content-Length.
bool is_hop_by_hop(std::string_view name) {
  // By length first: most names are none of these, and fail on one compare.
  switch (name.size()) {
    case 2:
      return boost::beast::iequals(name, "TE");
    case 7:
      return boost::beast::iequals(name, "Trailer") || boost::beast::iequals(name, "Upgrade");
    case 10:
      return boost::beast::iequals(name, "Connection") || boost::beast::iequals(name, "Keep-Alive");
    case 14:
      return boost::beast::iequals(name, "Content-Length");
    case 16:
      return boost::beast::iequals(name, "Proxy-Connection");
    case 17:
      return boost::beast::iequals(name, "Transfer-Encoding");
    default:
      return false;
  }
}

// One list, the names': a known field's name is a table lookup in Beast.
bool is_hop_by_hop(http::field f) {
  return f != http::field::unknown && is_hop_by_hop(http::to_string(f));
}

namespace {

// A field's value and whether it is Connection, whether Beast holds it or a ResponseHead views
// it.
template <class Field>
std::string_view value_of(const Field& f) {
  return f.value();
}
std::string_view value_of(const proto::http::HeadField& f) { return f.value; }
template <class Field>
bool is_connection(const Field& f) {
  return f.name() == http::field::connection;
}
bool is_connection(const proto::http::HeadField& f) {
  return boost::beast::iequals(f.name, "Connection");
}

// Calls f(token) for each option of the head's Connection fields but close and keep-alive,
// spaces trimmed; stops early when f returns true (and says so).
template <class Range, class F>
bool each_connection_option(const Range& fields, F&& f) {
  for (const auto& field : fields) {
    if (!is_connection(field)) continue;
    std::string_view v = value_of(field);
    while (!v.empty()) {
      const auto comma = v.find(',');
      std::string_view t = v.substr(0, comma);
      while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
      while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
      if (!t.empty() && !boost::beast::iequals(t, "close") &&
          !boost::beast::iequals(t, "keep-alive") && f(t)) {
        return true;
      }
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  return false;
}

// The fields a head's Connection names (hop-by-hop: never forwarded, RFC 9110 7.6.1). The first
// 8 are kept for a quick look; a head that names more is walked again for each look past them,
// so none of them slips through.
template <class Range>
struct ConnectionTokens {
  const Range& fields;
  std::array<std::string_view, 8> names;
  std::size_t n = 0;
  bool overflow = false;

  // One walk over the fields (a head has few), not Beast's find(), which looks the name up by
  // its text, case-insensitively.
  explicit ConnectionTokens(const Range& f) : fields(f) {
    each_connection_option(fields, [&](std::string_view t) {
      if (n < names.size()) {
        names[n++] = t;
      } else {
        overflow = true;
      }
      return overflow;
    });
  }

  bool lists(std::string_view name) const {
    for (std::size_t i = 0; i < n; ++i) {
      if (boost::beast::iequals(names[i], name)) return true;
    }
    return overflow && each_connection_option(fields, [&](std::string_view t) {
             return boost::beast::iequals(t, name);
           });
  }
};

template <class Field>
bool is_request_id(const Field& f) {
  return f.name() == http::field::unknown && boost::beast::iequals(f.name_string(), "X-Request-Id");
}
bool is_request_id(const proto::http::HeadField& f) {
  return boost::beast::iequals(f.name, "X-Request-Id");
}

void append_field(std::string& out, std::string_view name, std::string_view value) {
  // A field read as "name: value" (Beast stores every field so; the scanner views the line as
  // the upstream sent it) goes in one copy, not three.
  const char* const colon = name.data() + name.size();
  if (value.data() == colon + 2 && colon[0] == ':' && colon[1] == ' ') {
    out.append(name.data(), name.size() + 2 + value.size());
  } else {
    out += name;
    out += ": ";
    out += value;
  }
  out += "\r\n";
}

void append_extra(std::string& out, ExtraFields extra) { out += extra; }

void append_framing(std::string& out, Framing framing, std::uint64_t length) {
  if (framing == Framing::kLength) {
    out += "Content-Length: ";
    out += fmt::format_int(length).c_str();
    out += "\r\n";
  } else if (framing == Framing::kChunked) {
    out += "Transfer-Encoding: chunked\r\n";
  }
}

void append_connection(std::string& out, bool keep_alive, unsigned client_version) {
  if (!keep_alive) {
    out += "Connection: close\r\n";
  } else if (client_version < 11) {
    out += "Connection: keep-alive\r\n";
  }
}

void append_status_line(std::string& out, int status, std::string_view reason) {
  out += "HTTP/1.1 ";
  out += fmt::format_int(status).c_str();
  out += ' ';
  if (reason.empty()) reason = http::obsolete_reason(static_cast<http::status>(status));
  out += reason;
  out += "\r\n";
}

}  // namespace

std::string forwarded_node(std::string_view peer) {
  if (peer.find(':') != std::string_view::npos) return fmt::format("for=\"[{}]\"", peer);
  return fmt::format("for={}", peer);
}

void append_upstream_request_head(std::string& out, const http::request_header<Fields>& req,
                                  const proto::http::TargetParts& target, std::string_view peer,
                                  std::string_view forwarded_for, Framing framing,
                                  std::uint64_t length, std::string_view host,
                                  std::string_view request_id) {
  const ConnectionTokens<http::request_header<Fields>> tokens(req);
  out += req.method_string();
  out += ' ';
  out += target.path;
  if (target.has_query) {
    out += '?';
    out += target.query;
  }
  out += " HTTP/1.1\r\n";
  const bool absolute_form = !target.authority.empty();
  std::string xff;
  std::string forwarded;
  bool has_host = false;
  for (const auto& f : req) {
    const http::field name = f.name();
    if (is_hop_by_hop(name) || name == http::field::expect) continue;
    if (name == http::field::unknown && boost::beast::iequals(f.name_string(), "X-Forwarded-For")) {
      if (!xff.empty()) xff += ", ";
      xff += f.value();
      continue;
    }
    if (name == http::field::forwarded) {
      if (!forwarded.empty()) forwarded += ", ";
      forwarded += f.value();
      continue;
    }
    if (tokens.n > 0 && tokens.lists(f.name_string())) continue;
    if (!request_id.empty() && is_request_id(f)) continue;
    if (name == http::field::host) {
      if (absolute_form) continue;
      has_host = true;
    }
    append_field(out, f.name_string(), f.value());
  }
  if (!has_host) append_field(out, "Host", absolute_form ? target.authority : host);
  if (!xff.empty()) xff += ", ";
  xff += peer;
  append_field(out, "X-Forwarded-For", xff);
  if (!forwarded.empty()) forwarded += ", ";
  forwarded += forwarded_for;
  append_field(out, "Forwarded", forwarded);
  if (!request_id.empty()) append_field(out, "X-Request-Id", request_id);
  append_framing(out, framing, length);
  out += "\r\n";
}

void append_relayed_response_head(std::string& out, const proto::http::ResponseHead& res,
                                  ExtraFields extra, Framing framing, std::uint64_t length,
                                  bool keep_alive, unsigned client_version, bool drop_request_id,
                                  const std::function<bool(std::string_view)>& drop) {
  const ConnectionTokens<std::span<const proto::http::HeadField>> tokens(res.fields);
  append_status_line(out, res.status, res.reason);
  for (const proto::http::HeadField& f : res.fields) {
    // A body-less response (HEAD) keeps the length the GET would have had.
    if (framing == Framing::kNone && boost::beast::iequals(f.name, "Content-Length")) {
      append_field(out, f.name, f.value);
      continue;
    }
    if (is_hop_by_hop(f.name)) continue;
    if (tokens.n > 0 && tokens.lists(f.name)) continue;
    if (drop_request_id && is_request_id(f)) continue;
    if (drop && drop(f.name)) continue;
    append_field(out, f.name, f.value);
  }
  append_extra(out, extra);
  append_framing(out, framing, length);
  append_connection(out, keep_alive && framing != Framing::kClose, client_version);
  out += "\r\n";
}

void append_local_response_head(std::string& out, int status, std::size_t body_length,
                                ExtraFields extra, bool keep_alive, unsigned client_version,
                                bool typed) {
  append_status_line(out, status, {});
  if (body_length > 0 && !typed) out += "Content-Type: text/plain; charset=utf-8\r\n";
  out += "Content-Length: ";
  out += fmt::format_int(body_length).c_str();
  out += "\r\n";
  append_extra(out, extra);
  append_connection(out, keep_alive, client_version);
  out += "\r\n";
}

bool expects_continue(const http::request_header<Fields>& req) {
  const auto it = req.find(http::field::expect);
  return it != req.end() && boost::beast::iequals(it->value(), "100-continue");
}

std::string_view reason_body(int status) {
  switch (status) {
    case 400:
      return "Bad Request\n";
    case 404:
      return "Not Found\n";
    case 408:
      return "Request Timeout\n";
    case 413:
      return "Content Too Large\n";
    case 414:
      return "URI Too Long\n";
    case 431:
      return "Request Header Fields Too Large\n";
    case 501:
      return "Not Implemented\n";
    case 502:
      return "Bad Gateway\n";
    case 504:
      return "Gateway Timeout\n";
    default:
      return "";
  }
}

}  // namespace sluice::server::gateway
