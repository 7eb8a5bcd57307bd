"""What `sluice simulate` shows about each algorithm, read from its CSV (docs/simulate.md,
docs/algorithms.md "Pictures"): one test per claim, each with numbers a person can check
against the scenario (`sluice simulate --print-scenario NAME`)."""
import subprocess

import pytest

from simulate_support import run_series, simulate

FIXED = "fixed-window:limit=10,window=1s"
SLIDING = "sliding-window:limit=10,window=1s"
LOG = "sliding-log:limit=10,window=1s"
LEAKY = "leaky-bucket:rate=10/s,burst=20"
TOKEN = "token-bucket:rate=10/s,burst=20"
GCRA = "gcra:rate=10/s,burst=19"  # redis-cell's burst: a limit of burst+1, so 20 as above

S = 1_000_000  # µs


def test_a_fixed_window_lets_through_twice_its_limit_across_a_boundary(sluice_bin, tmp_path):
    # The boundary scenario: 20 requests at 0.999 s and 20 at 1.000 s, again every 2 s.
    s = run_series(sluice_bin, tmp_path, "--scenario", "boundary", "--limit", FIXED,
                   "--bucket", "1ms")
    assert s.at(FIXED, 999_000, "offered") == 20 and s.at(FIXED, S, "offered") == 20
    # 10 at the end of window 0 and 10 at the start of window 1: 20 within 1 ms.
    assert s.at(FIXED, 999_000, "admitted") == 10
    assert s.at(FIXED, S, "admitted") == 10
    assert s.most_in_any(FIXED, "admitted", S) == 20
    # Each window by itself holds its limit.
    admitted = s.column(FIXED, "admitted")
    assert all(sum(admitted[w * 1000:(w + 1) * 1000]) <= 10 for w in range(10))
    assert s.total(FIXED, "admitted") == 100  # 5 double bursts of 20


@pytest.mark.parametrize("limit", [SLIDING, LOG])
def test_a_sliding_window_holds_the_boundary_burst_to_its_limit(sluice_bin, tmp_path, limit):
    s = run_series(sluice_bin, tmp_path, "--scenario", "boundary", "--limit", limit,
                   "--bucket", "1ms")
    assert s.most_in_any(limit, "offered", S) == 40
    assert s.at(limit, 999_000, "admitted") == 10
    assert s.at(limit, S, "admitted") == 0  # the previous window's 10 still count
    assert s.most_in_any(limit, "admitted", S) == 10
    assert s.total(limit, "admitted") == 50


def test_a_leaky_bucket_flattens_what_passes_to_its_rate(sluice_bin, tmp_path):
    # The burst scenario: 5/s until 2 s, 50 at 2 s, then 20/s; one key.
    s = run_series(sluice_bin, tmp_path, "--scenario", "burst", "--limit", LEAKY,
                   "--limit", TOKEN, "--bucket", "100ms")
    burst = 2 * S
    assert s.at(LEAKY, burst, "offered") == 52  # the burst and the first two of the 20/s
    # nginx admits burst+1 at once, but lets them proceed one per 1/rate = 100 ms...
    assert s.at(LEAKY, burst, "admitted") == 21
    assert s.at(LEAKY, burst, "passed") == 1
    passed = s.column(LEAKY, "passed")
    assert max(passed) == 1  # at most one per 100 ms bucket, the whole run long
    assert s.most_in_any(LEAKY, "passed", S) == 10
    assert s.at(LEAKY, burst, "delay_max_us") == 2 * S  # the 21st waits 20 x 100 ms
    # ...where a token bucket lets its burst through at once.
    assert s.at(TOKEN, burst, "passed") == 20


def test_a_token_bucket_passes_a_burst_up_to_its_capacity_then_holds_the_rate(sluice_bin,
                                                                             tmp_path):
    s = run_series(sluice_bin, tmp_path, "--scenario", "burst", "--limit", TOKEN,
                   "--bucket", "100ms")
    admitted = s.column(TOKEN, "admitted")
    offered = s.column(TOKEN, "offered")
    # Below its rate (5/s for 2 s) it admits everything.
    assert sum(admitted[:20]) == sum(offered[:20]) == 10
    # At the burst: its capacity, 20 of the 52 offered.
    assert s.at(TOKEN, 2 * S, "admitted") == 20
    # Then its rate: 10 in each second of the 20/s that follows.
    per_second = [sum(admitted[10 * i:10 * (i + 1)]) for i in range(3, 10)]
    assert per_second == [10] * 7, per_second
    assert [sum(offered[10 * i:10 * (i + 1)]) for i in range(3, 10)] == [20] * 7


