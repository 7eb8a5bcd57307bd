// Connection (connection.hpp).
#include "connection.hpp"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <vector>

#include "command_encoding.hpp"
#include "sluice/core/clock.hpp"

namespace sluice::backend::redis::detail {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// When deadlines are out of order the timer rescans everything; it does so at most this often,
// so a stalled server with many waiting commands costs a scan per interval, not per command.
constexpr core::Nanos kRescanInterval = core::kNanosPerMilli;

// A write buffer this big after a burst is given back rather than kept for the next one.
constexpr std::size_t kKeepWriteBuffer = 1 << 20;

asio::steady_timer::time_point to_time_point(core::Nanos t) {
  return asio::steady_timer::time_point(std::chrono::nanoseconds(t));
}

std::string millis(core::Nanos d) { return core::format_duration(d); }

}  // namespace

Connection::Connection(asio::io_context& io, Endpoint endpoint, const ConnectionOptions& options,
                       ConnectionEvents& events, std::uint64_t id)
    : io_(io),
      endpoint_(std::move(endpoint)),
      name_(format_endpoint(endpoint_)),
      options_(options),
      events_(events),
      id_(id),
      socket_(io),
      resolver_(io),
      connect_timer_(io),
      deadline_timer_(io),
      backoff_(options.reconnect_min) {}

void Connection::start() {
  if (state_ == State::kIdle) begin_connect();
}

Connection::Admit Connection::send(RequestPtr& request, bool asking) {
  switch (state_) {
    case State::kClosed:
    case State::kBackoff:
      return Admit::kDown;
    case State::kIdle:
      begin_connect();
      break;
    case State::kConnecting:
    case State::kConnected:
      break;
  }
  if (pending_.size() + (asking ? 1 : 0) >= options_.max_pending) return Admit::kOverloaded;
  if (asking) {
    append_command(out_, {"ASKING"});
    push_pending(0, nullptr);
  }
  if (request->wire.empty()) {
    append_command(out_, request->args);
  } else {
    out_ += request->wire;
  }
  const core::Nanos deadline = request->deadline;
  push_pending(deadline, std::move(request));
  if (state_ == State::kConnected) schedule_flush();
  return Admit::kQueued;
}

void Connection::close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  ++gen_;
  boost::system::error_code ignored;
  socket().close(ignored);
  resolver_.cancel();
  connect_timer_.cancel();
  out_.clear();
  fail_all(Failure::Kind::kConnection, "the Redis client was closed");
}

// ---- connecting ----

void Connection::begin_connect() {
  state_ = State::kConnecting;
  const std::uint64_t gen = ++gen_;
  auto self = shared_from_this();
  connect_timer_.expires_after(std::chrono::nanoseconds(options_.connect_timeout));
  connect_timer_.async_wait([self, gen](const boost::system::error_code& ec) {
    if (ec || gen != self->gen_) return;
    self->connect_failed("no connection within " + millis(self->options_.connect_timeout));
  });
  if (options_.tls) {
    if (!options_.tls->context) {
      // The files could not be loaded: every attempt fails with that, no connect is tried.
      asio::post(io_, [self, gen] {
        if (gen == self->gen_) self->connect_failed(self->options_.tls->error, Trouble::kTls);
      });
      return;
    }
    tls_ = std::make_shared<TlsStream>(io_, *options_.tls->context);
  }
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(endpoint_.host, ec);
  if (!ec) {
    socket().async_connect(
        tcp::endpoint(address, endpoint_.port),
        [self, gen, keep = tls_](const boost::system::error_code& e) { self->on_connect(gen, e); });
    return;
  }
  resolver_.async_resolve(
      endpoint_.host, std::to_string(endpoint_.port),
      [self, gen](const boost::system::error_code& e, const tcp::resolver::results_type& found) {
        if (gen != self->gen_) return;
        if (e) {
          self->connect_failed("cannot resolve '" + self->endpoint_.host + "': " + e.message());
          return;
        }
        asio::async_connect(
            self->socket(), found,
            [self, gen, keep = self->tls_](const boost::system::error_code& e2,
                                           const tcp::endpoint&) { self->on_connect(gen, e2); });
      });
}

void Connection::on_connect(std::uint64_t gen, const boost::system::error_code& ec) {
  if (gen != gen_) return;
  if (ec) {
    connect_failed(ec.message());
    return;
  }
  boost::system::error_code ignored;
  // Commands are small and latency is the point: never wait for Nagle.
  socket().set_option(tcp::no_delay(true), ignored);
  if (tls_) {
    start_tls(gen);
  } else {
    start_opening();
  }
}

void Connection::start_tls(std::uint64_t gen) {
  prepare_tls_stream(*tls_, *options_.tls, endpoint_.host);
  tls_->async_handshake(
      asio::ssl::stream_base::client,
      [self = shared_from_this(), gen, keep = tls_](const boost::system::error_code& ec) {
        if (gen != self->gen_) return;
        if (ec) {
          self->connect_failed("TLS handshake: " + ec.message(), Trouble::kTls);
          return;
        }
        self->start_opening();
      });
}

