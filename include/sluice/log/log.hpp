// The server log of `sluice serve`: one facade over spdlog that every layer writes through.
// Text lines for people, JSON lines (one object per line) for collectors; one level filter.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sluice::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError };
enum class Format { kText, kJson };

// A key and its value. A list prints, in text, as lines after the message (so that a
// `FILE:LINE: problem` still starts its own line); in JSON it is an array.
struct Field {
  Field(std::string_view k, std::string v) : key(k), value(std::move(v)) {}
  Field(std::string_view k, const char* v) : key(k), value(std::string(v)) {}
  Field(std::string_view k, std::int64_t v) : key(k), value(v) {}
  Field(std::string_view k, std::vector<std::string> v) : key(k), value(std::move(v)) {}
  std::string_view key;
  std::variant<std::string, std::int64_t, std::vector<std::string>> value;
};

// "trace", "debug", "info", "warn", "error"; nullopt for anything else.
std::optional<Level> parse_level(std::string_view name);
// "text", "json"; nullopt for anything else.
std::optional<Format> parse_format(std::string_view name);
std::string_view level_name(Level level);

// Until configured: info and above, text, to stderr.
void configure(Level level, Format format);
bool enabled(Level level);

void write(Level level, std::string_view msg, std::initializer_list<Field> fields = {});
inline void trace(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kTrace, m, f);
}
inline void debug(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kDebug, m, f);
}
inline void info(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kInfo, m, f);
}
inline void warn(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kWarn, m, f);
}
inline void error(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kError, m, f);
}

// One line as configure(format) writes it, at a given time in ms since the epoch (for tests).
std::string format_line(Format format, std::int64_t unix_ms, Level level, std::string_view msg,
                        std::initializer_list<Field> fields);

}  // namespace sluice::log
