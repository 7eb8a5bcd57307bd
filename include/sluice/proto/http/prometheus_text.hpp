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

// `{k="v",...}` (nothing for no labels), values escaped: the part of a sample line that tells
// one series of a family from another.
std::string prometheus_labels(
    std::initializer_list<std::pair<std::string_view, std::string_view>> labels);

// `name` + `labels` (as prometheus_labels wrote them) + ` value\n`; a whole number is written
// without a fraction.
void prometheus_line(std::string& out, std::string_view name, std::string_view labels,
                     double value);

// `name{k="v",...} value\n`.
void prometheus_sample(std::string& out, std::string_view name,
                       std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
                       std::uint64_t value);

}  // namespace sluice::proto::http
