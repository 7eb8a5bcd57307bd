#!/usr/bin/env python3
"""Decision-service benchmark (issue 5): redis-benchmark against sluice's CL.THROTTLE, beside
redis-server 7.0 running Spring Cloud Gateway's token bucket as a Lua script via EVALSHA and
plain INCR, in one run on this machine, with the same client settings for all:
-c 50 clients, with (-P 16) and without (-P 1) pipelining, one key and random keys.

    /usr/bin/python3 bench/decision/run.py --build build/release [--no-docs]

Prints a table and writes it into docs/performance.md under "## Decision service (RESP)"
(replacing the section's previous run). Every server runs on 127.0.0.1 and is stopped at the
end; every load is a bounded number of requests.
"""
import argparse
import csv
import datetime
import io
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SECTION = "## Decision service (RESP)"

sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from plain_support import cpu_seconds, free_port  # noqa: E402 (bench/redis/run.py takes both)

# 100 per second with a burst capacity of 100 for both limiters: CL.THROTTLE's max_burst 99
# gives limit 100; the token bucket's capacity 100 at rate 100/s keeps its keys 2 s.
THROTTLE = ["CL.THROTTLE", "{key}", "99", "100", "1"]
EVALSHA = ["EVALSHA", "{sha}", "1", "{key}", "100", "100", "1"]
INCR = ["INCR", "{key}"]




def wait_port(port, proc, what, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"{what} exited early")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{what} did not listen on {port}")


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def bench(pid, port, args, requests, pipeline, random_keys, repeat):
    """The median of `repeat` redis-benchmark runs: (ops/s from its CSV, the server's CPU
    nanoseconds per request). The CPU cost is the steadier figure on a shared machine: it
    does not count the time the server waited for a core."""
    runs = []
    for _ in range(repeat):
        before = cpu_seconds(pid)
        rps = bench_once(port, args, requests, pipeline, random_keys)
        runs.append((rps, (cpu_seconds(pid) - before) * 1e9 / requests))
    mid = len(runs) // 2
    return sorted(r[0] for r in runs)[mid], sorted(r[1] for r in runs)[mid]


