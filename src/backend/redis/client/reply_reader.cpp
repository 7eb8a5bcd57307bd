// ReplyReader (reply_reader.hpp). hiredis calls the object functions below as it completes each
// element; a nested element is built in place inside its parent's `elements`, so only the root
// is allocated, and it is the only object hiredis ever asks us to free.
#include "reply_reader.hpp"

#include <hiredis/read.h>

#include <new>

namespace sluice::backend::redis::detail {

namespace {

// Where hiredis 0.14 keeps at most this much unused buffer between bursts.
constexpr std::size_t kMaxIdleBuffer = 64 * 1024;

Reply* place(const redisReadTask* task) {
  if (task->parent == nullptr) return new (std::nothrow) Reply();
  auto* parent = static_cast<Reply*>(task->parent->obj);
  return &parent->elements[static_cast<std::size_t>(task->idx)];
}

void* create_string(const redisReadTask* task, char* str, std::size_t len) {
  Reply* r = place(task);
  if (r == nullptr) return nullptr;
  switch (task->type) {
    case REDIS_REPLY_ERROR:
      r->type = Reply::Type::kError;
      break;
    case REDIS_REPLY_STATUS:
      r->type = Reply::Type::kStatus;
      break;
    default:
      r->type = Reply::Type::kString;
      break;
  }
  r->str.assign(str, len);
  return r;
}

void* create_array(const redisReadTask* task, int elements) {
  Reply* r = place(task);
  if (r == nullptr) return nullptr;
  r->type = Reply::Type::kArray;
  // Sized once, before any child exists: children point into this vector.
  r->elements.resize(elements > 0 ? static_cast<std::size_t>(elements) : 0);
  return r;
}

void* create_integer(const redisReadTask* task, long long value) {
  Reply* r = place(task);
  if (r == nullptr) return nullptr;
  r->type = Reply::Type::kInteger;
  r->integer = value;
  return r;
}

void* create_nil(const redisReadTask* task) {
  Reply* r = place(task);
  if (r == nullptr) return nullptr;
  r->type = Reply::Type::kNil;
  return r;
}

void free_object(void* obj) { delete static_cast<Reply*>(obj); }

redisReplyObjectFunctions g_functions = {create_string, create_array, create_integer, create_nil,
                                         free_object};

}  // namespace

ReplyReader::ReplyReader() { reset(); }

ReplyReader::~ReplyReader() {
  if (reader_ != nullptr) redisReaderFree(reader_);
}

void ReplyReader::reset() {
  if (reader_ != nullptr) redisReaderFree(reader_);
  reader_ = redisReaderCreateWithFunctions(&g_functions);
  if (reader_ != nullptr) reader_->maxbuf = kMaxIdleBuffer;
}

bool ReplyReader::feed(const char* data, std::size_t size) {
  return reader_ != nullptr && redisReaderFeed(reader_, data, size) == REDIS_OK;
}

ReplyReader::Status ReplyReader::next(Reply& out) {
  if (reader_ == nullptr) return Status::kError;
  void* obj = nullptr;
  if (redisReaderGetReply(reader_, &obj) != REDIS_OK) return Status::kError;
  if (obj == nullptr) return Status::kNeedMore;
  auto* r = static_cast<Reply*>(obj);
  out = std::move(*r);
  delete r;
  return Status::kReply;
}

std::string ReplyReader::error() const {
  if (reader_ == nullptr) return "out of memory";
  return reader_->errstr[0] != '\0' ? std::string(reader_->errstr) : "protocol error";
}

}  // namespace sluice::backend::redis::detail
