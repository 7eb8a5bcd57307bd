#!/usr/bin/env python3
"""What one admin rule change costs as the rule set grows: `PUT /v1/rules/{name}` (a new rule,
validated, applied, written back to the file with fsync) against a `sluice serve` whose config
holds N rules, for each N, median and p90 of the wall time of the PUT.

    bench/admin/rule_change.py [--sluice BIN] [--baseline BIN] [--rules 10,1000,10000] [--puts 30]

With --baseline, the older binary is measured in the same run, each N in turn.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                "integration"))
from plain_support import free_port  # noqa: E402


def config(n, gateway, admin):
    lines = [f"listen: 127.0.0.1:{gateway}", f"admin: 127.0.0.1:{admin}", "memory: 64KiB",
             "routes:", "  - name: all", "    match: {path_prefix: /}",
             "    respond: {status: 200, body: ok}", "    rules: [r0]", "rules:"]
    lines += [f"  r{i}: {{limit: 'token-bucket:rate=10/s,burst=20', key: client_ip}}"
              for i in range(n)]
    return "\n".join(lines) + "\n"


def put(admin, name):
    body = b'{"limit": "gcra:rate=5/s,burst=3", "key": "client_ip"}'
    req = urllib.request.Request(f"http://127.0.0.1:{admin}/v1/rules/{name}", data=body,
                                 method="PUT", headers={"Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.status in (200, 201), r.status
    return time.perf_counter() - start


def measure(binary, n, puts):
    gateway, admin = free_port(), free_port()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sluice.yaml")
        with open(path, "w") as f:
            f.write(config(n, gateway, admin))
        proc = subprocess.Popen([binary, "serve", "--config", path], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{admin}/healthz", timeout=1)
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise RuntimeError(f"{binary} did not start with {n} rules")
                    time.sleep(0.05)
            put(admin, "warm")  # the first change also makes every rule's text
            times = sorted(put(admin, f"new{i}") for i in range(puts))
        finally:
            proc.terminate()
            proc.wait()
    return statistics.median(times), times[int(len(times) * 0.9)]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sluice", default=os.path.join(here, "..", "..", "build", "release", "sluice"))
    p.add_argument("--baseline")
    p.add_argument("--rules", default="10,1000,10000")
    p.add_argument("--puts", type=int, default=30)
    a = p.parse_args()
    binaries = [("sluice", a.sluice)] + ([("baseline", a.baseline)] if a.baseline else [])
    print(f"{'rules':>7} {'binary':>9} {'median ms':>10} {'p90 ms':>8}")
    for n in (int(x) for x in a.rules.split(",")):
        for name, binary in binaries:
            median, p90 = measure(binary, n, a.puts)
            print(f"{n:>7} {name:>9} {median * 1000:>10.1f} {p90 * 1000:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
