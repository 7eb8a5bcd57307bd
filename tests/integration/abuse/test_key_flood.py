"""A flood of a million distinct keys through HTTP: the rule's table stays within its memory
budget (it evicts the keys not used recently, and never grows), sluice's resident memory grows
by that budget plus a small fixed overhead, and a real client who comes back often keeps its
state and stays limited at its rate throughout."""
import os
import re
import signal
import subprocess
import threading
import time

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
FLOOD_KEYS = 1_000_000
BUDGET = 4 << 20  # memory: 4MiB
OVERHEAD = 3 << 20  # allowed besides the table: buffers of the flood's connections, allocator
RATE, BURST = 10, 5  # the rule, per key
CLIENT_RATE = 30  # what the real client asks for, per second

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
memory: 4MiB
routes:
  - name: flood
    match:
      path_prefix: /
    respond:
      status: 200
      body: "ok\\n"
    rules: [per-key]
rules:
  per-key:
    limit: "leaky-bucket:rate=10/s,burst=5,nodelay=1"
    key: "header:X-Key"
"""


def rss(pid):
    """Anonymous resident memory (heap, tables, stacks): what a leak grows. File pages (the
    binary's code) come and go as the kernel reclaims them, so VmRSS would be noisy."""
    with open(f"/proc/{pid}/status") as f:
        return int(f.read().split("RssAnon:")[1].split()[0]) * 1024


class RealClient(threading.Thread):
    """One key, CLIENT_RATE requests per second; records (instant, status) of each."""

    def __init__(self, url):
        super().__init__(daemon=True)
        self.url, self.records, self.stopping = url, [], threading.Event()

    def run(self):
        with requests.Session() as session:
            next_at = time.monotonic()
            while not self.stopping.is_set():
                r = session.get(self.url, headers={"X-Key": "real-client"}, timeout=5)
                self.records.append((time.monotonic(), r.status_code))
                next_at += 1.0 / CLIENT_RATE
                time.sleep(max(0.0, next_at - time.monotonic()))


def test_a_million_key_flood_stays_in_budget_and_a_real_client_stays_limited(sluice):
    s = sluice(CONFIG)
    pid = s.proc.pid
    start_rss = rss(pid)  # the table is mapped, not yet touched
    for i in range(100):  # warm up: code paged in, first buffers allocated
        requests.get(s.url + "/", headers={"X-Key": f"warm-{i}"}, timeout=5)
    before = rss(pid)
    served = s.metric("sluice_gateway_responses_total")

    client = RealClient(s.url + "/")
    client.start()
    time.sleep(1.0)
    started = time.monotonic()
    wrk = subprocess.Popen(["wrk", "-t1", "-c16", "-d120s", "-s", os.path.join(HERE, "flood.lua"),
                            s.url + "/", "--", str(FLOOD_KEYS)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = before
    try:
        # flood.lua stops at FLOOD_KEYS responses; wrk itself waits out -d, so stop it then.
        while s.metric("sluice_gateway_responses_total") - served < FLOOD_KEYS:
            assert wrk.poll() is None, wrk.stdout.read()
            assert time.monotonic() - started < 120, "the flood did not finish in 120 s"
            peak = max(peak, rss(pid))
            time.sleep(0.5)
        flood_s = time.monotonic() - started
        wrk.send_signal(signal.SIGINT)
        report = wrk.communicate(timeout=10)[0]
    finally:
        wrk.kill()
    time.sleep(1.0)
    client.stopping.set()
    client.join()
    peak = max(peak, rss(pid))

    keys = s.metric("sluice_limit_keys", rule="per-key")
    capacity = s.metric("sluice_limit_capacity", rule="per-key")
    evictions = s.metric("sluice_limit_evictions_total", rule="per-key")
    print(f"\n{FLOOD_KEYS} flood keys in {flood_s:.1f} s ({FLOOD_KEYS / flood_s:.0f} req/s); "
          f"RssAnon {start_rss / 2**20:.1f} MiB at start, {before / 2**20:.1f} MiB after 100 keys, "
          f"{peak / 2**20:.1f} MiB at most: +{(peak - start_rss) / 2**20:.2f} MiB for a "
          f"{BUDGET >> 20} MiB budget; table {keys:.0f} of {capacity:.0f} slots, "
          f"{evictions:.0f} evictions")
    sent = re.search(r"(\d+) requests in", report)
    assert sent and int(sent.group(1)) >= FLOOD_KEYS, report
    assert peak - start_rss <= BUDGET + OVERHEAD
    assert keys <= capacity and evictions >= FLOOD_KEYS - capacity

    # The real client: admitted at the rule's rate in every 3-second window of the flood, as
    # if no flood were there (an evicted key would start afresh and be admitted a burst more).
    recs = [r for r in client.records if started <= r[0] <= started + flood_s]
    assert {status for _, status in recs} <= {200, 429}
    windows = []
    t = started
    while t + 3 <= started + flood_s:
        window = [status for at, status in recs if t <= at < t + 3]
        windows.append((len(window), window.count(200)))
        t += 3
    print("real client per 3 s window (asked, admitted): " + ", ".join(map(str, windows)))
    assert windows
    for asked, admitted in windows:
        assert asked >= 0.5 * CLIENT_RATE * 3, "the real client could not ask at its rate"
        assert 0.7 * RATE * 3 <= admitted <= RATE * 3 + BURST + 1, windows
