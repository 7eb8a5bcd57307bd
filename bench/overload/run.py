#!/usr/bin/env python3
"""`make bench-overload`: goodput of an upstream that collapses (tests/support/
collapsing_upstream: C workers, S ms each, an unbounded queue) under open-loop load at 0.5x, 1x,
2x and 3x its capacity C / S, with a client deadline T, for each target in one run:

  direct   the upstream with no limiter
  nginx    nginx 1.22, limit_conn at C, refusing with 503
  haproxy  HAProxy 2.6, maxconn C on the server, timeout queue (T / 2 by default), then 503
  sluice   sluice serve, a static concurrency:limit=C rule keyed by const, refusing with 503
  sluice-adaptive  sluice serve with adaptive_concurrency (envoy-gradient, its defaults) on the
           route and no capacity configured, refusing with 503

Each target gets a fresh upstream. Goodput is 2xx answered within T per second, averaged over
each step's seconds after its first; p99 is the median of those seconds' p99 of 2xx answers.
The raw per-second CSVs are left in --out.

    bench/overload/run.py --build build/release [--workers 16] [--service-ms 10]
        [--jitter-ms 2] [--step-seconds 30] [--deadline-ms 200] [--targets direct,nginx,...]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import overload_lab as lab  # noqa: E402

MULTIPLES = (0.5, 1, 2, 3)
NAMES = {"direct": "upstream, no limiter", "nginx": "nginx limit_conn C (503)",
         "haproxy": "HAProxy maxconn C + timeout queue", "sluice": "sluice concurrency:limit=C",
         "sluice-adaptive": "sluice adaptive_concurrency (envoy-gradient), no C"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--service-ms", type=float, default=10)
    ap.add_argument("--jitter-ms", type=float, default=2)
    ap.add_argument("--step-seconds", type=float, default=30)
    ap.add_argument("--deadline-ms", type=int, default=200)
    ap.add_argument("--queue-ms", type=int, default=None, help="HAProxy timeout queue (T / 2)")
    ap.add_argument("--targets", default="direct,nginx,haproxy,sluice,sluice-adaptive")
    ap.add_argument("--out", default=None, help="where the CSVs go (default: a temp dir)")
    args = ap.parse_args()

    upstream_bin = os.path.join(args.build, "tests", "support", "collapsing_upstream")
    load_bin = os.path.join(args.build, "tests", "support", "open_loop_load")
    sluice_bin = os.path.join(args.build, "sluice")
    for b in (upstream_bin, load_bin, sluice_bin):
        if not os.access(b, os.X_OK):
            sys.exit(f"bench-overload: {b} is missing (make build)")
    out = args.out or tempfile.mkdtemp(prefix="sluice-overload-")
    os.makedirs(out, exist_ok=True)
    capacity = args.workers * 1000.0 / args.service_ms
    steps = [(m * capacity, args.step_seconds) for m in MULTIPLES]
    queue_ms = args.queue_ms if args.queue_ms is not None else args.deadline_ms // 2

    print(f"upstream: C={args.workers} workers, S={args.service_ms:g} ms +/- {args.jitter_ms:g} ms,"
          f" capacity {capacity:g}/s; T={args.deadline_ms} ms; steps "
          f"{', '.join(f'{m:g}x' for m in MULTIPLES)} of {args.step_seconds:g} s; CSVs in {out}",
          flush=True)
    results = {}
    for target in args.targets.split(","):
        up = lab.Upstream(upstream_bin, args.workers, args.service_ms, args.jitter_ms)
        proxy, port = None, up.port
        try:
            if target != "direct":
                proxy = lab.Proxy(target, os.path.join(out, target), up.port, args.workers,
                                  sluice_bin=sluice_bin, queue_ms=queue_ms)
                port = proxy.port
            rows = lab.run_load(load_bin, port, steps, deadline_ms=args.deadline_ms)
        finally:
            if proxy:
                proxy.stop()
            up.stop()
        with open(os.path.join(out, f"{target}.csv"), "w") as f:
            cols = list(rows[0].keys()) if rows else []
            f.write(",".join(cols) + "\n")
            for r in rows:
                f.write(",".join(str(r[c]) for c in cols) + "\n")
        results[target] = lab.per_step(rows, steps)
        print(f"  {target}: " + ", ".join(f"{m:g}x {s['goodput']:.0f}/s"
                                          for m, s in zip(MULTIPLES, results[target])), flush=True)

    print()
    print("| target | " + " | ".join(f"goodput at {m:g}x ({m * capacity:g}/s)" for m in MULTIPLES)
          + " | p99 of 2xx at " + " / ".join(f"{m:g}x" for m in MULTIPLES) + " |")
    print("|---|" + "---|" * (len(MULTIPLES) + 1))
    for target, per in results.items():
        cells = [f"{s['goodput']:.0f}/s ({100 * s['goodput'] / capacity:.0f}%)" for s in per]
        p99 = " / ".join("-" if s["p99_ms"] is None else f"{s['p99_ms']:.0f}" for s in per)
        print(f"| {NAMES.get(target, target)} | " + " | ".join(cells) + f" | {p99} ms |")
    if "direct" in results:
        three = results["direct"][-1]["goodput"]
        verdict = "collapses" if three < 0.2 * capacity else "DOES NOT collapse"
        print(f"\nno limiter at 3x: {three:.0f}/s = {100 * three / capacity:.0f}% of capacity: "
              f"{verdict} (below 20% expected)")


if __name__ == "__main__":
    main()
