// TraceReader (sluice/replay/trace_reader.hpp): buffered line reading and field validation.
#include "sluice/replay/trace_reader.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace sluice::replay {
namespace {

// Virtual time becomes nanoseconds inside; larger times would overflow that.
constexpr std::int64_t kMaxTraceMicros = std::numeric_limits<std::int64_t>::max() / 1000;

bool blank(std::string_view s) {
  for (char c : s) {
    if (c != ' ' && c != '\t') return false;
  }
  return true;
}

}  // namespace

core::Expected<TraceRequest> parse_trace_line(std::string_view line) {
  TraceRequest r;
  const auto c1 = line.find(',');
  if (c1 == std::string_view::npos) {
    return core::make_error("expected t_us,key[,cost], found no comma");
  }
  r.t_text = line.substr(0, c1);
  if (r.t_text.empty()) return core::make_error("missing time (t_us)");
  auto t = core::parse_count(r.t_text, "time");
  if (!t) return core::make_error(t.error());
  if (*t > kMaxTraceMicros) {
    return core::make_error("time '" + std::string(r.t_text) +
                            "' is beyond the supported range (at most " +
                            std::to_string(kMaxTraceMicros) + " us, 292 years)");
  }
  r.t_us = *t;
  const std::string_view rest = line.substr(c1 + 1);
  const auto c2 = rest.find(',');
  r.key = rest.substr(0, c2);
  if (r.key.empty()) return core::make_error("empty key");
  if (c2 != std::string_view::npos) {
    r.cost_text = rest.substr(c2 + 1);
    if (r.cost_text.find(',') != std::string_view::npos) {
      return core::make_error("too many fields (expected t_us,key[,cost]; a key has no comma)");
    }
    if (r.cost_text.empty()) return core::make_error("missing cost after the second comma");
    auto cost = core::parse_count(r.cost_text, "cost");
    if (!cost) return core::make_error(cost.error());
    if (*cost == 0) return core::make_error("cost 0: a cost must be a positive integer");
    r.cost = *cost;
  }
  return r;
}

bool TraceReader::read_line(std::string_view& line) {
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    if (nl != nullptr) {
      const auto len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      line = std::string_view(start, len);
      begin_ += len + 1;
      return true;
    }
    if (eof_) {
      if (begin_ == end_) return false;
      line = std::string_view(start, end_ - begin_);  // last line without a newline
      begin_ = end_;
      return true;
    }
    // Move the partial line to the front, grow up to the line cap, read more.
    if (begin_ > 0) {
      std::memmove(buffer_.data(), start, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == buffer_.size()) {
      if (buffer_.size() > kMaxLineBytes) {
        line = std::string_view();
        return false;
      }
      // Room for the longest accepted line and its newline, no more: a full buffer without a
      // newline is then a line longer than the cap (doubling alone admitted up to 2 MiB).
      buffer_.resize(std::min(buffer_.size() * 2, kMaxLineBytes + 1));
    }
    const std::size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, in_);
    end_ += got;
    if (got == 0) eof_ = true;
  }
}

std::optional<TraceRequest> TraceReader::fail(std::string message) {
  error_ = "line " + std::to_string(line_) + ": " + message;
  return std::nullopt;
}

std::optional<TraceRequest> TraceReader::next() {
  std::string_view line;
  for (;;) {
    if (!read_line(line)) {
      if (!eof_ || begin_ != end_) {
        ++line_;
        return fail("longer than " + std::to_string(kMaxLineBytes) + " bytes");
      }
      return std::nullopt;
    }
    ++line_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (blank(line) || line.front() == '#') continue;
    break;
  }
  auto parsed = parse_trace_line(line);
  if (!parsed) return fail(parsed.error());
  TraceRequest r = *parsed;
  if (r.t_us < last_t_us_) {
    return fail("time " + std::to_string(r.t_us) + " is earlier than the previous request's " +
                std::to_string(last_t_us_) + " (times must not decrease)");
  }
  last_t_us_ = r.t_us;
  r.line = line_;
  return r;
}

}  // namespace sluice::replay
