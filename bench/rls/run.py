#!/usr/bin/env python3
"""Envoy RLS benchmark (issue 16): what one ShouldRateLimit of many descriptors costs, and what
a one-descriptor call costs through the listener, for this build and, with --before, another
sluice binary in the same run.

    /usr/bin/python3 bench/rls/run.py --build build/release [--before OLD_SLUICE] [--no-redis]

Descriptors: 10k, 30k and 100k one-entry descriptors over one limit (1000 distinct values, a
fixed window of 10^9 a day), the median of 3 calls each: sluice's CPU time for the call (from
/proc, user + system, all threads) and the call's wall time; with the limits kept locally and,
unless --no-redis, in a redis-server started on a free port (each descriptor's own key there).
Calls: 3000 one-descriptor calls one after another (latency p50 / p99, as the client sees it)
and 20,000 issued at once (sluice CPU per call). Prints Markdown tables; every process runs on
127.0.0.1 and is stopped at the end.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "rls"))
from plain_support import cpu_seconds, free_port  # noqa: E402
from rls_stubs import generate, request  # noqa: E402

import grpc  # noqa: E402 (Debian's python3-grpcio)

SIZES = (10_000, 30_000, 100_000)
DOMAIN = ("domain: bench\ndescriptors:\n  - key: user\n"
          "    rate_limit: {unit: day, requests_per_unit: 1000000000}\n")
OPTIONS = [("grpc.max_receive_message_length", 64 << 20),
           ("grpc.max_send_message_length", 64 << 20)]


class Sluice:
    def __init__(self, binary, work, redis_port=None):
        self.port = free_port()
        with open(os.path.join(work, "bench.yaml"), "w") as f:
            f.write(DOMAIN)
        text = "rls:\n  files: [bench.yaml]\n  max_descriptors: 200000\n"
        if redis_port:
            text = f'redis: {{url: "redis://127.0.0.1:{redis_port}", timeout: 60s}}\n' + text
            text = text.replace("rls:\n", "rls:\n  storage: redis\n")
        config = os.path.join(work, "sluice.yaml")
        with open(config, "w") as f:
            f.write(text)
        check = subprocess.run([binary, "check-config", config], capture_output=True, text=True)
        if "max_descriptors" in check.stderr:  # a build from before the field: it has no cap
            with open(config, "w") as f:
                f.write(text.replace("  max_descriptors: 200000\n", ""))
        self.proc = subprocess.Popen([binary, "serve", "--config", config,
                                      "--grpc", f"127.0.0.1:{self.port}",
                                      "--admin", f"127.0.0.1:{free_port()}"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}", options=OPTIONS)
        grpc.channel_ready_future(self.channel).result(timeout=10)

    def stop(self):
        self.channel.close()
        self.proc.terminate()
        self.proc.wait(timeout=15)


def descriptors(pb, stub, pid, n, distinct):
    req = request(pb, [[("user", f"u{i % distinct}")] for i in range(n)], domain="bench")
    cpu, wall = [], []
    for _ in range(3):
        c, t = cpu_seconds(pid), time.monotonic()
        assert len(stub.ShouldRateLimit(req, timeout=600).statuses) == n
        wall.append(time.monotonic() - t)
        cpu.append(cpu_seconds(pid) - c)
        if wall[-1] > 5:  # one run of a call this slow says enough
            break
    return statistics.median(cpu), statistics.median(wall)


def calls(pb, stub, pid):
    req = request(pb, [[("user", "one")]], domain="bench")
    for _ in range(300):
        stub.ShouldRateLimit(req, timeout=10)
    lat = []
    for _ in range(3000):
        t = time.perf_counter()
        stub.ShouldRateLimit(req, timeout=10)
        lat.append(time.perf_counter() - t)
    lat.sort()
    c = cpu_seconds(pid)
    futures = [stub.ShouldRateLimit.future(req, timeout=60) for _ in range(20_000)]
    for f in futures:
        f.result()
    return lat[len(lat) // 2], lat[len(lat) * 99 // 100], (cpu_seconds(pid) - c) / 20_000


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--before", help="another sluice binary, measured beside this build's")
    ap.add_argument("--no-redis", action="store_true")
    args = ap.parse_args()
    builds = [("this build", os.path.join(args.build, "sluice"))]
    if args.before:
        builds.insert(0, ("before", args.before))
    work = tempfile.mkdtemp(prefix="sluice-bench-rls-")
    pb = generate(work)
    redis = None
    stores = [("local", None)]
    if not args.no_redis and shutil.which("redis-server"):
        rport = free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(rport), "--save", "",
                                  "--appendonly", "no"], stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        stores.append(("redis", rport))
    rows, call_rows = [], []
    try:
        for store, rport in stores:
            for label, binary in builds:
                if redis:
                    subprocess.run(["redis-cli", "-p", str(stores[-1][1]), "flushall"],
                                   stdout=subprocess.DEVNULL)
                s = Sluice(binary, work, rport)
                stub = pb.rls_grpc.RateLimitServiceStub(s.channel)
                try:
                    distinct = 1000 if store == "local" else 10**9  # Redis: a key each
                    for n in SIZES:
                        if label == "before" and store == "redis" and n > 30_000:
                            continue  # quadratic there too: minutes, past the Redis timeout
                        cpu, wall = descriptors(pb, stub, s.proc.pid, n, distinct)
                        rows.append((store, label, n, cpu, wall))
                        print(f"{store} {label} {n}: cpu {cpu:.3f} s, wall {wall:.3f} s",
                              flush=True)
                    if store == "local":
                        call_rows.append((label,) + calls(pb, stub, s.proc.pid))
                finally:
                    s.stop()
    finally:
        if redis:
            redis.terminate()
            redis.wait()
        shutil.rmtree(work, ignore_errors=True)
    print("\n| storage | build | descriptors | sluice CPU for the call | wall time of the call "
          "| CPU vs 10k |")
    print("|---|---|---:|---:|---:|---:|")
    for store, label, n, cpu, wall in rows:
        base = next(c for s, l, m, c, _ in rows if s == store and l == label and m == SIZES[0])
        print(f"| {store} | {label} | {n:,} | {cpu * 1000:.0f} ms | {wall * 1000:.0f} ms | "
              f"{cpu / max(base, 0.005):.1f}x |")
    print("\n| build | one-descriptor call p50 / p99 (one at a time) "
          "| sluice CPU per call (20,000 at once) |")
    print("|---|---:|---:|")
    for label, p50, p99, cpu in call_rows:
        print(f"| {label} | {p50 * 1e6:.0f} / {p99 * 1e6:.0f} µs | {cpu * 1e6:.1f} µs |")


if __name__ == "__main__":
    main()
