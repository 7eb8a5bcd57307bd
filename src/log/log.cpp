// The server log facade (sluice/log/log.hpp): lines formatted here, written by one spdlog
// logger to stderr (its sink serialises writers of every thread).
#include "sluice/log/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <ctime>
#include <memory>

namespace sluice::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::atomic<int> g_format{static_cast<int>(Format::kText)};

spdlog::logger& logger() {
  static const std::shared_ptr<spdlog::logger> l = [] {
    auto made = std::make_shared<spdlog::logger>("sluice",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
    made->set_pattern("%v");  // the line is formatted here, in either format
    made->set_level(spdlog::level::trace);
    made->flush_on(spdlog::level::trace);  // tests and readiness waiters read it as it comes
    return made;
  }();
  return *l;
}

std::string iso_time(std::int64_t unix_ms) {
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];  // room for any int the fields may hold (-Wformat-truncation)
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(unix_ms % 1000));
  return buf;
}

// key=value, the value quoted (JSON string syntax) when it has a space, quote or '='.
void append_text_value(std::string& out, const std::string& v) {
  if (!v.empty() && v.find_first_of(" \"=\t\n") == std::string::npos) {
    out += v;
    return;
  }
  out += boost::json::serialize(boost::json::value(v));
}

std::string text_line(std::int64_t unix_ms, Level level, std::string_view msg,
                      std::initializer_list<Field> fields) {
  std::string out = iso_time(unix_ms);
  out += ' ';
  const std::string_view name = level_name(level);
  out += name;
  out.append(6 - name.size(), ' ');
  out += msg;
  std::string lines;
  for (const auto& f : fields) {
    if (const auto* list = std::get_if<std::vector<std::string>>(&f.value)) {
      for (const auto& item : *list) lines += "\n" + item;
      continue;
    }
    out += ' ';
    out += f.key;
    out += '=';
    if (const auto* s = std::get_if<std::string>(&f.value)) {
      append_text_value(out, *s);
    } else {
      out += std::to_string(std::get<std::int64_t>(f.value));
    }
  }
  return out + lines;
}

std::string json_line(std::int64_t unix_ms, Level level, std::string_view msg,
                      std::initializer_list<Field> fields) {
  boost::json::object o;
  o["time"] = iso_time(unix_ms);
  o["level"] = level_name(level);
  o["msg"] = msg;
  for (const auto& f : fields) {
    if (const auto* s = std::get_if<std::string>(&f.value)) {
      o[f.key] = *s;
    } else if (const auto* n = std::get_if<std::int64_t>(&f.value)) {
      o[f.key] = *n;
    } else {
      boost::json::array a;
      for (const auto& item : std::get<std::vector<std::string>>(f.value)) a.emplace_back(item);
      o[f.key] = std::move(a);
    }
  }
  return boost::json::serialize(o);
}

}  // namespace

std::optional<Level> parse_level(std::string_view name) {
  if (name == "trace") return Level::kTrace;
  if (name == "debug") return Level::kDebug;
  if (name == "info") return Level::kInfo;
  if (name == "warn") return Level::kWarn;
  if (name == "error") return Level::kError;
  return std::nullopt;
}

std::optional<Format> parse_format(std::string_view name) {
  if (name == "text") return Format::kText;
  if (name == "json") return Format::kJson;
  return std::nullopt;
}

std::string_view level_name(Level level) {
  switch (level) {
    case Level::kTrace:
      return "trace";
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

void configure(Level level, Format format) {
  g_level.store(static_cast<int>(level), std::memory_order_relaxed);
  g_format.store(static_cast<int>(format), std::memory_order_relaxed);
}

bool enabled(Level level) {
  return static_cast<int>(level) >= g_level.load(std::memory_order_relaxed);
}

std::string format_line(Format format, std::int64_t unix_ms, Level level, std::string_view msg,
                        std::initializer_list<Field> fields) {
  return format == Format::kJson ? json_line(unix_ms, level, msg, fields)
                                 : text_line(unix_ms, level, msg, fields);
}

void write(Level level, std::string_view msg, std::initializer_list<Field> fields) {
  if (!enabled(level)) return;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
  const auto format = static_cast<Format>(g_format.load(std::memory_order_relaxed));
  logger().info("{}", format_line(format, ms, level, msg, fields));
}

}  // namespace sluice::log