@pytest.mark.parametrize("scenario", ["steady", "burst", "boundary", "poisson", "diurnal",
                                      "flood"])
@pytest.mark.parametrize("mode", [[], ["--mode", "wait", "--max-wait", "500ms"]],
                         ids=["reject", "wait-500ms"])
def test_gcra_and_the_token_bucket_of_the_same_rate_and_burst_agree(sluice_bin, tmp_path,
                                                                    scenario, mode):
    rows = run_series(sluice_bin, tmp_path, "--scenario", scenario, "--limit", TOKEN,
                      "--limit", GCRA, "--seed", "3", *mode).rows
    token = {(r["t_us"], r["source"]): r for r in rows if r["limit"] == TOKEN}
    gcra = {(r["t_us"], r["source"]): r for r in rows if r["limit"] == GCRA}
    assert token.keys() == gcra.keys()
    admitted = 0
    for k, t in token.items():
        g = gcra[k]
        assert (t["admitted"], t["denied"], t["passed"]) == (g["admitted"], g["denied"],
                                                              g["passed"]), k
        # x/time/rate's float delays are rounded up to whole µs: allow 2 µs a request.
        assert abs(int(t["delay_sum_us"]) - int(g["delay_sum_us"])) <= 2 * int(t["admitted"]), k
        admitted += int(t["admitted"])
    assert admitted >= 100


def test_simulate_decides_its_trace_as_replay_does(sluice_bin, tmp_path):
    """The generated trace (--trace), replayed limit by limit, is admitted and delayed as the
    simulation counted it."""
    trace = tmp_path / "trace.csv"
    limits = [TOKEN, LEAKY, "queue:rate=10/s,max-wait=1s", "smooth-bursty:rate=10/s", FIXED]
    args = ["--scenario", "flood", "--trace", str(trace)]
    for l in limits:
        args += ["--limit", l]
    s = run_series(sluice_bin, tmp_path, *args)
    for l in limits:
        with open(trace, "rb") as f:
            p = subprocess.run([sluice_bin, "replay", "--limit", l], stdin=f,
                               capture_output=True, timeout=60)
        assert p.returncode == 0, p.stderr
        decisions = [line.split(b",") for line in p.stdout.splitlines()]
        assert len(decisions) == s.total(l, "offered")
        assert sum(int(d[3]) for d in decisions) == s.total(l, "admitted"), l
        assert sum(int(d[4]) for d in decisions) == s.total(l, "delay_sum_us"), l


def test_the_same_seed_gives_the_same_series_and_another_seed_another(sluice_bin, tmp_path):
    def csv_of(seed):
        out = tmp_path / f"{seed}.csv"
        p = simulate(sluice_bin, "--scenario", "poisson", "--seed", seed, "--csv", str(out))
        assert p.returncode == 0, p.stderr
        return out.read_bytes()

    assert csv_of("7") == csv_of("7")
    assert csv_of("7") != csv_of("8")


def test_a_per_key_limit_holds_back_one_heavy_key_but_not_a_flood_of_new_keys(sluice_bin,
                                                                              tmp_path):
    limit = "token-bucket:rate=5/s,burst=10"
    by = {src: run_series(sluice_bin, tmp_path, "--scenario", "flood", "--limit", limit,
                          source=src) for src in ("users", "heavy", "flood")}
    # 20 users at about 1/s each: all admitted.
    assert by["users"].total(limit, "admitted") == by["users"].total(limit, "offered")
    # One key at 50/s for 10 s: its burst of 10, then 5/s.
    assert by["heavy"].total(limit, "offered") == 500
    assert by["heavy"].total(limit, "admitted") == 10 + 5 * 10 - 1
    # 200/s spread over 10000 keys from 5 s: nearly every request is a new key's first.
    flood = by["flood"]
    assert flood.total(limit, "offered") > 900
    assert flood.total(limit, "admitted") == flood.total(limit, "offered")
