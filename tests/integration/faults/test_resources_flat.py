"""A million proxied requests with keep-alive churn (every 20th request of the load asks
Connection: close, so about 50,000 client connections open and close): sluice's open file
descriptors and resident memory are sampled at a tenth, half and all of the run, under the same
load, and neither grows; once the load is gone the descriptors are those of the idle gateway
(listeners, the access log) as before the million, and the upstream keep-alive pool holds no
more connections than the load ever had in flight."""
import os
import time

from wrk_support import WrkRun
from gateway_conftest import gateway_config

TOTAL = 1_000_000
CONNECTIONS = 32


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def upstream_sockets(pid, port):
    """How many of the process's descriptors are TCP connections to `port`: the upstream
    keep-alive pool. Each loop keeps the connections its own peak needed, so the pool after a
    load depends on how the clients fell across loops; it is bounded by the load's
    concurrency, and everything else must come back exactly."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    count = 0
    with open("/proc/net/tcp") as f:
        for row in f.readlines()[1:]:
            cols = row.split()
            if int(cols[2].split(":")[1], 16) == port and cols[9] in inodes:
                count += 1
    return count


def others(pid, port):
    return fds(pid) - upstream_sockets(pid, port)


def rss(pid):
    """Anonymous resident memory (heap, tables, stacks): what a leak grows. File pages (the
    binary's code) come and go as the kernel reclaims them, so VmRSS would be noisy."""
    with open(f"/proc/{pid}/status") as f:
        return int(f.read().split("RssAnon:")[1].split()[0]) * 1024


def test_fds_and_memory_stay_flat_across_a_million_requests_with_churn(sluice, demo_upstream):
    up = demo_upstream()
    s = sluice(gateway_config([up.address]))
    pid = s.proc.pid
    # Warm up: pools, buffers, the access log and the allocator reach their working size.
    WrkRun(s.url + "/", seconds=2, connections=CONNECTIONS).result()
    time.sleep(0.5)
    idle_others = others(pid, up.port)
    base = s.metric("sluice_gateway_responses_total")
    started = time.monotonic()
    run = WrkRun(s.url + "/", seconds=150, connections=CONNECTIONS, close_every=20,
                 stop_after=TOTAL)
    samples = {}
    try:
        for mark in (0.1, 0.5, 1.0):
            while s.metric("sluice_gateway_responses_total") - base < mark * TOTAL:
                assert run.proc.poll() is None, run.proc.stdout.read()
                assert time.monotonic() - started < 150, f"under {mark * TOTAL:.0f} in 150 s"
                time.sleep(0.2)
            samples[mark] = (fds(pid), rss(pid), time.monotonic() - started)
    finally:
        run.stop()
    result = run.result()
    # Closed client sockets go within a few seconds.
    deadline = time.monotonic() + 5
    after_others = others(pid, up.port)
    while after_others != idle_others and time.monotonic() < deadline:
        time.sleep(0.2)
        after_others = others(pid, up.port)
    pooled = upstream_sockets(pid, up.port)
    line = ", ".join(f"{m:.0%} at {t:.1f} s: {f} fds, RssAnon {r / 2**20:.1f} MiB"
                     for m, (f, r, t) in samples.items())
    print(f"\n{result.requests} requests ({result.statuses}), {CONNECTIONS} connections, every "
          f"20th closing; {line}; idle {idle_others} fds besides the upstream pool before, "
          f"{after_others} after, {pooled} pooled upstream connections")
    assert result.requests >= TOTAL
    assert set(result.statuses) == {200}
    assert result.errors == {"connect": 0, "read": 0, "write": 0, "timeout": 0}
    (f10, r10, _), (f50, r50, _), (f100, r100, _) = samples.values()
    # Under the same load the descriptors are the same give or take connections being
    # replaced at the instant of the sample; memory does not grow with the requests served.
    assert abs(f50 - f10) <= 8 and abs(f100 - f10) <= 8, (f10, f50, f100)
    assert r100 - r10 <= 2 << 20 and r100 - r50 <= 1 << 20, (r10, r50, r100)
    # Every client connection closed; besides the pool, the descriptors of the idle gateway;
    # the pool no larger than the load's concurrency (plus a connection being replaced).
    assert s.metric("sluice_gateway_open_connections") == 0
    assert after_others == idle_others, (idle_others, after_others)
    assert pooled <= CONNECTIONS + 2, pooled
