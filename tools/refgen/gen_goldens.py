#!/usr/bin/python3
"""Regenerate tests/golden/*.csv and tests/golden/MANIFEST from the peer libraries.

    /usr/bin/python3 tools/refgen/gen_goldens.py --xtime BIN --guava-cp CLASSPATH [--golden-dir DIR]

Normally run through tools/refgen/gen.sh, which builds BIN and CLASSPATH first.
The case matrix below is the single source of truth: each case is a Sluice `--limit`
SPEC plus mode; the SPEC is parsed here and translated into the reference generator's
arguments, and the MANIFEST line records the `sluice replay` arguments verbatim.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

# --------------------------------------------------------------------------- cases
# (name prefix, sluice spec, base rate for the rate-specific traces)
TOKEN_BUCKET = [
    ("tb_r10s_b20", "token-bucket:rate=10/s,burst=20", 10),
    ("tb_r10s_b1", "token-bucket:rate=10/s,burst=1", 10),
    ("tb_r3s_b5", "token-bucket:rate=3/s,burst=5", 3),
    ("tb_r100per10s_b5", "token-bucket:rate=100/10s,burst=5", 10),
    ("tb_r7s_b1", "token-bucket:rate=7/s,burst=1", 7),
    ("tb_r7s_b20", "token-bucket:rate=7/s,burst=20", 7),
]
SMOOTH_BURSTY = [
    ("sb_r5s", "smooth-bursty:rate=5/s", 5),
    ("sb_r10s", "smooth-bursty:rate=10/s", 10),
    ("sb_r10s_mb2s", "smooth-bursty:rate=10/s,max-burst=2s", 10),
    ("sb_r3s_mb2s", "smooth-bursty:rate=3/s,max-burst=2s", 3),
]
SMOOTH_WARMUP = [
    ("sw_r10s_wu2s", "smooth-warmup:rate=10/s,warmup=2s", 10),
    ("sw_r4s_wu1s_cf2", "smooth-warmup:rate=4/s,warmup=1s,cold-factor=2", 4),
]
# (suffix, sluice args) -- max-wait differs per algorithm family
TB_MODES = [("reject", ["--mode", "reject"]), ("wait", ["--mode", "wait"]),
            ("wait250ms", ["--mode", "wait", "--max-wait", "250ms"])]
GUAVA_MODES = [("reject", ["--mode", "reject"]), ("wait", ["--mode", "wait"]),
               ("wait300ms", ["--mode", "wait", "--max-wait", "300ms"])]

GENERIC_TRACES = ["burst_then_steady", "frozen_clock", "idle_gaps", "costs", "multikey", "hour_jump"]


def traces_for(base_rate):
    return GENERIC_TRACES + [f"spacing_r{base_rate}", f"poisson_r{base_rate}"]


# --------------------------------------------------------------------------- spec parsing
UNITS_NS = {"us": 1_000, "ms": 1_000_000, "s": 1_000_000_000, "m": 60_000_000_000,
            "h": 3_600_000_000_000}


def duration_ns(text):
    m = re.fullmatch(r"([0-9]+)(us|ms|s|m|h)", text)
    if not m:
        raise ValueError(f"bad duration {text!r}")
    return int(m.group(1)) * UNITS_NS[m.group(2)]


def rate(text):
    """'10/s' -> (10, 1e9 ns); '100/10s' -> (100, 10e9 ns)."""
    m = re.fullmatch(r"([0-9]+)/(.+)", text)
    if not m:
        raise ValueError(f"bad rate {text!r}")
    per = m.group(2)
    period = UNITS_NS[per] if per in ("s", "m", "h") else duration_ns(per)
    return int(m.group(1)), period


def parse_spec(spec):
    algo, _, params = spec.partition(":")
    kv = {}
    for p in params.split(","):
        k, _, v = p.partition("=")
        assert k not in kv, spec
        kv[k] = v
    return algo, kv


def refgen_command(spec, sluice_mode_args, xtime_bin, guava_cp):
    algo, kv = parse_spec(spec)
    mode = sluice_mode_args[sluice_mode_args.index("--mode") + 1]
    max_wait_ns = None
    if "--max-wait" in sluice_mode_args:
        max_wait_ns = duration_ns(sluice_mode_args[sluice_mode_args.index("--max-wait") + 1])
    count, period_ns = rate(kv["rate"])
    if algo == "token-bucket":
        cmd = [xtime_bin, "-rate-count", str(count), "-rate-period-ns", str(period_ns),
               "-burst", kv["burst"], "-mode", mode]
        if max_wait_ns is not None:
            cmd += ["-max-wait-ns", str(max_wait_ns)]
        return cmd
    pps = count / (period_ns / 1e9)
    # JVM warnings go to stdout by default; send them to stderr and disable hsperfdata
    # (parallel JVMs can collide on /tmp/hsperfdata_*), so stdout is only decisions.
    cmd = ["java", "-XX:-UsePerfData", "-Xlog:disable", "-Xlog:all=warning:stderr",
           "-XX:TieredStopAtLevel=1", "-cp", guava_cp,
           "com.google.common.util.concurrent.RefGen", "--permits-per-second", repr(pps),
           "--mode", mode]
    if algo == "smooth-bursty":
        mb_ns = duration_ns(kv.get("max-burst", "1s"))
        cmd += ["--algo", "bursty", "--max-burst-seconds", repr(mb_ns / 1e9)]
    elif algo == "smooth-warmup":
        cmd += ["--algo", "warmup", "--warmup-micros", str(duration_ns(kv["warmup"]) // 1000),
                "--cold-factor", repr(float(kv.get("cold-factor", "3")))]
    else:
        raise ValueError(algo)
    if max_wait_ns is not None:
        assert max_wait_ns % 1000 == 0
        cmd += ["--max-wait-micros", str(max_wait_ns // 1000)]
    return cmd


def validate(golden, trace_path, out):
    """The output must be exactly one well-formed decision per trace request, in order."""
    with open(trace_path, "rb") as f:
        reqs = [l.rstrip(b"\r") for l in f.read().split(b"\n")]
    reqs = [l for l in reqs if l and not l.startswith(b"#")]
    lines = out.split(b"\n")
    assert lines[-1] == b"", golden
    lines.pop()
    if len(lines) != len(reqs):
        raise RuntimeError(f"{golden}: {len(lines)} output lines for {len(reqs)} requests")
    for i, (req, line) in enumerate(zip(reqs, lines), 1):
        f = line.split(b",")
        r = req.split(b",")
        want = r[:2] + [r[2] if len(r) > 2 else b"1"]
        ok = (len(f) == 7 and f[:3] == want and f[3] in (b"0", b"1")
              and all(x.lstrip(b"-").isdigit() for x in f[4:]) and int(f[4]) >= 0
              and (f[3] == b"1" or f[4] == b"0"))
        if not ok:
            raise RuntimeError(f"{golden}: bad output line {i}: {line!r} for request {req!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--xtime", required=True)
    ap.add_argument("--guava-cp", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--golden-dir", default=os.path.normpath(os.path.join(here, "..", "..", "tests", "golden")))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    args = ap.parse_args()
    gdir = args.golden_dir

    jobs = []  # (golden file, trace file, sluice args, refgen cmd)
    for family, modes in ((TOKEN_BUCKET, TB_MODES), (SMOOTH_BURSTY, GUAVA_MODES),
                          (SMOOTH_WARMUP, GUAVA_MODES)):
        for prefix, spec, base in family:
            for suffix, margs in modes:
                for tr in traces_for(base):
                    golden = f"{prefix}_{suffix}__{tr}.csv"
                    sluice_args = ["--limit", spec] + margs
                    jobs.append((golden, f"traces/{tr}.csv", sluice_args,
                                 refgen_command(spec, margs, args.xtime, args.guava_cp)))

    for f in os.listdir(gdir):  # drop stale goldens (top level only; traces/ is separate)
        if f.endswith(".csv"):
            os.remove(os.path.join(gdir, f))

    def run(job):
        golden, trace, _, cmd = job
        with open(os.path.join(gdir, trace), "rb") as fin:
            p = subprocess.run(cmd, stdin=fin, capture_output=True)
        if p.returncode != 0:
            raise RuntimeError(f"{golden}: {' '.join(cmd)} failed: {p.stderr.decode(errors='replace')}")
        validate(golden, os.path.join(gdir, trace), p.stdout)
        with open(os.path.join(gdir, golden), "wb") as fout:
            fout.write(p.stdout)
        return golden

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for _ in ex.map(run, jobs):
            pass

    with open(os.path.join(gdir, "MANIFEST"), "w", encoding="utf-8") as m:
        m.write("# golden_file trace_file sluice-replay-args...   (generated by tools/refgen/gen.sh)\n")
        m.write("# compare: allowed exact, delay_us within 2us, t_us/key/cost exact; remaining and\n")
        m.write("# retry_after_us are informative. Arguments are whitespace-separated, no quoting.\n")
        for golden, trace, sluice_args, _ in jobs:
            assert not any(" " in a for a in sluice_args)
            m.write(" ".join([golden, trace] + sluice_args) + "\n")
    print(f"gen_goldens: {len(jobs)} goldens -> {gdir}")


if __name__ == "__main__":
    sys.exit(main())
