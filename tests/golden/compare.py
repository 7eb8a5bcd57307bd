#!/usr/bin/python3
"""Compare `sluice replay` against the golden decisions of the peer libraries.

    /usr/bin/python3 tests/golden/compare.py --sluice PATH [--golden-dir DIR] [--only SUBSTR]...
                                             [--jobs N] [--timeout S] [--quiet]

For every MANIFEST line `golden_file trace_file ARGS...` it runs
`PATH replay ARGS... < trace_file` and compares the output with golden_file line by line:
t_us, key and cost must match exactly, `allowed` exactly, `delay_us` within 2 us;
`remaining` and `retry_after_us` are informative and ignored. Prints one PASS/FAIL line
per golden (failures with their first 5 mismatching lines) and a total. Exit status:
0 all passed, 1 any failure, 2 usage error. Standard library only.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys

DELAY_TOLERANCE_US = 2
MAX_SHOWN = 5


def load_manifest(gdir):
    entries = []
    with open(os.path.join(gdir, "MANIFEST"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) < 3:
                sys.exit(f"compare.py: MANIFEST line {n}: expected golden trace args...")
            entries.append((parts[0], parts[1], parts[2:]))
    return entries


def split_lines(data):
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [l[:-1] if l.endswith(b"\r") else l for l in lines]


def show(b):
    return b.decode("utf-8", errors="backslashreplace")


def check_line(got, want):
    """Returns None if equivalent, else a reason."""
    g = got.split(b",")
    w = want.split(b",")
    if len(g) != 7:
        return f"expected 7 fields, got {len(g)}"
    if g[:3] != w[:3]:
        return "t_us,key,cost differ"
    if g[3] != w[3]:
        return "allowed differs"
    try:
        dg, dw = int(g[4]), int(w[4])
    except ValueError:
        return "delay_us is not an integer"
    if abs(dg - dw) > DELAY_TOLERANCE_US:
        return f"delay_us off by {dg - dw}"
    return None


def run_one(sluice, gdir, entry, timeout):
    golden, trace, args = entry
    cmd = [sluice, "replay"] + args
    with open(os.path.join(gdir, golden), "rb") as f:
        want = split_lines(f.read())
    try:
        with open(os.path.join(gdir, trace), "rb") as fin:
            p = subprocess.run(cmd, stdin=fin, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return golden, False, [f"timed out after {timeout}s: {' '.join(cmd)}"]
    except OSError as e:
        return golden, False, [f"cannot run {sluice}: {e}"]
    problems = []
    if p.returncode != 0:
        err = show(p.stderr.strip().splitlines()[0]) if p.stderr.strip() else ""
        problems.append(f"exit status {p.returncode}: {err}")
    got = split_lines(p.stdout)
    mismatches = 0
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else None
        w = want[i] if i < len(want) else None
        reason = ("missing output line" if g is None else
                  "extra output line" if w is None else check_line(g, w))
        if reason:
            mismatches += 1
            if len(problems) < MAX_SHOWN:
                problems.append(f"line {i + 1}: {reason}\n      got:  {show(g) if g is not None else '-'}"
                                f"\n      want: {show(w) if w is not None else '-'}")
    if mismatches:
        problems.append(f"{mismatches} of {len(want)} lines differ"
                        + (f" ({len(got)} output lines)" if len(got) != len(want) else ""))
    return golden, not problems, problems


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sluice", required=True, help="path to the sluice binary")
    ap.add_argument("--golden-dir", default=here)
    ap.add_argument("--only", action="append", default=[],
                    help="run only goldens whose name contains this (repeatable)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--quiet", action="store_true", help="print failures and the total only")
    a = ap.parse_args()

    sluice = os.path.abspath(a.sluice) if os.sep in a.sluice else a.sluice
    entries = load_manifest(a.golden_dir)
    if a.only:
        entries = [e for e in entries if any(s in e[0] for s in a.only)]
    if not entries:
        print("compare.py: no goldens selected", file=sys.stderr)
        return 2

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        futures = [ex.submit(run_one, sluice, a.golden_dir, e, a.timeout) for e in entries]
        for (golden, trace, args), fut in zip(entries, futures):
            name, ok, problems = fut.result()
            if ok:
                if not a.quiet:
                    print(f"PASS {name}")
                continue
            failed += 1
            print(f"FAIL {name}   ({trace} {' '.join(args)})")
            for pr in problems:
                print("    " + pr)
    print(f"{len(entries) - failed}/{len(entries)} goldens passed"
          + (f", {failed} FAILED" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
