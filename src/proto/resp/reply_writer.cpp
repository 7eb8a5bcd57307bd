// ReplyWriter (reply_writer.hpp): the out-of-line part, error replies.
#include "sluice/proto/resp/reply_writer.hpp"

namespace sluice::proto::resp {

void ReplyWriter::error(std::string_view message) {
  out_ += '-';
  const std::size_t at = out_.size();
  out_ += message;
  for (std::size_t i = at; i < out_.size(); ++i) {
    if (out_[i] == '\r' || out_[i] == '\n') out_[i] = ' ';
  }
  out_ += "\r\n";
}

}  // namespace sluice::proto::resp
