#!/usr/bin/env python3
"""Instructions per request of one `sluice serve` under callgrind, on one route of the Redis
benchmark's config (bench/redis/run.py): deterministic where wall-clock figures on a shared
machine are not, so it is the before/after measure of a change to the Redis path.

    /usr/bin/python3 bench/redis/instructions.py --sluice build/release/sluice --route exact \\
        [--connections 50] [--duration 5]

One redis-server and one sluice (workers: 1, redis.timeout 2s: callgrind slows the gateway
about 50 times) on free 127.0.0.1 ports. After a few warm-up requests the counters are zeroed
(callgrind_control -z), wrk loads the route, the counters are dumped (-d): the dump's total over
the requests wrk completed is the figure. Redis calls per request are cmdstat_evalsha's. The
callgrind file is kept (its path is printed) for callgrind_annotate.
"""
import argparse
import glob
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("redis_bench", os.path.join(HERE, "run.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
decision = bench.decision


def total_instructions(path):
    out = subprocess.run(["callgrind_annotate", path], capture_output=True, text=True).stdout
    m = re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", out)
    return int(m.group(1).replace(",", "")) if m else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sluice", required=True, help="the sluice binary")
    ap.add_argument("--route", default="exact", help="none, local, exact or leased")
    ap.add_argument("--connections", type=int, default=50, help="wrk -c (default 50)")
    ap.add_argument("--duration", type=int, default=5, help="seconds of wrk (default 5)")
    opts = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="sluice-bench-instructions-")
    procs = []
    try:
        redis_port = decision.free_port()
        procs.append(subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", tmp],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL))
        decision.wait_port(redis_port, procs[-1], "redis-server")
        gateway_port, admin_port = decision.free_port(), decision.free_port()
        config = os.path.join(tmp, "sluice.yaml")
        with open(config, "w") as f:
            f.write(bench.CONFIG.replace("timeout: 50ms", "timeout: 2s").format(
                gateway=gateway_port, admin=admin_port, redis=redis_port, limit=bench.LIMIT,
                lease=100))
        out = os.path.join(tmp, f"{opts.route}.c{opts.connections}.callgrind")
        procs.append(subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", opts.sluice, "serve",
             "--config", config],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "sluice.log"), "wb"),
            stdin=subprocess.DEVNULL))
        sluice = procs[-1]
        decision.wait_port(gateway_port, sluice, "sluice under callgrind", timeout=60)
        url = f"http://127.0.0.1:{gateway_port}/{opts.route}"
        for _ in range(5):
            urllib.request.urlopen(url, timeout=10).read()
        subprocess.run(["callgrind_control", "-z", str(sluice.pid)], capture_output=True,
                       check=True)
        calls = bench.evalsha_calls(redis_port)
        done, rps, _, _, bad, errors = bench.wrk(url, opts.duration, opts.connections)
        subprocess.run(["callgrind_control", "-d", str(sluice.pid)], capture_output=True,
                       check=True)
        calls = bench.evalsha_calls(redis_port) - calls
        if bad or errors:
            sys.exit(f"{bad} non-2xx responses, socket errors {errors!r}")
        time.sleep(1)
        dumps = sorted(glob.glob(out + ".*"))
        if not dumps:
            sys.exit("callgrind wrote no dump")
        total = total_instructions(dumps[-1])
        print(f"{opts.sluice} /{opts.route} wrk -c{opts.connections}: {done} requests, "
              f"{calls / done:.4f} EVALSHA per request, {total / done:,.0f} instructions per "
              f"request ({dumps[-1]})")
    finally:
        for p in reversed(procs):
            decision.stop(p)


if __name__ == "__main__":
    main()
