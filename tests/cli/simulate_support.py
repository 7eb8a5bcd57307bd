"""Helpers for the `sluice simulate` tests: run it, and read its CSV into per-bucket totals."""
import csv
import subprocess
from collections import defaultdict

COUNTS = ("offered", "admitted", "denied", "passed", "delayed", "delay_sum_us")


def simulate(sluice_bin, *args, cwd=None, timeout=120):
    """Runs `sluice simulate ARGS`; returns the CompletedProcess (text)."""
    return subprocess.run([sluice_bin, "simulate", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class Series:
    """A run's CSV: for each limit, a list over buckets of {count: value}, summed over sources
    (or of one source), and the bucket width in microseconds."""

    def __init__(self, rows, source=None):
        self.rows = rows
        times = sorted({int(r["t_us"]) for r in rows})
        self.bucket_us = times[1] - times[0]
        self.buckets = len(times)
        self.limits = list(dict.fromkeys(r["limit"] for r in rows))
        self.by_limit = {l: [defaultdict(int) for _ in times] for l in self.limits}
        for r in rows:
            if source is not None and r["source"] != source:
                continue
            cell = self.by_limit[r["limit"]][int(r["t_us"]) // self.bucket_us]
            for c in COUNTS:
                cell[c] += int(r[c])
            cell["delay_max_us"] = max(cell["delay_max_us"], int(r["delay_max_us"]))

    def column(self, limit, count):
        return [cell[count] for cell in self.by_limit[limit]]

    def at(self, limit, t_us, count):
        """The count in the bucket that holds time t_us."""
        return self.by_limit[limit][t_us // self.bucket_us][count]

    def most_in_any(self, limit, count, span_us):
        """The largest total of `count` over any run of buckets spanning span_us."""
        n = span_us // self.bucket_us
        v = self.column(limit, count)
        return max(sum(v[i:i + n]) for i in range(0, max(1, len(v) - n + 1)))

    def total(self, limit, count):
        return sum(self.column(limit, count))


def run_series(sluice_bin, tmp_path, *args, source=None):
    """Runs simulate with --csv into tmp_path (it must succeed) and returns its Series."""
    out = tmp_path / "series.csv"
    p = simulate(sluice_bin, *args, "--csv", str(out))
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", p.stderr
    return Series(read_rows(out), source=source)
