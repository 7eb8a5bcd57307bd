#!/usr/bin/python3
"""Before and after in one run: the core and table benchmarks of this build beside the same
benchmarks of another build (an older commit's binaries), interleaved round by round so that
load from elsewhere spoils one round of each rather than every round of one. Prints a markdown
table of medians and after/before ratios (below 1: faster).

    /usr/bin/python3 bench/compare/run.py --before DIR [--after build/release/bench]
        [--rounds 5] [--min-time 0.2] [--filter REGEX]

DIR holds sluice_core_bench and sluice_table_bench, e.g. built from an older checkout:
    git worktree add /tmp/before OLD && cmake --preset release -S /tmp/before ... (or copy the
    binaries aside before changing the code).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

SUITES = ("sluice_core_bench", "sluice_table_bench")


def run_once(binary, min_time, pattern):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        args = [binary, f"--benchmark_min_time={min_time}", f"--benchmark_out={out.name}",
                "--benchmark_out_format=json"]
        if pattern:
            args.append(f"--benchmark_filter={pattern}")
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        data = json.load(open(out.name))
    # Nanoseconds per iteration: wall-clock for the benchmarks that say real_time (threads
    # sharing a table), CPU time for the rest (what a decision costs, not what waiting costs).
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
    return {b["name"]: b["real_time" if "/real_time" in b["name"] else "cpu_time"]
            * scale[b["time_unit"]]
            for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", required=True)
    p.add_argument("--after", default="build/release/bench")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--filter", default="")
    a = p.parse_args()
    samples = {}  # (suite, name) -> {"before": [...], "after": [...]}
    for r in range(a.rounds):
        for suite in SUITES:
            # Alternate which goes first, so neither always meets a warm (or a cold) machine.
            order = ("before", "after") if r % 2 == 0 else ("after", "before")
            for side in order:
                binary = os.path.join(a.before if side == "before" else a.after, suite)
                for name, ns in run_once(binary, a.min_time, a.filter).items():
                    samples.setdefault((suite, name), {"before": [], "after": []})[side].append(ns)
        print(f"bench-compare: round {r + 1}/{a.rounds} done", file=sys.stderr)
    load = open("/proc/loadavg").read().split()[:3]
    print(f"Medians of {a.rounds} interleaved rounds, ns per iteration (CPU time; wall-clock for "
          f"real_time ones); load average "
          f"{' '.join(load)} at the end.\n")
    print("| suite | benchmark | before (ns) | after (ns) | after/before |")
    print("|---|---|---:|---:|---:|")
    ratios = []
    for (suite, name), s in sorted(samples.items()):
        if not s["before"] or not s["after"]:
            print(f"| {suite} | {name} | {'–' if not s['before'] else ''} | "
                  f"{'–' if not s['after'] else ''} | only one side |")
            continue
        before, after = statistics.median(s["before"]), statistics.median(s["after"])
        ratio = after / before if before > 0 else float("nan")
        ratios.append(ratio)
        print(f"| {suite.replace('sluice_', '').replace('_bench', '')} | `{name}` | "
              f"{before:.1f} | {after:.1f} | {ratio:.2f} |")
    if ratios:
        print(f"\nMedian ratio over {len(ratios)} benchmarks: {statistics.median(ratios):.2f} "
              f"(geometric mean {statistics.geometric_mean(ratios):.2f}).")


if __name__ == "__main__":
    main()
