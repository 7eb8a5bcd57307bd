// A test upstream that collapses as real ones do: C workers, each busy S (+/- jitter) per request,
// behind an unbounded FIFO queue, so past C/S requests a second its latency grows without end
// and, once every client has given up, it serves only requests nobody waits for.
//
//   collapsing_upstream --port P --workers C --service-ms S [--jitter-ms J] [--seed N]
//
// HTTP/1.1 keep-alive; every request gets "200 ok\n" after its turn in the queue, except
// GET /_control?service_ms=S&workers=C, answered at once (no queue), which changes S and C
// while it runs (either parameter alone too) and answers the settings and the queue as JSON.
// Prints "listening PORT" on stdout when it accepts connections; SIGTERM or SIGINT stop it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "query_params.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Job {
  int fd;
  std::uint64_t generation;  // the connection the answer is for (fds are reused)
  Clock::time_point queued;
};

// The queue, the workers and their settings. The I/O thread pushes jobs and takes answers back.
class Service {
 public:
  Service(int workers, double service_ms, double jitter_ms, std::uint64_t seed, int notify_fd)
      : service_us_(static_cast<std::int64_t>(service_ms * 1000)),
        jitter_us_(static_cast<std::int64_t>(jitter_ms * 1000)),
        seed_(seed),
        notify_fd_(notify_fd) {
    set_workers(workers);
  }
  ~Service() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void push(Job job) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(job);
    }
    cv_.notify_one();
  }

  std::vector<Job> take_done() {
    std::lock_guard lock(mu_);
    std::vector<Job> out;
    out.swap(done_);
    return out;
  }

  // Shrinking lets the workers above the new count finish their request, then idle.
  void set_workers(int n) {
    std::lock_guard lock(mu_);
    active_ = n;
    while (static_cast<int>(threads_.size()) < n) {
      const int index = static_cast<int>(threads_.size());
      threads_.emplace_back([this, index] { work(index); });
    }
    cv_.notify_all();
  }
  void set_service_ms(double ms) { service_us_ = static_cast<std::int64_t>(ms * 1000); }

  std::string describe() {
    std::lock_guard lock(mu_);
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "{\"workers\":%d,\"service_ms\":%.3f,\"jitter_ms\":%.3f,\"queue\":%zu,"
                  "\"served\":%llu}\n",
                  active_, static_cast<double>(service_us_.load()) / 1000,
                  static_cast<double>(jitter_us_) / 1000, queue_.size(),
                  static_cast<unsigned long long>(served_));
    return buf;
  }

 private:
  // A worker serves exactly one request per S on average while there is work: each request's
  // end is planned from the later of the previous one's planned end and its own arrival, so
  // neither sleep overshoot nor a thread's wake-up delay (a loaded machine's) lowers C / S.
  void work(int index) {
    std::mt19937_64 rng(seed_ + static_cast<std::uint64_t>(index));
    auto planned_end = Clock::now();
    for (;;) {
      Job job{};
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || (index < active_ && !queue_.empty()); });
        if (stopping_) return;
        job = queue_.front();
        queue_.pop_front();
      }
      std::int64_t us = service_us_.load();
      if (jitter_us_ > 0) {
        us += std::uniform_int_distribution<std::int64_t>(-jitter_us_, jitter_us_)(rng);
      }
      planned_end = std::max(planned_end, job.queued) +
                    std::chrono::microseconds(std::max<std::int64_t>(us, 0));
      std::this_thread::sleep_until(planned_end);
      {
        std::lock_guard lock(mu_);
        done_.push_back(job);
        ++served_;
      }
      const std::uint64_t one = 1;
      (void)!write(notify_fd_, &one, sizeof one);
    }
  }

  std::atomic<std::int64_t> service_us_;
  const std::int64_t jitter_us_;
  const std::uint64_t seed_;
  const int notify_fd_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::vector<Job> done_;
  std::vector<std::thread> threads_;
  int active_ = 0;
  bool stopping_ = false;
  std::uint64_t served_ = 0;
};

