#!/usr/bin/env python3
"""Turns one benchmark run (Sluice's Google Benchmark JSON, the x/time/rate `go test -bench`
output, GuavaBench's lines) into the markdown table of scripts/run-bench.sh: each Sluice
benchmark's median ns/op beside the median of the peer that does the same job, in the same run.

Times are wall-clock ns per operation. For the two-thread cases that is wall time over the
operations of both threads (inverse throughput), as Google Benchmark's real time and Go's
RunParallel ns/op both report it: two threads that really run in parallel halve it. Whether they
did is shown beside each two-thread Sluice row as "CPUs busy" (CPU time ÷ wall time, 2.0 = both
threads ran throughout): a shared VM does not always run both at once, and contention needs both.
"""
import argparse
import json
import re
import statistics
import sys

# Sluice benchmark -> (peer key, what the row measures). Peers: x/time/rate does the same job
# with an explicit t (AllowN) or with its clock (Allow); Guava's tryAcquire always reads its
# clock, so it stands beside the with_steady_clock rows only.
PEER_OF = {
    "local/token_bucket/pass": "xtime/AllowNPass",
    "local/token_bucket/deny": "xtime/AllowNDeny",
    "local/gcra/pass": "xtime/AllowNPass",
    "local/gcra/deny": "xtime/AllowNDeny",
    "shared/gcra_uncontended/threads:1": "xtime/AllowNPass",
    "shared/gcra_uncontended/threads:2": "xtime/ParallelAllowNUncontended",
    "shared/gcra_contended/threads:1": "xtime/AllowNPass",
    "shared/gcra_contended/threads:2": "xtime/ParallelAllowNContended",
    "shared/gcra_deny": "xtime/AllowNDeny",
    "clock/steady_read": "java/System.nanoTime",
    "with_steady_clock/token_bucket_pass": "xtime/AllowPass",
    "with_steady_clock/smooth_bursty_pass": "guava/tryAcquire_pass",
    "with_steady_clock/shared_gcra_pass": "guava/tryAcquire_pass",
}

PEER_LABEL = {
    "xtime/AllowNPass": "x/time/rate `AllowN(t,1)` pass",
    "xtime/AllowNDeny": "x/time/rate `AllowN(t,1)` deny",
    "xtime/AllowPass": "x/time/rate `Allow()` pass (reads clock)",
    "xtime/AllowDeny": "x/time/rate `Allow()` deny (reads clock)",
    "xtime/TimeNow": "Go `time.Now()`",
    "xtime/ParallelAllowNUncontended": "x/time/rate `AllowN`, 2 goroutines, own limiters",
    "xtime/ParallelAllowNContended": "x/time/rate `AllowN`, 2 goroutines, one limiter",
    "guava/tryAcquire_pass": "Guava `tryAcquire()` pass (reads clock)",
    "guava/tryAcquire_deny": "Guava `tryAcquire()` deny (reads clock)",
    "java/System.nanoTime": "Java `System.nanoTime()`",
}

GO_LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op")


def sluice_medians(path):
    with open(path) as f:
        data = json.load(f)
    rows, busy = {}, {}
    # Random interleaving mixes the order; registration order is (family, instance).
    order = lambda b: (b.get("family_index", 0), b.get("per_family_instance_index", 0))
    for b in sorted(data["benchmarks"], key=order):
        if b.get("aggregate_name", "median") != "median" and b.get("run_type") == "aggregate":
            continue
        name = b.get("run_name", b["name"]).replace("/real_time", "")
        if b.get("error_occurred"):
            rows[name] = None
            continue
        scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        rows[name] = b["real_time"] * scale
        if b.get("threads", 1) > 1 and b["real_time"] > 0:
            busy[name] = b["cpu_time"] / b["real_time"]
    return rows, busy


def go_medians(paths):
    runs = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                m = GO_LINE.match(line)
                if not m:
                    continue
                runs.setdefault("xtime/" + m.group(1), []).append(float(m.group(2)))
    return {k: statistics.median(v) for k, v in runs.items()}


def guava_medians(path):
    rows = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and not line.startswith("#"):
                rows[parts[0]] = float(parts[1])
    return rows


def fmt(ns):
    if ns is None:
        return "error"
    return f"{ns:.1f}" if ns >= 1 else f"{ns:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--go", nargs="+", default=[])
    ap.add_argument("--guava")
    args = ap.parse_args()

    sluice, busy = sluice_medians(args.sluice)
    peers = go_medians(args.go)
    if args.guava:
        peers.update(guava_medians(args.guava))

    out = ["| benchmark | median ns/op | peer (same run) | peer ns/op | peer ÷ Sluice |",
           "|---|---:|---|---:|---:|"]
    for name, ns in sluice.items():
        key = PEER_OF.get(name)
        label = f"`{name}`" + (f" ({busy[name]:.1f} CPUs busy)" if name in busy else "")
        peer_ns = peers.get(key) if key else None
        if key and peer_ns is not None and ns:
            out.append(f"| {label} | {fmt(ns)} | {PEER_LABEL[key]} | {fmt(peer_ns)} | "
                       f"{peer_ns / ns:.2f}× |")
        else:
            out.append(f"| {label} | {fmt(ns)} | — | | |")
    for key, label in PEER_LABEL.items():
        if key in peers:
            out.append(f"| peer: {label} | {fmt(peers[key])} | | | |")
    missing = [k for k in set(PEER_OF.values()) if k not in peers]
    if missing:
        print("report: no result for peer(s) " + ", ".join(sorted(missing)), file=sys.stderr)
    print("\n".join(out))


if __name__ == "__main__":
    main()
