// Request field syntax (field_values.hpp).
#include "sluice/proto/http/field_values.hpp"

#include <algorithm>

namespace sluice::proto::http {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string_view forwarded_for(std::string_view element) {
  while (!element.empty()) {
    const auto semi = element.find(';');
    const std::string_view pair = trim_ows(element.substr(0, semi));
    if (pair.size() > 4 && iequals(pair.substr(0, 4), "for=")) return pair.substr(4);
    if (semi == std::string_view::npos) break;
    element.remove_prefix(semi + 1);
  }
  return {};
}

std::optional<std::string_view> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto item = query.substr(0, amp);
    const auto eq = item.find('=');
    if (item.substr(0, eq) == name) {
      return eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

std::optional<std::string_view> cookie_value(std::string_view v, std::string_view name) {
  while (!v.empty()) {
    const auto semi = v.find(';');
    const auto item = trim_ows(v.substr(0, semi));
    const auto eq = item.find('=');
    if (eq != std::string_view::npos && item.substr(0, eq) == name) return item.substr(eq + 1);
    if (semi == std::string_view::npos) break;
    v.remove_prefix(semi + 1);
  }
  return std::nullopt;
}

std::string_view host_without_port(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const auto close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  const auto colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

}  // namespace sluice::proto::http
