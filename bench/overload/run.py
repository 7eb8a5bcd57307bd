#!/usr/bin/env python3
"""`make bench-overload`: goodput of an upstream that collapses (tests/support/
collapsing_upstream: C workers, S ms each, an unbounded queue) under open-loop load at 0.5x, 1x,
2x and 3x its capacity C / S, with a client deadline T, for each target in one run:

  direct   the upstream with no limiter
  nginx    nginx 1.22, limit_conn at C, refusing with 503
  haproxy  HAProxy 2.6, maxconn C on the server, timeout queue (T / 2 by default), then 503
  sluice   sluice serve, a static concurrency:limit=C rule keyed by const, refusing with 503
  sluice-adaptive  sluice serve with adaptive_concurrency (envoy-gradient, its defaults) on the
           route and no capacity configured, refusing with 503; `sluice-adaptive:ALGORITHM`
           (aimd, vegas, gradient2, envoy-gradient) the same with another algorithm

Each target gets a fresh upstream. Goodput is 2xx answered within T per second, averaged over
each step's seconds after its first; p99 is the median of those seconds' p99 of 2xx answers.
The targets run in turn, `--rounds` times (interleaved: round 1 of each, then round 2...), and
each figure is the median over the rounds.

Then the upstream changes under load, at 2x its capacity for `--change-seconds`: its service
time doubles (it slows) or half its workers go (it shrinks) `--change-at` seconds in. Goodput
before the change is a fraction of the old capacity; goodput from 5 s after the change on, of
the new one (the issue: back to 90% within 5 s).

The raw per-second CSVs are left in --out.

    bench/overload/run.py --build build/release [--workers 16] [--service-ms 10]
        [--jitter-ms 2] [--step-seconds 30] [--rounds 3] [--change-seconds 20] [--change-at 5]
        [--deadline-ms 200] [--targets direct,nginx,...]
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import overload_lab as lab  # noqa: E402

MULTIPLES = (0.5, 1, 2, 3)
NAMES = {"direct": "upstream, no limiter", "nginx": "nginx limit_conn C (503)",
         "haproxy": "HAProxy maxconn C + timeout queue", "sluice": "sluice concurrency:limit=C",
         "sluice-adaptive": "sluice adaptive_concurrency (envoy-gradient), no C"}
# The upstream's changes under load, and its capacity after each as a share of before: its
# service time doubles, or half its workers go (Bench.change_params).
CHANGES = {"slows": 0.5, "shrinks": 0.5}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--service-ms", type=float, default=10)
    ap.add_argument("--jitter-ms", type=float, default=2)
    ap.add_argument("--step-seconds", type=float, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--change-seconds", type=float, default=20, help="0: no change runs")
    ap.add_argument("--change-at", type=float, default=5)
    ap.add_argument("--min-rtt-interval", default=None,
                    help="sluice-adaptive's min_rtt_interval (default: its own, 60s)")
    ap.add_argument("--deadline-ms", type=int, default=200)
    ap.add_argument("--queue-ms", type=int, default=None, help="HAProxy timeout queue (T / 2)")
    ap.add_argument("--targets", default="direct,nginx,haproxy,sluice,sluice-adaptive")
    ap.add_argument("--out", default=None, help="where the CSVs go (default: a temp dir)")
    args = ap.parse_args()
    if args.rounds < 1 or args.change_at + 6 > args.change_seconds > 0:
        ap.error("--rounds must be at least 1 and --change-seconds at least --change-at + 6")
    return args


def write_csv(path, rows):
    with open(path, "w") as f:
        cols = list(rows[0].keys()) if rows else []
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join(str(r[c]) for c in cols) + "\n")


def file_name(target):
    return target.replace(":", "-")


class Bench:
    def __init__(self, args, out):
        self.args, self.out = args, out
        self.upstream_bin = os.path.join(args.build, "tests", "support", "collapsing_upstream")
        self.load_bin = os.path.join(args.build, "tests", "support", "open_loop_load")
        self.sluice_bin = os.path.join(args.build, "sluice")
        for b in (self.upstream_bin, self.load_bin, self.sluice_bin):
            if not os.access(b, os.X_OK):
                sys.exit(f"bench-overload: {b} is missing (make build)")
        self.capacity = args.workers * 1000.0 / args.service_ms
        self.queue_ms = args.queue_ms if args.queue_ms is not None else args.deadline_ms // 2

    def run(self, target, steps, name, change=None):
        """One target behind a fresh upstream; `change`: (at_s, control parameters)."""
        a = self.args
        up = lab.Upstream(self.upstream_bin, a.workers, a.service_ms, a.jitter_ms)
        proxy, port = None, up.port
        try:
            if target != "direct":
                kind, _, algorithm = target.partition(":")
                proxy = lab.Proxy(kind, os.path.join(self.out, file_name(target)), up.port,
                                  a.workers, sluice_bin=self.sluice_bin, queue_ms=self.queue_ms,
                                  algorithm=algorithm or "envoy-gradient",
                                  min_rtt_interval=a.min_rtt_interval)
                port = proxy.port
            if change:
                rows = lab.run_load_changing(self.load_bin, port, steps, up, change[0],
                                             change[1], deadline_ms=a.deadline_ms)
            else:
                rows = lab.run_load(self.load_bin, port, steps, deadline_ms=a.deadline_ms)
        finally:
            if proxy:
                proxy.stop()
            up.stop()
        write_csv(os.path.join(self.out, f"{file_name(target)}-{name}.csv"), rows)
        return rows

    def change_params(self, how):
        a = self.args
        if how == "slows":
            return {"service_ms": a.service_ms * 2}
        return {"workers": max(1, a.workers // 2)}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def steps_table(bench, targets, results):
    cap = bench.capacity
    print("| target | " + " | ".join(f"goodput at {m:g}x ({m * cap:g}/s)" for m in MULTIPLES)
          + " | p99 of 2xx at " + " / ".join(f"{m:g}x" for m in MULTIPLES) + " |")
    print("|---|" + "---|" * (len(MULTIPLES) + 1))
    for target in targets:
        rounds = results[target]
        good = [median([r[i]["goodput"] for r in rounds]) for i in range(len(MULTIPLES))]
        p99 = [median([r[i]["p99_ms"] for r in rounds]) for i in range(len(MULTIPLES))]
        cells = [f"{g:.0f}/s ({100 * g / cap:.0f}%)" for g in good]
        p99s = " / ".join("-" if v is None else f"{v:.0f}" for v in p99)
        print(f"| {NAMES.get(target, target)} | " + " | ".join(cells) + f" | {p99s} ms |")


def changes_table(bench, targets, changed):
    a, cap = bench.args, bench.capacity
    print(f"\nAt 2x ({2 * cap:g}/s) for {a.change_seconds:g} s; the change at {a.change_at:g} s."
          " Before: seconds 1 to the change, of the old capacity; after: from 5 s after the"
          " change to the end, of the new capacity (median of rounds).\n")
    print("| target | " + " | ".join(f"{how}: before / after" for how in CHANGES) + " |")
    print("|---|" + "---|" * len(CHANGES))
    for target in targets:
        cells = []
        for how, factor in CHANGES.items():
            before = median([lab.mean_goodput(rows, 1, int(a.change_at))
                             for rows in changed[target][how]])
            after = median([lab.mean_goodput(rows, int(a.change_at) + 5, int(a.change_seconds))
                            for rows in changed[target][how]])
            cells.append(f"{100 * before / cap:.0f}% / {100 * after / (cap * factor):.0f}%")
        print(f"| {NAMES.get(target, target)} | " + " | ".join(cells) + " |")


def main():
    args = parse_args()
    out = args.out or tempfile.mkdtemp(prefix="sluice-overload-")
    os.makedirs(out, exist_ok=True)
    bench = Bench(args, out)
    cap = bench.capacity
    steps = [(m * cap, args.step_seconds) for m in MULTIPLES]
    targets = args.targets.split(",")
    print(f"upstream: C={args.workers} workers, S={args.service_ms:g} ms +/- {args.jitter_ms:g} ms,"
          f" capacity {cap:g}/s; T={args.deadline_ms} ms; steps "
          f"{', '.join(f'{m:g}x' for m in MULTIPLES)} of {args.step_seconds:g} s;"
          f" {args.rounds} rounds; CSVs in {out}", flush=True)
    results = {t: [] for t in targets}
    changed = {t: {how: [] for how in CHANGES} for t in targets}
    for n in range(1, args.rounds + 1):
        for target in targets:
            rows = bench.run(target, steps, f"steps-{n}")
            results[target].append(lab.per_step(rows, steps))
            print(f"  round {n} {target}: " + ", ".join(
                f"{m:g}x {s['goodput']:.0f}/s" for m, s in zip(MULTIPLES, results[target][-1])),
                flush=True)
            if args.change_seconds <= 0:
                continue
            for how in CHANGES:
                rows = bench.run(target, [(2 * cap, args.change_seconds)], f"{how}-{n}",
                                 (args.change_at, bench.change_params(how)))
                changed[target][how].append(rows)

    print()
    steps_table(bench, targets, results)
    if args.change_seconds > 0:
        changes_table(bench, targets, changed)
    if "direct" in results:
        three = median([r[-1]["goodput"] for r in results["direct"]])
        verdict = "collapses" if three < 0.2 * cap else "DOES NOT collapse"
        print(f"\nno limiter at 3x: {three:.0f}/s = {100 * three / cap:.0f}% of capacity: "
              f"{verdict} (below 20% expected)")


if __name__ == "__main__":
    main()