// The opening commands go out alone; what was submitted meanwhile waits in out_ until they are
// all answered, so no command reaches a server that has not accepted the AUTH.
void Connection::start_opening() {
  read();
  opening_left_ = options_.opening.size();
  if (opening_left_ == 0) {
    established();
    return;
  }
  std::string hello;
  for (const auto& o : options_.opening) append_command(hello, o.args);
  wbuf_.swap(hello);
  start_write();
}

bool Connection::on_opening_reply(const Reply& reply) {
  const Opening& o = options_.opening[options_.opening.size() - opening_left_];
  --opening_left_;
  const std::string command = o.args.empty() ? std::string() : o.args.front();
  if (reply.is_error()) {
    std::string why = command + " refused by Redis at " + name_ + ": " + reply.str;
    if (reply.str.starts_with("NOAUTH")) {
      why = "Redis at " + name_ + " wants AUTH (" + reply.str +
            "): give redis.password_file or password_env";
    }
    connect_failed(why, Trouble::kRefused);
    return false;
  }
  if (o.expect == Opening::Expect::kMaster) {
    const bool master = reply.type == Reply::Type::kArray && !reply.elements.empty() &&
                        reply.elements[0].str == "master";
    if (!master) {
      const std::string role = reply.type == Reply::Type::kArray && !reply.elements.empty()
                                   ? reply.elements[0].str
                                   : std::string("unreadable");
      connect_failed("Redis at " + name_ + " is not a master (ROLE: " + role + ")",
                     Trouble::kRefused);
      return false;
    }
  }
  if (opening_left_ == 0) established();
  return true;
}

void Connection::established() {
  connect_timer_.cancel();
  state_ = State::kConnected;
  trouble_ = Trouble::kNone;
  backoff_ = options_.reconnect_min;
  last_read_ = options_.clock->now();
  pending_since_ = last_read_;
  const bool again = had_trouble_;
  had_trouble_ = false;
  flush();
  if (!pending_.empty()) arm_timer(last_read_ + options_.timeout);
  events_.on_connected(*this, again);
}

void Connection::connect_failed(const std::string& why, Trouble trouble) {
  boost::system::error_code ignored;
  socket().close(ignored);
  resolver_.cancel();
  connect_timer_.cancel();
  reader_.reset();
  out_.clear();
  wbuf_.clear();
  writing_ = false;
  flush_posted_ = false;
  opening_left_ = 0;
  trouble_ = trouble;
  last_error_ = "cannot connect to Redis at " + name_ + ": " + why;
  enter_backoff();
  fail_all(Failure::Kind::kConnection, last_error_);
  events_.on_down(*this);
}

void Connection::lose(Failure::Kind kind, const std::string& why) {
  if (state_ == State::kConnecting) {
    // Lost during the opening (a TLS alert for a missing client certificate comes here).
    connect_failed(why, tls_ ? Trouble::kTls : Trouble::kNetwork);
    return;
  }
  boost::system::error_code ignored;
  socket().close(ignored);
  reader_.reset();
  out_.clear();
  wbuf_.clear();
  writing_ = false;
  flush_posted_ = false;
  trouble_ = Trouble::kNetwork;
  last_error_ = "connection to Redis at " + name_ + " lost: " + why;
  enter_backoff();
  fail_all(kind, last_error_);
  events_.on_down(*this);
}

void Connection::enter_backoff() {
  had_trouble_ = true;
  state_ = State::kBackoff;
  const std::uint64_t gen = ++gen_;
  auto self = shared_from_this();
  connect_timer_.expires_after(std::chrono::nanoseconds(backoff_));
  connect_timer_.async_wait([self, gen](const boost::system::error_code& ec) {
    if (ec || gen != self->gen_) return;
    self->begin_connect();
  });
  backoff_ = std::min(backoff_ * 2, std::max(options_.reconnect_max, options_.reconnect_min));
}

void Connection::fail_all(Failure::Kind kind, const std::string& message) {
  // Taken out first: a callback may send again (to a connection now refusing) or close.
  auto pending = std::move(pending_);
  pending_.clear();
  expired_front_ = 0;
  in_order_ = true;
  ++timer_gen_;
  timer_at_ = 0;
  deadline_timer_.cancel();
  for (auto& p : pending) {
    if (p.request) events_.on_failure(*this, std::move(p.request), Failure{kind, message});
  }
}

// ---- writing and reading ----

void Connection::schedule_flush() {
  if (flush_posted_ || writing_) return;
  flush_posted_ = true;
  // Deferred to the end of the loop turn, so every command of the turn leaves in one write.
  asio::post(io_, [self = shared_from_this(), gen = gen_] {
    if (gen != self->gen_) return;
    self->flush_posted_ = false;
    self->flush();
  });
}

void Connection::flush() {
  if (writing_ || out_.empty() || state_ != State::kConnected) return;
  if (wbuf_.capacity() > kKeepWriteBuffer) std::string().swap(wbuf_);
  wbuf_.swap(out_);
  start_write();
}