def bench_once(port, args, requests, pipeline, random_keys, clients=50):
    """ops/s of one redis-benchmark run (its CSV's rps column)."""
    cmd = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", str(clients),
           "-n", str(requests), "-P", str(pipeline), "--csv"]
    if random_keys:
        cmd += ["-r", "100000"]
    out = subprocess.run(cmd + args, capture_output=True, text=True, timeout=600, check=True)
    rows = list(csv.reader(io.StringIO(out.stdout)))
    return float(rows[-1][1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--no-docs", action="store_true", help="print only")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply request counts")
    ap.add_argument("--repeat", type=int, default=3, help="runs per cell; the median is kept")
    opts = ap.parse_args()
    sluice = os.path.join(opts.build, "sluice")
    if not os.access(sluice, os.X_OK):
        sys.exit(f"no sluice binary at {sluice}: build first (make build)")
    for tool in ("redis-server", "redis-benchmark", "redis-cli"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            sys.exit(f"{tool} not found: run scripts/install-deps.sh")

    procs = []
    tmp = tempfile.mkdtemp(prefix="sluice-bench-decision-")
    try:
        # One event loop: the same single thread redis-server answers with.
        config = os.path.join(tmp, "sluice.yaml")
        with open(config, "w") as f:
            f.write("workers: 1\n")
        sluice_port, admin_port, redis_port = free_port(), free_port(), free_port()
        log = open(os.path.join(tmp, "sluice.log"), "wb")
        procs.append(subprocess.Popen(
            [sluice, "serve", "--config", config, "--resp", f"127.0.0.1:{sluice_port}",
             "--admin", f"127.0.0.1:{admin_port}"],
            stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL))
        wait_port(sluice_port, procs[-1], "sluice")
        procs.append(subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", tmp],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL))
        wait_port(redis_port, procs[-1], "redis-server")
        redis_version = subprocess.run(["redis-server", "--version"], capture_output=True,
                                       text=True).stdout.split()[2].removeprefix("v=")
        with open(os.path.join(HERE, "token_bucket.lua")) as f:
            script = f.read()
        sha = subprocess.run(["redis-cli", "-p", str(redis_port), "SCRIPT", "LOAD", script],
                             capture_output=True, text=True, check=True).stdout.strip()

        sluice_pid, redis_pid = procs[0].pid, procs[1].pid
        targets = [
            ("sluice CL.THROTTLE (GCRA)", sluice_pid, sluice_port, THROTTLE, "bench",
             "user:__rand_int__"),
            ("redis EVALSHA token bucket", redis_pid, redis_port, EVALSHA, "rl:bench",
             "rl:__rand_int__"),
            ("redis INCR", redis_pid, redis_port, INCR, "counter", "counter:__rand_int__"),
            ("sluice PING", sluice_pid, sluice_port, ["PING"], None, None),
            ("redis PING", redis_pid, redis_port, ["PING"], None, None),
        ]
        results = {}
        for pipeline, requests in ((16, 2_000_000), (1, 200_000)):
            n = max(1000, int(requests * opts.scale))
            for random_keys in (False, True):
                for name, pid, port, template, one, rand in targets:
                    if template == ["PING"] and random_keys:
                        continue
                    key = rand if random_keys else one
                    args = [a.replace("{key}", key or "").replace("{sha}", sha) for a in template]
                    rps, cpu = bench(pid, port, args, n, pipeline, random_keys, opts.repeat)
                    results[(name, pipeline, random_keys)] = (rps, cpu)
                    print(f"  {name:30} -P {pipeline:2} {'random' if random_keys else 'one':6}"
                          f" key: {rps:12,.0f} ops/s {cpu:8,.0f} ns CPU/request",
                          file=sys.stderr)

        load = os.getloadavg()[0]
        date = datetime.date.today().isoformat()
        lines = [
            SECTION,
            "",
            f"Measured {date} by `make bench-decision` (bench/decision/run.py) on this machine "
            f"({os.cpu_count()} cores; 1-minute load {load:.1f} when the run ended): "
            f"redis-benchmark {redis_version} with `-c 50`, `-P 16` (2M requests) and `-P 1` "
            f"(200k requests), median of {opts.repeat} runs per cell, one key and random keys "
            "(`-r 100000`, `__rand_int__`), "
            f"against `sluice serve --resp` (one event loop, `workers: 1`) and redis-server "
            f"{redis_version} (one thread), both on 127.0.0.1, in the same run. The token bucket "
            "is Spring Cloud Gateway's RedisRateLimiter algorithm as a Lua script "
            "(bench/decision/token_bucket.lua) run with EVALSHA; both limiters allow "
            "100 per second with a burst of 100.",
            "",
        ]
        header = ["| command | one key, -P 16 | random keys, -P 16 | one key, -P 1 | "
                  "random keys, -P 1 |", "|---|---:|---:|---:|---:|"]
        for title, index in (("Throughput, ops/s (higher is better):", 0),
                             ("Server CPU time per request, ns (user + system, from "
                              "/proc/PID/stat; lower is better):", 1)):
            lines += [title, ""] + header
            for name, *_ in targets:
                cells = []
                for pipeline in (16, 1):
                    for random_keys in (False, True):
                        v = results.get((name, pipeline, random_keys))
                        cells.append(f"{v[index]:,.0f}" if v is not None else "–")
                lines.append(f"| {name} | " + " | ".join(cells) + " |")
            lines.append("")
        t = results[("sluice CL.THROTTLE (GCRA)", 16, True)]
        e = results[("redis EVALSHA token bucket", 16, True)]
        i = results[("redis INCR", 16, True)]
        lines += [
            f"Targets (issue 5, `-P 16`, random keys): CL.THROTTLE / EVALSHA token bucket = "
            f"{t[0] / e[0]:.1f}× the ops/s (target ≥ 3×), {e[1] / t[1]:.1f}× less CPU per "
            f"request; CL.THROTTLE / INCR = {t[0] / i[0]:.2f}× the ops/s (target ≥ 1×), "
            f"{i[1] / t[1]:.2f}× less CPU per request. redis-benchmark shares the machine's "
            "cores with the server it measures (and, on a shared machine, with whatever else "
            "runs), so ops/s move with the load; the CPU cost per request is the steadier "
            "comparison. Without pipelining every server is bound by the round trip.",
            "",
        ]
        table = "\n".join(lines)
        print(table)
        if not opts.no_docs:
            write_section(os.path.join(ROOT, "docs", "performance.md"), table)
    finally:
        for p in reversed(procs):
            stop(p)


def write_section(path, text):
    """Replaces the section (up to the next "## " heading) or appends it."""
    with open(path) as f:
        doc = f.read()
    pattern = re.compile(re.escape(SECTION) + r"\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(doc):
        doc = pattern.sub(lambda _: text + "\n", doc, count=1)
    else:
        doc = doc.rstrip("\n") + "\n\n" + text + "\n"
    with open(path, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
