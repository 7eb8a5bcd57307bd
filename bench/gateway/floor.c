#define _GNU_SOURCE
/* The floor of the refused scenario (bench/gateway/run.sh): an epoll server that answers every
 * request head with the same fixed 429, parsing nothing but the blank line that ends a head.
 * What it costs per request is the kernel's share (accept, read, write, epoll) and almost no
 * user space: no limiter, no HTTP parser, no formatting. It is not a gateway; it is the line
 * the others are measured against (issue 20: "≈1.1× the floor").
 * Build: cc -O2 -o floor floor.c; run: floor PORT. One thread, level-triggered, one read per
 * event (what is left re-triggers), every answer to a read in one write. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* Sluice's refusal in the same scenario, byte for byte (195 bytes, RateLimit fields included). */
static const char kAnswer[] =
    "HTTP/1.1 429 Too Many Requests\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 18\r\n"
    "RateLimit-Policy: \"per-ip\";q=10;w=1\r\n"
    "RateLimit: \"per-ip\";a=0;w=1\r\n"
    "Retry-After: 1\r\n"
    "\r\n"
    "Too Many Requests\n";

enum { kMaxConns = 65536, kBuf = 16384 };
static unsigned char matched[kMaxConns]; /* bytes of "\r\n\r\n" matched at the end of the last read */

static int heads_in(int fd, const char* p, ssize_t n) {
  static const char kEnd[] = "\r\n\r\n";
  int heads = 0;
  unsigned m = matched[fd];
  for (ssize_t i = 0; i < n; ++i) {
    if (p[i] == kEnd[m]) {
      if (++m == 4) {
        ++heads;
        m = 0;
      }
    } else {
      m = p[i] == '\r' ? 1 : 0;
    }
  }
  matched[fd] = (unsigned char)m;
  return heads;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: floor PORT\n");
    return 2;
  }
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[1])),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(ls, (struct sockaddr*)&a, sizeof a) != 0 || listen(ls, 511) != 0) {
    perror("floor: bind/listen");
    return 1;
  }
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
  epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
  static char buf[kBuf], out[kBuf * 4];
  struct epoll_event events[512];
  for (;;) {
    int n = epoll_wait(ep, events, 512, -1);
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == ls) {
        int c;
        while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
          if (c >= kMaxConns) {
            close(c);
            continue;
          }
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          matched[c] = 0;
          struct epoll_event cev = {.events = EPOLLIN, .data.fd = c};
          epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
        }
        continue;
      }
      ssize_t got = read(fd, buf, sizeof buf);
      if (got <= 0) {
        if (got < 0 && errno == EAGAIN) continue;
        close(fd);
        continue;
      }
      int heads = heads_in(fd, buf, got);
      size_t len = 0;
      for (int h = 0; h < heads && len + sizeof kAnswer <= sizeof out; ++h) {
        memcpy(out + len, kAnswer, sizeof kAnswer - 1);
        len += sizeof kAnswer - 1;
      }
      if (len > 0 && write(fd, out, len) != (ssize_t)len) close(fd);
    }
  }
}
