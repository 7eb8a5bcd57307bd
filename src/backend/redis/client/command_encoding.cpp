// append_command (command_encoding.hpp): "*<n>\r\n" then "$<len>\r\n<bytes>\r\n" per argument.
#include "command_encoding.hpp"

#include <charconv>
#include <cstring>

namespace sluice::backend::redis::detail {

namespace {

// "<kind><n>\r\n" at `at`; returns its end. 24 bytes are enough.
char* put_header(char* at, char kind, std::size_t n) {
  *at++ = kind;
  at = std::to_chars(at, at + 21, n).ptr;  // 20 digits always fit
  *at++ = '\r';
  *at++ = '\n';
  return at;
}

// Arguments up to this long are composed on the stack and appended at once: a batch is mostly
// short numbers, and one append per argument instead of three is most of its encoding time.
constexpr std::size_t kShortArg = 64;

}  // namespace

void append_header(std::string& out, char kind, std::size_t n) {
  char buf[24];
  out.append(buf, static_cast<std::size_t>(put_header(buf, kind, n) - buf));
}

char* put_bulk(char* at, std::string_view arg) {
  at = put_header(at, '$', arg.size());
  if (!arg.empty()) std::memcpy(at, arg.data(), arg.size());
  at += arg.size();
  *at++ = '\r';
  *at++ = '\n';
  return at;
}

char* put_bulk_integer(char* at, std::int64_t v) {
  // "$N\r\n" has room for a length of two digits; written after the number, whose length it is.
  char* number = at + 5;
  char* end = std::to_chars(number, number + 21, v).ptr;  // 20 digits and a sign fit
  const auto len = static_cast<std::size_t>(end - number);
  char* head = at;
  *head++ = '$';
  if (len >= 10) *head++ = static_cast<char>('0' + len / 10);
  *head++ = static_cast<char>('0' + len % 10);
  *head++ = '\r';
  *head++ = '\n';
  if (head != number) std::memmove(head, number, len);
  head += len;
  *head++ = '\r';
  *head++ = '\n';
  return head;
}

void append_bulk(std::string& out, std::string_view arg) {
  if (arg.size() > kShortArg) {
    append_header(out, '$', arg.size());
    out.append(arg);
    out.append("\r\n", 2);
    return;
  }
  char buf[24 + kShortArg + 2];
  out.append(buf, static_cast<std::size_t>(put_bulk(buf, arg) - buf));
}

void append_bulk_integer(std::string& out, std::int64_t v) {
  char buf[kMaxBulkInteger];
  out.append(buf, static_cast<std::size_t>(put_bulk_integer(buf, v) - buf));
}

std::vector<std::string> read_bulks(std::string_view wire) {
  std::vector<std::string> out;
  while (!wire.empty()) {
    std::size_t len = 0;
    const auto [end, ec] = std::from_chars(wire.data() + 1, wire.data() + wire.size(), len);
    (void)ec;  // written by append_bulk: "$<len>\r\n<bytes>\r\n"
    const auto at = static_cast<std::size_t>(end - wire.data()) + 2;
    out.emplace_back(wire.substr(at, len));
    wire.remove_prefix(at + len + 2);
  }
  return out;
}

void append_command(std::string& out, const std::vector<std::string>& args) {
  append_header(out, '*', args.size());
  for (const auto& a : args) append_bulk(out, a);
}

void append_command(std::string& out, std::initializer_list<std::string_view> args) {
  append_header(out, '*', args.size());
  for (const auto a : args) append_bulk(out, a);
}

}  // namespace sluice::backend::redis::detail
