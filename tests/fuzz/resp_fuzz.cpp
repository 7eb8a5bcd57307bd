// Fuzz target: the RESP request parser (src/proto/resp/request_parser.cpp), fed a client's
// bytes in reads of any size, as a connection delivers them.
//
// Input: byte 0 picks the limits (the defaults, or small caps that bytes can reach) and the
// read size; the rest is what the client sends. Besides not crashing, the parser must give the
// same commands however the bytes are cut, never an empty command, never an argument over its
// cap, and stay failed after an error.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "sluice/proto/resp/request_parser.hpp"

namespace {

using sluice::proto::resp::ParserLimits;
using sluice::proto::resp::ParseStatus;
using sluice::proto::resp::RequestParser;

struct Outcome {
  std::vector<std::vector<std::string>> commands;
  bool failed = false;
};

Outcome parse_in_reads(const ParserLimits& limits, std::string_view bytes, std::size_t read) {
  RequestParser parser(limits);
  Outcome out;
  std::size_t fed = 0;
  while (fed < bytes.size() && !out.failed) {
    const std::size_t n = std::min(read, bytes.size() - fed);
    parser.feed(bytes.substr(fed, n));
    fed += n;
    SLUICE_FUZZ_CHECK(parser.buffered() <= fed, "the parser holds more than it was sent");
    for (;;) {
      const ParseStatus s = parser.next();
      if (s == ParseStatus::kPending) break;
      if (s == ParseStatus::kError) {
        SLUICE_FUZZ_CHECK(parser.error().rfind("Protocol error: ", 0) == 0,
                          "an error is named as Redis names it");
        SLUICE_FUZZ_CHECK(parser.next() == ParseStatus::kError, "an error is final");
        out.failed = true;
        break;
      }
      const auto args = parser.args();
      SLUICE_FUZZ_CHECK(!args.empty(), "empty commands are skipped");
      std::size_t total = 0;
      std::vector<std::string> command;
      for (const std::string_view a : args) {
        SLUICE_FUZZ_CHECK(a.size() <= std::max(limits.max_bulk, limits.max_inline),
                          "an argument over its cap");
        total += a.size();
        command.emplace_back(a);
      }
      SLUICE_FUZZ_CHECK(total <= std::max(limits.max_command_bytes, limits.max_inline),
                        "a command over its byte cap");
      SLUICE_FUZZ_CHECK(args.size() <= limits.max_elements, "a command over its argument cap");
      out.commands.push_back(std::move(command));
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  ParserLimits limits;
  if ((data[0] & 1) != 0) {
    limits.max_bulk = 64;
    limits.max_elements = 8;
    limits.max_command_bytes = 256;
    limits.max_inline = 128;
  }
  const std::size_t read = 1 + (data[0] >> 1);  // 1 to 128 bytes a read
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome whole = parse_in_reads(limits, bytes, bytes.size() + 1);
  const Outcome pieces = parse_in_reads(limits, bytes, read);
  SLUICE_FUZZ_CHECK(whole.commands == pieces.commands, "the commands depend on how TCP cuts them");
  SLUICE_FUZZ_CHECK(whole.failed == pieces.failed, "an error depends on how TCP cuts the bytes");
  return 0;
}
