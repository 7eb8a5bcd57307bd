// Reads HTTP/1.1 responses off a byte stream for the load generator: the status, whether the
// server will close, and where the response ends (Content-Length or chunked; no body for
// 1xx, 204, 304). Enough for the peers it talks to; not a general client.
#pragma once

#include <cstdlib>
#include <string>

namespace sluice_test {

struct ParsedResponse {
  int status = 0;
  bool close = false;
  std::size_t length = 0;  // bytes of the buffer the whole response takes
};

// 1: a whole response at the front of `buf` (filled in `out`); 0: not yet; -1: not HTTP.
inline int parse_response(const std::string& buf, ParsedResponse& out) {
  const auto head_end = buf.find("\r\n\r\n");
  if (head_end == std::string::npos) return buf.size() > 65536 ? -1 : 0;
  if (buf.compare(0, 5, "HTTP/") != 0 || buf.size() < 12) return -1;
  out = ParsedResponse{};
  out.status = std::atoi(buf.c_str() + 9);
  if (out.status < 100 || out.status > 999) return -1;
  long content_length = -1;
  bool chunked = false;
  std::size_t pos = buf.find("\r\n") + 2;
  while (pos < head_end) {
    std::size_t end = buf.find("\r\n", pos);
    std::string line = buf.substr(pos, end - pos);
    for (auto& ch : line) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (line.rfind("content-length:", 0) == 0) content_length = std::atol(line.c_str() + 15);
    if (line.rfind("transfer-encoding:", 0) == 0 && line.find("chunked") != std::string::npos) {
      chunked = true;
    }
    if (line.rfind("connection:", 0) == 0 && line.find("close") != std::string::npos) {
      out.close = true;
    }
    pos = end + 2;
  }
  std::size_t body_start = head_end + 4;
  const bool no_body = out.status < 200 || out.status == 204 || out.status == 304;
  if (no_body) {
    out.length = body_start;
  } else if (chunked) {
    std::size_t p = body_start;
    for (;;) {
      const auto line_end = buf.find("\r\n", p);
      if (line_end == std::string::npos) return 0;
      const long size = std::strtol(buf.c_str() + p, nullptr, 16);
      if (size < 0) return -1;
      p = line_end + 2;
      if (size == 0) {
        const auto trailer_end = buf.find("\r\n", p);
        if (trailer_end == std::string::npos) return 0;
        out.length = trailer_end + 2;
        break;
      }
      if (buf.size() < p + static_cast<std::size_t>(size) + 2) return 0;
      p += static_cast<std::size_t>(size) + 2;
    }
  } else if (content_length >= 0) {
    if (buf.size() < body_start + static_cast<std::size_t>(content_length)) return 0;
    out.length = body_start + static_cast<std::size_t>(content_length);
  } else {
    out.close = true;  // a body until the server closes: not sent by the peers measured here
    out.length = buf.size();
  }
  return 1;
}

}  // namespace sluice_test
