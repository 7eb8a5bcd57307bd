// An open-loop HTTP load generator (wrk2's model; Debian has no wrk2): requests go out at the
// schedule's constant rate whatever the server does, so a slow server cannot slow the offered
// load, and a request not answered within the deadline T is failed and its connection closed.
//
//   open_loop_load --url http://127.0.0.1:P/path --schedule 800:30s,1600:30s --deadline 200ms
//                  [--max-conns 4096] [--header 'X-Priority: 1']... [--out FILE]
//
// Connections are opened as needed (a request due while every connection is busy opens one, up
// to --max-conns; past that it is counted `unsent`). One CSV row per second of the schedule,
// by when the requests were due: offered, sent, ok (2xx within T: goodput), other (any other
// status within T), timeouts, errors (connection failures), unsent, p50_ms and p99_ms of the
// 2xx answers (from when each was due, so a late send counts against the server's answer
// too), and conns (open at the row's end). Latency includes connecting when a new connection
// was needed. The run stops by itself T after the schedule ends.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "http_response_reader.hpp"
#include "load_schedule.hpp"

namespace {

using sluice_test::Arrivals;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Target {
  std::string host;
  int port = 80;
  std::string path = "/";
};

Target parse_url(const std::string& url) {
  const std::string prefix = "http://";
  if (url.rfind(prefix, 0) != 0) throw std::invalid_argument("--url must start with http://");
  Target t;
  const std::string rest = url.substr(prefix.size());
  const auto slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  t.path = slash == std::string::npos ? "/" : rest.substr(slash);
  const auto colon = authority.rfind(':');
  t.host = authority.substr(0, colon);
  if (colon != std::string::npos) t.port = std::stoi(authority.substr(colon + 1));
  if (t.host != "127.0.0.1" && t.host != "localhost") {
    throw std::invalid_argument("--url: only 127.0.0.1 or localhost (a loopback load test)");
  }
  return t;
}

struct Second {
  std::int64_t offered = 0, sent = 0, ok = 0, other = 0, timeouts = 0, errors = 0, unsent = 0;
  std::vector<std::uint32_t> latencies_us;  // of 2xx answers
};

struct Request {
  std::int64_t due = 0;
  int fd = -1;
  bool done = false;
};

struct Conn {
  enum State { kConnecting, kIdle, kBusy } state = kConnecting;
  std::int64_t request = -1;  // id while busy or connecting
  std::string in;
  std::string out;
};

class Generator {
 public:
  Generator(Target target, std::vector<sluice_test::LoadStep> steps, std::int64_t deadline_ns,
            int max_conns, const std::vector<std::string>& headers, FILE* out)
      : target_(std::move(target)),
        arrivals_(std::move(steps)),
        deadline_(deadline_ns),
        max_conns_(max_conns),
        out_(out),
        ep_(epoll_create1(EPOLL_CLOEXEC)) {
    request_text_ = "GET " + target_.path + " HTTP/1.1\r\nHost: " + target_.host + ":" +
                    std::to_string(target_.port) + "\r\n";
    for (const auto& h : headers) request_text_ += h + "\r\n";
    request_text_ += "\r\n";
    addr_.sin_family = AF_INET;
    addr_.sin_port = htons(static_cast<std::uint16_t>(target_.port));
    addr_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  }

