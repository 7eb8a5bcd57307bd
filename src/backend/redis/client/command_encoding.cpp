// append_command (command_encoding.hpp): "*<n>\r\n" then "$<len>\r\n<bytes>\r\n" per argument.
#include "command_encoding.hpp"

#include <charconv>

namespace sluice::backend::redis::detail {

namespace {

void append_header(std::string& out, char kind, std::size_t n) {
  char digits[24];
  digits[0] = kind;
  auto [end, ec] = std::to_chars(digits + 1, digits + sizeof(digits) - 2, n);
  (void)ec;  // 20 digits always fit
  *end++ = '\r';
  *end++ = '\n';
  out.append(digits, static_cast<std::size_t>(end - digits));
}

void append_bulk(std::string& out, std::string_view arg) {
  append_header(out, '$', arg.size());
  out.append(arg);
  out.append("\r\n", 2);
}

}  // namespace

void append_command(std::string& out, const std::vector<std::string>& args) {
  append_header(out, '*', args.size());
  for (const auto& a : args) append_bulk(out, a);
}

void append_command(std::string& out, std::initializer_list<std::string_view> args) {
  append_header(out, '*', args.size());
  for (const auto a : args) append_bulk(out, a);
}

}  // namespace sluice::backend::redis::detail