constexpr char kOk[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n";

struct Conn {
  std::uint64_t generation = 0;
  std::string in;
  std::string out;
  bool busy = false;  // a request in the queue or in service: answers keep their order
  bool close_after = false;
  bool want_write = false;
};

std::atomic<bool> g_stop{false};

class Server {
 public:
  Server(int listen_fd, Service& service, int notify_fd, int epoll_fd)
      : listen_fd_(listen_fd), service_(service), notify_fd_(notify_fd), ep_(epoll_fd) {}

  void run() {
    std::vector<epoll_event> events(256);
    while (!g_stop.load()) {
      const int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()), 200);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == listen_fd_) {
          accept_all();
        } else if (fd == notify_fd_) {
          std::uint64_t count = 0;
          (void)!read(notify_fd_, &count, sizeof count);
          for (const Job& job : service_.take_done()) answer(job);
        } else {
          if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(fd);
          if (conns_.count(fd) && (events[i].events & EPOLLOUT)) flush(fd);
        }
      }
    }
  }

 private:
  void accept_all() {
    for (;;) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
      Conn& c = conns_[fd];
      c = Conn{};
      c.generation = ++generations_;
    }
  }

  void on_readable(int fd) {
    Conn& c = conns_[fd];
    char buf[16384];
    for (;;) {
      const ssize_t r = read(fd, buf, sizeof buf);
      if (r > 0) {
        c.in.append(buf, static_cast<std::size_t>(r));
        continue;
      }
      if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        drop(fd);  // the client went away; its queued request is still served, for nobody
        return;
      }
      break;
    }
    next_request(fd);
  }

  // Takes the next whole request off the connection, unless one is still being served.
  void next_request(int fd) {
    Conn& c = conns_[fd];
    while (!c.busy && !c.close_after) {
      const auto end = c.in.find("\r\n\r\n");
      if (end == std::string::npos) {
        if (c.in.size() > 65536) drop(fd);
        return;
      }
      const std::string head = c.in.substr(0, end);
      c.in.erase(0, end + 4 + body_length(head));
      c.close_after = has_close(head);
      const auto line_end = head.find("\r\n");
      const std::string line = head.substr(0, line_end);
      const auto sp1 = line.find(' ');
      const auto sp2 = line.find(' ', sp1 + 1);
      const std::string target =
          sp1 == std::string::npos ? "" : line.substr(sp1 + 1, sp2 - sp1 - 1);
      if (target.rfind("/_control", 0) == 0) {
        control(c, target);
        flush(fd);
        if (!conns_.count(fd)) return;
        continue;
      }
      c.busy = true;
      service_.push(Job{fd, c.generation, Clock::now()});
    }
  }

  void control(Conn& c, const std::string& target) {
    const auto q = target.find('?');
    const auto params =
        sluice_test::query_params(q == std::string::npos ? "" : target.substr(q + 1));
    std::string error;
    for (const auto& [name, value] : params) {
      char* rest = nullptr;
      const double v = std::strtod(value.c_str(), &rest);
      if (value.empty() || *rest != '\0' || v < 0) {
        error = "bad value for " + name + "\n";
      } else if (name == "service_ms") {
        service_.set_service_ms(v);
      } else if (name == "workers" && v >= 1 && v <= 4096 && v == static_cast<int>(v)) {
        service_.set_workers(static_cast<int>(v));
      } else {
        error = "unknown or out-of-range parameter " + name + " (service_ms, workers 1-4096)\n";
      }
    }
    const std::string body = error.empty() ? service_.describe() : error;
    c.out += std::string(error.empty() ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.1 400 Bad Request\r\n") +
             "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
             "\r\n\r\n" + body;
  }

  void answer(const Job& job) {
    const auto it = conns_.find(job.fd);
    if (it == conns_.end() || it->second.generation != job.generation) return;
    it->second.busy = false;
    it->second.out += kOk;
    flush(job.fd);
    if (conns_.count(job.fd)) next_request(job.fd);
  }

  void flush(int fd) {
    Conn& c = conns_[fd];
    while (!c.out.empty()) {
      const ssize_t w = write(fd, c.out.data(), c.out.size());
      if (w < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        drop(fd);
        return;
      }
      c.out.erase(0, static_cast<std::size_t>(w));
    }
    if (c.out.empty() && c.close_after && !c.busy) {
      drop(fd);
      return;
    }
    const bool want = !c.out.empty();
    if (want != c.want_write) {
      c.want_write = want;
      epoll_event ev{};
      ev.events = EPOLLIN | (want ? EPOLLOUT : 0u);
      ev.data.fd = fd;
      epoll_ctl(ep_, EPOLL_CTL_MOD, fd, &ev);
    }
  }

  void drop(int fd) {
    epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    conns_.erase(fd);
  }

  static std::size_t body_length(const std::string& head) {
    const std::string value = header_value(head, "content-length");
    return value.empty() ? 0 : std::strtoul(value.c_str(), nullptr, 10);
  }
  static bool has_close(const std::string& head) {
    std::string v = header_value(head, "connection");
    for (auto& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return v.find("close") != std::string::npos || head.find("HTTP/1.0") != std::string::npos;
  }
  static std::string header_value(const std::string& head, const std::string& lower_name) {
    std::size_t pos = head.find("\r\n");
    while (pos != std::string::npos && pos < head.size()) {
      const std::size_t start = pos + 2;
      const std::size_t end = std::min(head.find("\r\n", start), head.size());
      const std::string line = head.substr(start, end - start);
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (name == lower_name) {
          const auto v = line.find_first_not_of(" \t", colon + 1);
          return v == std::string::npos ? "" : line.substr(v);
        }
      }
      pos = end == head.size() ? std::string::npos : end;
    }
    return "";
  }

  const int listen_fd_;
  Service& service_;
  const int notify_fd_;
  const int ep_;
  std::unordered_map<int, Conn> conns_;
  std::uint64_t generations_ = 0;
};

int listen_on(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 4096) != 0) {
    std::fprintf(stderr, "collapsing_upstream: cannot listen on 127.0.0.1:%d: %s\n", port,
                 std::strerror(errno));
    std::exit(1);
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"An upstream with C workers and an unbounded queue, which collapses past C/S"};
  int port = 0;
  int workers = 8;
  double service_ms = 10;
  double jitter_ms = 0;
  std::uint64_t seed = 1;
  app.add_option("--port", port, "port on 127.0.0.1 (0: any, printed)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--workers", workers, "C, requests served at once")->check(CLI::Range(1, 4096));
  app.add_option("--service-ms", service_ms, "S, each request's service time")
      ->check(CLI::Range(0.0, 60000.0));
  app.add_option("--jitter-ms", jitter_ms, "service time uniform in [S - J, S + J]")
      ->check(CLI::Range(0.0, 60000.0));
  app.add_option("--seed", seed, "the jitter's random seed");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is 0; a bad argument, named by CLI11, is 2
  }

  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop.store(true); };
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  const int listen_fd = listen_on(port);
  const int notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  for (const int fd : {listen_fd, notify_fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(listen_fd, reinterpret_cast<sockaddr*>(&bound), &len);
  std::printf("listening %d\n", ntohs(bound.sin_port));
  std::fflush(stdout);

  Service service(workers, service_ms, jitter_ms, seed, notify_fd);
  Server(listen_fd, service, notify_fd, ep).run();
  return 0;
}
