"""A concurrency limit shared through Redis (APISIX limit-conn with a Redis policy;
docs/distributed.md#concurrency-limits-shared-through-redis): two gateways share 3 places in
front of one upstream. A permit lives in Redis under the rule's permit_ttl (1 s here) and the
gateway that holds it renews it while its request runs, so a request three times longer than
the TTL keeps its place, and a gateway killed with SIGKILL mid-request gives its places back
within one TTL. The upstream counts the requests it is serving whose client is still
connected: that count never goes over 3."""
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import requests

from conftest import free_port

PLACES = 3
TTL_S = 1.0

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis: {{url: "{redis}", timeout: 200ms}}
upstreams:
  app: {{servers: ["127.0.0.1:UPSTREAM"]}}
routes:
  - name: app
    match: {{path_prefix: /}}
    upstream: app
    rules: [places]
rules:
  places:
    limit: concurrency:limit=3
    key: const:all
    storage: redis
    on_failure: fail-closed
    permit_ttl: 1s
"""


class Counting(ThreadingHTTPServer):
    """GET /hold?ms=N answers after N ms, or as soon as its client goes; `live` is the number
    of requests being served whose client is still connected, `most` the highest it reached."""
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", free_port()), Hold)
        self.lock = threading.Lock()
        self.live = self.most = 0

    def enter(self):
        with self.lock:
            self.live += 1
            self.most = max(self.most, self.live)

    def leave(self):
        with self.lock:
            self.live -= 1


class Hold(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def client_gone(self):
        readable, _, _ = select.select([self.connection], [], [], 0.02)
        if not readable:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def do_GET(self):
        ms = int(parse_qs(urlparse(self.path).query).get("ms", ["0"])[0])
        self.server.enter()
        try:
            until = time.monotonic() + ms / 1000
            while time.monotonic() < until:
                if self.client_gone():
                    self.close_connection = True
                    return
        finally:
            self.server.leave()
        self.send_response(200)
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"ok\n")


def start_upstream():
    up = Counting()
    threading.Thread(target=up.serve_forever, daemon=True).start()
    return up


def hold(gateway, ms, results):
    """`PLACES` requests of `ms` each through `gateway`, in threads; their statuses go to
    `results`."""
    def one():
        try:
            results.append(requests.get(gateway.url + f"/hold?ms={ms}", timeout=30).status_code)
        except requests.RequestException:
            results.append(0)
    threads = [threading.Thread(target=one, daemon=True) for _ in range(PLACES)]
    for t in threads:
        t.start()
    return threads


def wait_live(up, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    while up.live != n:
        assert time.monotonic() < deadline, f"upstream serves {up.live}, not {n}"
        time.sleep(0.01)


def probe(gateway):
    return requests.get(gateway.url + "/hold?ms=0", timeout=5).status_code


def test_a_request_three_times_longer_than_the_permit_ttl_keeps_its_place(redis_server,
                                                                          gateways):
    rs, up = redis_server(), start_upstream()
    a, b = gateways(CONFIG.replace("UPSTREAM", str(up.server_port)), rs.url, n=2)
    results = []
    threads = hold(a, 3000, results)  # 3 s: three TTLs
    wait_live(up, PLACES)
    # For the whole 3 s the 3 places are taken: the other gateway is refused every time, also
    # after the first TTL, when a permit that was not renewed would have expired.
    refused = []
    start = time.monotonic()
    while time.monotonic() - start < 2.6:
        refused.append(probe(b))
        time.sleep(0.1)
    for t in threads:
        t.join()
    assert results == [200] * PLACES
    assert set(refused) == {429} and len(refused) >= 15, refused
    assert up.most == PLACES
    # Done: the places are free again, for either gateway.
    assert probe(b) == 200 and probe(a) == 200
    # Each held permit was renewed (every third of the TTL: about 9 renewals over 3 s each).
    assert a.metric("sluice_redis_permit_renewals_total") >= PLACES * 6
    assert a.metric("sluice_redis_permit_renewals_lost_total") == 0
    assert a.metric("sluice_redis_held_permits") == 0


def test_a_gateway_killed_mid_request_gives_its_places_back_within_the_ttl(redis_server,
                                                                            gateways):
    rs, up = redis_server(), start_upstream()
    a, b = gateways(CONFIG.replace("UPSTREAM", str(up.server_port)), rs.url, n=2)
    results = []
    hold(a, 20000, results)
    wait_live(up, PLACES)
    time.sleep(TTL_S)  # a renewal or more has happened
    assert a.metric("sluice_redis_held_permits") == PLACES
    a.proc.kill()  # SIGKILL: no release is ever sent
    killed = time.monotonic()
    wait_live(up, 0)  # its upstream connections closed with it
    codes = []
    while True:
        code = probe(b)
        codes.append((round(time.monotonic() - killed, 2), code))
        if code == 200:
            break
        assert code == 429, codes
        assert time.monotonic() - killed < TTL_S + 1.0, codes
        time.sleep(0.05)
    # Refused at first (the dead gateway's permits are still in Redis), free within one TTL
    # of the kill (the last renewal was at most a third of a TTL before it).
    assert codes[0][1] == 429, codes
    assert codes[-1][0] <= TTL_S + 0.5, codes
    assert up.most == PLACES
    # All three places are B's now, and never a fourth.
    results_b = []
    threads = hold(b, 500, results_b)
    wait_live(up, PLACES)
    assert probe(b) == 429
    for t in threads:
        t.join()
    assert results_b == [200] * PLACES and up.most == PLACES
