#!/usr/bin/env python3
"""The behaviour check of bench/gateway/run.sh: a burst of requests on one keep-alive
connection, answered as fast as the gateway answers. Prints one line, the statuses in order
with `c` after a response that closed the connection (the next request opens another), e.g.
`200 200 200 200 200 200 429 429 429 429`.

    probe.py PORT [COUNT]
"""
import http.client
import sys


def main():
    port, count = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 10
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    out = []
    for _ in range(count):
        conn.request("GET", "/")
        response = conn.getresponse()
        response.read()
        closed = response.will_close
        out.append(f"{response.status}{'c' if closed else ''}")
        if closed:
            conn.close()
    print(" ".join(out))


if __name__ == "__main__":
    main()
