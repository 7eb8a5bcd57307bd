// The syntax of the request fields keys are read from (RFC 9110 names and lists, Forwarded of
// RFC 7239, cookies of RFC 6265, query strings): parse only, into views of the request.
#pragma once

#include <optional>
#include <string_view>

namespace sluice::proto::http {

// ASCII case-insensitive equality (field names, hosts, methods).
bool iequals(std::string_view a, std::string_view b);

// Without the optional whitespace (spaces and tabs) around it.
std::string_view trim_ows(std::string_view s);

// Calls f(item) for each non-empty item of a comma-separated list, from the right: the order
// proxies appended them in, read back from the last hop. Stops (false) when f returns false.
template <class F>
bool each_item_from_right(std::string_view list, F&& f) {
  while (!list.empty()) {
    const auto comma = list.rfind(',');
    const std::string_view item =
        trim_ows(comma == std::string_view::npos ? list : list.substr(comma + 1));
    if (!item.empty() && !f(item)) return false;
    if (comma == std::string_view::npos) break;
    list = list.substr(0, comma);
  }
  return true;
}

// The for= value of one Forwarded element ("for=192.0.2.7;proto=http"), or empty.
std::string_view forwarded_for(std::string_view element);

// The first `name=value` of a query string, the value as sent (not decoded); an empty view
// for `name` alone; nullopt when it is not there.
std::optional<std::string_view> query_param(std::string_view query, std::string_view name);

// The value of cookie `name` in one Cookie field value ("a=1; b=2").
std::optional<std::string_view> cookie_value(std::string_view cookie_field, std::string_view name);

// A Host value without its port, as sent ("[::1]:80" -> "[::1]", "a.b:80" -> "a.b").
std::string_view host_without_port(std::string_view host);

}  // namespace sluice::proto::http