  void run() {
    std::fprintf(out_, "second,offered,sent,ok,other,timeouts,errors,unsent,p50_ms,p99_ms,conns\n");
    start_ = now_ns();
    next_due_ = arrivals_.next();
    const std::int64_t end = arrivals_.total_ns() + deadline_;
    std::vector<epoll_event> events(512);
    for (;;) {
      const std::int64_t t = now_ns() - start_;
      send_due(t);
      expire(t);
      finish_rows(t);
      if (next_due_ < 0 && requests_.empty() && t >= end) break;
      std::int64_t wake = end;
      if (next_due_ >= 0) wake = std::min(wake, next_due_);
      if (!inflight_.empty())
        wake = std::min(wake, requests_[index(inflight_.front())].due + deadline_);
      const std::int64_t wait_ns = std::max<std::int64_t>(0, wake - (now_ns() - start_));
      const int wait_ms =
          static_cast<int>(std::min<std::int64_t>((wait_ns + 999'999) / 1'000'000, 100));
      const int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()), wait_ms);
      for (int i = 0; i < n; ++i) on_event(events[i].data.fd, events[i].events);
    }
    finish_rows(kAll);
    std::int64_t ok = 0, offered = 0;
    for (const auto& [s, row] : totals_) {
      ok += row.first;
      offered += row.second;
    }
    std::fprintf(stderr, "open_loop_load: %lld offered, %lld ok within %lld ms\n",
                 static_cast<long long>(offered), static_cast<long long>(ok),
                 static_cast<long long>(deadline_ / 1'000'000));
  }

 private:
  static constexpr std::int64_t kAll = INT64_MAX;

  Second& second_of(std::int64_t due) { return seconds_[due / 1'000'000'000]; }
  std::size_t index(std::int64_t id) const { return static_cast<std::size_t>(id - base_); }

  void send_due(std::int64_t t) {
    while (next_due_ >= 0 && next_due_ <= t) {
      const std::int64_t id = base_ + static_cast<std::int64_t>(requests_.size());
      requests_.push_back(Request{next_due_, -1, false});
      Second& sec = second_of(next_due_);
      sec.offered++;
      next_due_ = arrivals_.next();
      const int fd = take_connection();
      if (fd < 0) {
        sec.unsent++;
        requests_.back().done = true;
        continue;
      }
      requests_.back().fd = fd;
      inflight_.push_back(id);
      Conn& c = conns_[fd];
      c.request = id;
      if (c.state == Conn::kIdle) {
        c.state = Conn::kBusy;
        write_request(fd);
      }
    }
    trim();
  }

  // An idle connection, else a new one (connecting: the request goes when it is up), else -1.
  int take_connection() {
    while (!idle_.empty()) {
      const int fd = idle_.back();
      idle_.pop_back();
      const auto it = conns_.find(fd);
      if (it != conns_.end() && it->second.state == Conn::kIdle) return fd;
    }
    if (static_cast<int>(conns_.size()) >= max_conns_) return -1;
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // A client that gives up resets rather than lingering in TIME_WAIT: thousands of
    // abandoned connections a second would otherwise use up the ephemeral ports.
    const linger abort_close{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_close, sizeof abort_close);
    const int r = connect(fd, reinterpret_cast<const sockaddr*>(&addr_), sizeof addr_);
    if (r != 0 && errno != EINPROGRESS) {
      close(fd);
      return -1;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.fd = fd;
    epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
    conns_[fd] = Conn{};
    return fd;
  }

  void write_request(int fd) {
    Conn& c = conns_[fd];
    Request& req = requests_[index(c.request)];
    second_of(req.due).sent++;
    c.out = request_text_;
    flush(fd);
  }

  void flush(int fd) {
    Conn& c = conns_[fd];
    while (!c.out.empty()) {
      const ssize_t w = send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EAGAIN) break;
        fail(fd, &Second::errors);
        return;
      }
      c.out.erase(0, static_cast<std::size_t>(w));
    }
    epoll_event ev{};
    ev.events = EPOLLIN | (c.out.empty() ? 0u : EPOLLOUT);
    ev.data.fd = fd;
    epoll_ctl(ep_, EPOLL_CTL_MOD, fd, &ev);
  }

  void on_event(int fd, std::uint32_t events) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    Conn& c = it->second;
    if (c.state == Conn::kConnecting) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0 || (events & (EPOLLERR | EPOLLHUP))) {
        fail(fd, &Second::errors);
        return;
      }
      if (!(events & EPOLLOUT)) return;
      c.state = Conn::kBusy;
      write_request(fd);
      return;
    }
    if ((events & EPOLLOUT) && !c.out.empty()) flush(fd);
    if (!conns_.count(fd) || !(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
    read_answers(fd);
  }

  void read_answers(int fd) {
    Conn& c = conns_[fd];
    char buf[16384];
    bool eof = false;
    for (;;) {
      const ssize_t r = recv(fd, buf, sizeof buf, 0);
      if (r > 0) {
        c.in.append(buf, static_cast<std::size_t>(r));
        continue;
      }
      eof = r == 0 || errno != EAGAIN;
      break;
    }
    if (c.state == Conn::kBusy) {
      const bool answered = answer(fd);
      if (!answered && eof)
        fail(fd, &Second::errors);
      else if (eof && conns_.count(fd))
        drop(fd);
    } else if (eof) {
      drop(fd);  // an idle connection the server closed
    }
  }

  // A whole response in the buffer: count it and free (or close) the connection.
  bool answer(int fd) {
    Conn& c = conns_[fd];
    sluice_test::ParsedResponse res;
    const int parsed = sluice_test::parse_response(c.in, res);
    if (parsed == 0) return false;
    if (parsed < 0) {
      fail(fd, &Second::errors);
      return true;
    }
    Request& req = requests_[index(c.request)];
    const std::int64_t latency = now_ns() - start_ - req.due;
    Second& sec = second_of(req.due);
    if (res.status >= 200 && res.status < 300) {
      sec.ok++;
      sec.latencies_us.push_back(
          static_cast<std::uint32_t>(std::min<std::int64_t>(latency / 1000, UINT32_MAX)));
    } else {
      sec.other++;
    }
    req.done = true;
    c.in.erase(0, res.length);
    c.request = -1;
    if (res.close) {
      drop(fd);
    } else {
      c.state = Conn::kIdle;
      idle_.push_back(fd);
    }
    return true;
  }

  // Requests past their deadline: failed, and their connections closed (the client gives up).
  void expire(std::int64_t t) {
    while (!inflight_.empty()) {
      if (inflight_.front() < base_) {  // answered and trimmed already
        inflight_.pop_front();
        continue;
      }
      Request& req = requests_[index(inflight_.front())];
      if (!req.done) {
        if (req.due + deadline_ > t) break;
        const auto it = conns_.find(req.fd);
        if (it != conns_.end() && it->second.request == inflight_.front()) {
          fail(req.fd, &Second::timeouts);
        } else {
          req.done = true;
          second_of(req.due).timeouts++;
        }
      }
      inflight_.pop_front();
    }
    trim();
  }

  void fail(int fd, std::int64_t Second::*counter) {
    const auto it = conns_.find(fd);
    if (it != conns_.end() && it->second.request >= base_) {
      Request& req = requests_[index(it->second.request)];
      if (!req.done) {
        req.done = true;
        second_of(req.due).*counter += 1;
      }
    }
    drop(fd);
  }

  void drop(int fd) {
    epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    conns_.erase(fd);
  }

  void trim() {
    while (!requests_.empty() && requests_.front().done) {
      requests_.pop_front();
      ++base_;
    }
  }

  // A second's row is final once its last request's deadline has passed.
  void finish_rows(std::int64_t t) {
    while (!seconds_.empty()) {
      const auto it = seconds_.begin();
      if (t != kAll && (it->first + 1) * 1'000'000'000 + deadline_ + 10'000'000 > t) return;
      Second& s = it->second;
      std::sort(s.latencies_us.begin(), s.latencies_us.end());
      std::fprintf(out_, "%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%.3f,%.3f,%zu\n",
                   static_cast<long long>(it->first), static_cast<long long>(s.offered),
                   static_cast<long long>(s.sent), static_cast<long long>(s.ok),
                   static_cast<long long>(s.other), static_cast<long long>(s.timeouts),
                   static_cast<long long>(s.errors), static_cast<long long>(s.unsent),
                   percentile_ms(s.latencies_us, 0.50), percentile_ms(s.latencies_us, 0.99),
                   conns_.size());
      std::fflush(out_);
      totals_[it->first] = {s.ok, s.offered};
      seconds_.erase(it);
    }
  }

  static double percentile_ms(const std::vector<std::uint32_t>& sorted, double q) {
    if (sorted.empty()) return 0;
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::max<std::size_t>(rank, 1) - 1] / 1000.0;
  }

  const Target target_;
  Arrivals arrivals_;
  const std::int64_t deadline_;
  const int max_conns_;
  FILE* const out_;
  const int ep_;
  sockaddr_in addr_{};
  std::string request_text_;
  std::int64_t start_ = 0;
  std::int64_t next_due_ = -1;
  std::deque<Request> requests_;  // ids base_, base_ + 1, ...; done ones leave from the front
  std::int64_t base_ = 0;
  std::deque<std::int64_t> inflight_;  // ids in due order, so deadlines come in order
  std::unordered_map<int, Conn> conns_;
  std::vector<int> idle_;
  std::map<std::int64_t, Second> seconds_;
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> totals_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Open-loop HTTP load: a constant arrival rate, a deadline per request"};
  std::string url, schedule, deadline = "200ms", out_path;
  int max_conns = 4096;
  std::vector<std::string> headers;
  app.add_option("--url", url, "http://127.0.0.1:PORT/path")->required();
  app.add_option("--schedule", schedule, "RATE:DURATION,... e.g. 800:30s,1600:30s")->required();
  app.add_option("--deadline", deadline, "T: a request not answered within it fails");
  app.add_option("--max-conns", max_conns, "the most connections open at once")
      ->check(CLI::Range(1, 60000));
  app.add_option("--header", headers, "a header line to add, 'Name: value' (repeatable)");
  app.add_option("--out", out_path, "the CSV file (default: stdout)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is 0; a bad argument, named by CLI11, is 2
  }

  signal(SIGPIPE, SIG_IGN);
  try {
    const auto target = parse_url(url);
    auto steps = sluice_test::parse_schedule(schedule);
    const auto deadline_ns = sluice_test::parse_duration_ns(deadline);
    if (deadline_ns <= 0) throw std::invalid_argument("--deadline must be positive");
    for (const auto& h : headers) {
      if (h.find(':') == std::string::npos || h.find_first_of("\r\n") != std::string::npos) {
        throw std::invalid_argument("--header '" + h + "' is not 'Name: value'");
      }
    }
    FILE* out = out_path.empty() ? stdout : std::fopen(out_path.c_str(), "w");
    if (out == nullptr) throw std::invalid_argument("--out: cannot write " + out_path);
    Generator(target, std::move(steps), deadline_ns, max_conns, headers, out).run();
    if (out != stdout) std::fclose(out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "open_loop_load: %s\n", e.what());
    return 2;
  }
  return 0;
}
