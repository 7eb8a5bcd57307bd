"""`sluice simulate --scenario collapse*`: the collapse model (an upstream of 16 workers at
10 ms +/- 2 ms, capacity 1,600/s, an unbounded queue, clients giving up after 200 ms) behind each
guard, read from its CSV and report as a user would: unguarded it serves nothing past capacity,
an adaptive limit with no capacity configured keeps it serving."""
import csv
import os
import re

from conftest import assert_usage_error
from simulate_support import simulate

CAPACITY = 1600


def goodput(rows, guard, start_s, end_s):
    """Mean goodput of `guard` over the buckets [start_s, end_s)."""
    v = [float(r["goodput"]) for r in rows
         if r["guard"] == guard and start_s * 1e6 <= int(r["t_us"]) < end_s * 1e6]
    return sum(v) / len(v)


def test_the_collapse_model_without_a_guard_falls_to_nothing_and_an_adaptive_limit_holds(
        sluice_bin, tmp_path):
    p = simulate(sluice_bin, "--scenario", "collapse", "--csv", str(tmp_path / "c.csv"),
                 "--out", str(tmp_path / "c.html"), "--svg", str(tmp_path / "c"))
    assert p.returncode == 0, p.stderr
    # The summary: a row per default guard, a column per phase.
    for guard in ("none", "static:16", "envoy-gradient", "gradient2", "vegas", "aimd"):
        assert re.search(rf"^{re.escape(guard)} ", p.stdout, re.M), (guard, p.stdout)
    with open(tmp_path / "c.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    # Phases of 10 s: 0.5x, 1x, 2x, 3x, 1x; each phase's first second left out.
    assert abs(goodput(rows, "none", 11, 20) - CAPACITY) < 0.02 * CAPACITY
    assert goodput(rows, "none", 31, 40) < 0.2 * CAPACITY  # the bar for no limiter
    once = goodput(rows, "envoy-gradient", 11, 20)
    assert goodput(rows, "envoy-gradient", 31, 40) >= 0.9 * once
    assert goodput(rows, "static:16", 31, 40) > 0.95 * CAPACITY
    # The limit column: none has none; envoy-gradient settles between C and 2C at 3x.
    limits = {int(r["t_us"]) // 10**6: float(r["limit"]) for r in rows
              if r["guard"] == "envoy-gradient"}
    assert all(16 <= limits[t] <= 32 for t in range(35, 40)), limits
    assert {float(r["limit"]) for r in rows if r["guard"] == "none"} == {0}
    # The report holds the phase table and the three plots; the plots are files too.
    html = (tmp_path / "c.html").read_text()
    assert html.count("<svg") == 3 and "Goodput by phase" in html
    assert "<td><code>envoy-gradient</code></td>" in html
    for plot in ("goodput", "limit", "latency"):
        assert (tmp_path / f"c-{plot}.svg").read_text().startswith("<svg"), plot


def test_when_the_upstream_slows_gradient2_follows_its_new_capacity(sluice_bin, tmp_path):
    p = simulate(sluice_bin, "--scenario", "collapse-slows", "--limit", "gradient2", "--limit",
                 "none", "--csv", str(tmp_path / "s.csv"))
    assert p.returncode == 0, p.stderr
    with open(tmp_path / "s.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    # At 2x from 10 s; S doubles at 15 s, capacity 800/s; 5 s after it, 90% of that.
    assert goodput(rows, "gradient2", 20, 40) >= 0.9 * 800
    assert {float(r["capacity"]) for r in rows if int(r["t_us"]) >= 15e6} == {800}
    assert goodput(rows, "none", 20, 40) < 0.01 * 800


def test_the_collapse_models_are_listed_and_traffic_flags_are_refused_by_name(sluice_bin):
    listed = simulate(sluice_bin, "--list-scenarios")
    for name in ("collapse", "collapse-slows", "collapse-shrinks"):
        assert re.search(rf"^{name} ", listed.stdout, re.M), listed.stdout
    for args, flag in ((["--duration", "10s"], "--duration"), (["--mode", "wait"], "--mode"),
                       (["--limit", "gradient"], "--limit"), (["--limit", "static:0"], "--limit"),
                       (["--bucket", "1ms"], "--bucket")):
        p = simulate(sluice_bin, "--scenario", "collapse", *args)
        p.stderr, p.stdout = p.stderr.encode(), p.stdout.encode()
        line = assert_usage_error(p, flag)
        assert line.startswith("sluice simulate: "), line


def test_a_collapse_output_that_cannot_be_written_fails_before_the_run(sluice_bin, tmp_path):
    p = simulate(sluice_bin, "--scenario", "collapse", "--out",
                 str(tmp_path / "missing" / "r.html"))
    assert p.returncode == 2 and "--out" in p.stderr and p.stdout == ""
    assert not os.path.exists(tmp_path / "missing")
