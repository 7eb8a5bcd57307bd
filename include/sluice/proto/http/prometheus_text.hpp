// Prometheus text exposition format (0.0.4) helpers: label escaping and sample lines, so every
// metrics writer (engine, gateway, admin, decision servers) emits the same syntax.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace sluice::proto::http {

// A label value with backslash, double quote and newline escaped.
std::string prometheus_label(std::string_view value);

// "# HELP name help\n# TYPE name type\n".
void prometheus_family(std::string& out, std::string_view name, std::string_view type,
                       std::string_view help);

// `name{k="v",...} value\n`.
void prometheus_sample(std::string& out, std::string_view name,
                       std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
                       std::uint64_t value);

}  // namespace sluice::proto::http