void Connection::start_write() {
  writing_ = true;
  with_stream([&](auto& stream) {
    asio::async_write(stream, asio::buffer(wbuf_),
                      [self = shared_from_this(), gen = gen_, keep = tls_](
                          const boost::system::error_code& ec, std::size_t) {
                        if (gen != self->gen_) return;
                        self->writing_ = false;
                        self->wbuf_.clear();
                        if (ec) {
                          self->lose(Failure::Kind::kConnection, "write: " + ec.message());
                          return;
                        }
                        // Whatever was submitted while this write was out goes now, together.
                        self->flush();
                      });
  });
}

void Connection::read() {
  with_stream([&](auto& stream) {
    stream.async_read_some(
        asio::buffer(rbuf_),
        [self = shared_from_this(), gen = gen_, keep = tls_](
            const boost::system::error_code& ec, std::size_t n) { self->on_read(gen, ec, n); });
  });
}

void Connection::on_read(std::uint64_t gen, const boost::system::error_code& ec, std::size_t n) {
  if (gen != gen_) return;
  if (ec) {
    const bool closed = ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
    lose(Failure::Kind::kConnection,
         closed ? std::string("closed by the server") : "read: " + ec.message());
    return;
  }
  last_read_ = options_.clock->now();
  if (!reader_.feed(rbuf_.data(), n)) {
    lose(Failure::Kind::kProtocol, "out of memory reading a reply");
    return;
  }
  Reply reply;
  while (true) {
    const bool compact = opening_left_ == 0 && !pending_.empty() && pending_.front().request &&
                         pending_.front().request->compact;
    const auto status = reader_.next(reply, compact);
    if (status == ReplyReader::Status::kNeedMore) break;
    if (status == ReplyReader::Status::kError) {
      lose(Failure::Kind::kProtocol, "bad reply: " + reader_.error());
      return;
    }
    if (opening_left_ > 0) {
      if (!on_opening_reply(reply) || gen != gen_) return;
      continue;
    }
    if (pending_.empty()) {
      if (options_.subscriber) {
        events_.on_push(*this, std::move(reply));
        if (gen != gen_) return;
        continue;
      }
      lose(Failure::Kind::kProtocol, "a reply came with no command waiting");
      return;
    }
    RequestPtr request = std::move(pending_.front().request);
    pop_pending();
    if (request) events_.on_reply(*this, std::move(request), std::move(reply));
    if (gen != gen_) return;  // lost or closed from inside the callback
  }
  read();
}

// ---- deadlines ----

void Connection::push_pending(core::Nanos deadline, RequestPtr request) {
  if (pending_.empty()) {
    pending_since_ = options_.clock->now();
    in_order_ = true;
    expired_front_ = 0;
    tail_deadline_ = 0;
  }
  if (request) {
    if (deadline < tail_deadline_) {
      in_order_ = false;
    } else {
      tail_deadline_ = deadline;
    }
    arm_timer(deadline);
  }
  pending_.push_back(Pending{deadline, std::move(request)});
}

void Connection::pop_pending() {
  pending_.pop_front();
  if (expired_front_ > 0) --expired_front_;
}

void Connection::arm_timer(core::Nanos at) {
  if (timer_at_ != 0 && timer_at_ <= at) return;
  timer_at_ = at;
  const std::uint64_t gen = ++timer_gen_;
  deadline_timer_.expires_at(to_time_point(at));
  deadline_timer_.async_wait([self = shared_from_this(), gen](const boost::system::error_code& ec) {
    if (ec || gen != self->timer_gen_) return;
    self->timer_at_ = 0;
    self->check_deadlines();
  });
}

void Connection::check_deadlines() {
  if (pending_.empty()) return;
  const core::Nanos t = options_.clock->now();
  core::Nanos next = core::kForever;
  if (state_ == State::kConnected) {
    // Silence while commands wait: the server or the path to it is gone, even if TCP says not.
    const core::Nanos dead_at = std::max(last_read_, pending_since_) + options_.timeout;
    if (t >= dead_at) {
      lose(Failure::Kind::kTimeout, "no reply for " + millis(options_.timeout));
      return;
    }
    next = dead_at;
  }
  std::vector<RequestPtr> expired;
  if (in_order_) {
    std::size_t i = expired_front_;
    for (; i < pending_.size(); ++i) {
      auto& p = pending_[i];
      if (!p.request) continue;
      if (p.deadline > t) {
        next = std::min(next, p.deadline);
        break;
      }
      expired.push_back(std::move(p.request));
    }
    expired_front_ = i;
  } else {
    core::Nanos first = core::kForever;
    for (auto& p : pending_) {
      if (!p.request) continue;
      if (p.deadline <= t) {
        expired.push_back(std::move(p.request));
      } else {
        first = std::min(first, p.deadline);
      }
    }
    if (first != core::kForever) next = std::min(next, std::max(first, t + kRescanInterval));
  }
  if (next != core::kForever) arm_timer(next);
  // The slots stay in the queue: their replies, if they ever come, are read and dropped.
  for (auto& r : expired) {
    events_.on_failure(*this, std::move(r),
                       Failure{Failure::Kind::kTimeout, "no reply from Redis at " + name_ +
                                                            " within " + millis(options_.timeout)});
  }
}

}  // namespace sluice::backend::redis::detail
