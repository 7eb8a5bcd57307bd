"""sluice's adaptive concurrency limit against the collapsing upstream (C = 8 workers, S = 20 ms:
capacity 400/s; C = 16, S = 10 ms for the 3x settling test), with no capacity configured: goodput at 3x holds near
goodput at 1x, the limit settles within [C, 2C], and under two tiers at 3x the higher keeps its
goodput; when the upstream slows (S doubles) or shrinks (half its workers) mid-run, goodput is
back near the new capacity and the limit follows it down within 5 s. (Envoy's gradient settles
near 1.25 C + sqrt(limit): at C = 4 that is just over 2C.)"""
import contextlib
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from integration_support import sluice_binary  # noqa: E402

C = 8
STEPS = [(400, 3), (1200, 4)]  # 1x, then 3x


@contextlib.contextmanager
def limit_samples(proxy, start_after):
    """The limit gauge every 100 ms from `start_after` seconds on, into the list it yields,
    until the block ends; the proxy is stopped then."""
    out, stop = [], threading.Event()

    def sample():
        t0 = time.monotonic()
        while not stop.is_set():
            if time.monotonic() - t0 >= start_after:
                out.append(proxy.metric("sluice_adaptive_limit"))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        yield out
    finally:
        stop.set()
        sampler.join()
        proxy.stop()


def test_an_adaptive_limit_keeps_goodput_at_3x_and_settles_within_c_and_2c(upstream, lab,
                                                                           load_bin, tmp_path):
    # C = 16, S = 10 ms: 1,600/s (bench-overload's upstream). At C = 8, S = 20 ms the gradient's
    # swings below C cost 3-12% at 3x from run to run, too close to the 10% bar.
    up = upstream(workers=2 * C, service_ms=10, jitter_ms=2)
    proxy = lab.Proxy("sluice-adaptive", str(tmp_path), up.port, None, sluice_bin=sluice_binary())
    steps = [(1600, 3), (4800, 4)]
    # The 3x step's seconds after its first (as per_step counts them).
    with limit_samples(proxy, 4.0) as limits:
        one, three = lab.per_step(lab.run_load(load_bin, proxy.port, steps), steps)
    assert one["goodput"] >= 0.85 * 1600, one
    assert three["goodput"] >= 0.9 * one["goodput"], (one, three, limits)
    assert three["other"] >= 0.5 * 4800, three  # the 503s: refused, not queued at the upstream
    limits = [v for v in limits if v is not None]
    assert limits, "no sluice_adaptive_limit sample"
    median = sorted(limits)[len(limits) // 2]
    assert 2 * C <= median <= 4 * C, limits


def test_with_two_tiers_at_3x_the_higher_keeps_its_goodput(upstream, lab, load_bin, tmp_path):
    up = upstream(workers=C, service_ms=20, jitter_ms=4)
    proxy = lab.Proxy("sluice-adaptive", str(tmp_path), up.port, None, sluice_bin=sluice_binary(),
                      max_wait_ms=50, priority_header="X-Priority")
    steps_high, steps_low = [(200, 4)], [(1000, 4)]  # 0.5x of tier 9 and 2.5x of tier 0
    results = {}

    def run(name, steps, tier):
        results[name] = lab.per_step(lab.run_load(load_bin, proxy.port, steps,
                                                  headers=[f"X-Priority: {tier}"]), steps)[0]

    try:
        low = threading.Thread(target=run, args=("low", steps_low, 0))
        low.start()
        run("high", steps_high, 9)
        low.join()
        shed_low = proxy.metric('sluice_adaptive_shed_total{route="all",tier="0"}')
    finally:
        proxy.stop()
    high, low = results["high"], results["low"]
    # Alone, tier 9 is below capacity and all of it is served: it keeps 95% of that.
    assert high["goodput"] >= 0.95 * 200, (high, low)
    assert low["goodput"] > 0, low  # the rest of the capacity still serves the lower tier
    assert high["goodput"] + low["goodput"] >= 0.8 * 400, (high, low)
    assert shed_low and shed_low >= 0.3 * 1000 * 4, shed_low  # tier 0 is refused first


def test_when_the_upstream_slows_goodput_is_back_to_90pct_of_its_new_capacity_within_5s(
        upstream, lab, load_bin, tmp_path):
    # 600/s against 400/s; at 3 s the service time doubles: capacity 200/s, offered 3x of it.
    # The minimum RTT measured again every 3 s (the default 60 s sinks toward min_limit until
    # then: docs/configuration.md, min_rtt_interval).
    up = upstream(workers=C, service_ms=20, jitter_ms=4)
    proxy = lab.Proxy("sluice-adaptive", str(tmp_path), up.port, None, sluice_bin=sluice_binary(),
                      min_rtt_interval="3s")
    try:
        rows = lab.run_load_changing(load_bin, proxy.port, [(600, 12)], up, 3.0,
                                     {"service_ms": 40})
    finally:
        proxy.stop()
    before, after = lab.mean_goodput(rows, 1, 3), lab.mean_goodput(rows, 8, 12)
    assert before >= 0.85 * 400, rows
    assert after >= 0.9 * 200, (before, after, rows)


def test_when_the_upstream_shrinks_the_limit_follows_it_down_within_5s(upstream, lab, load_bin,
                                                                       tmp_path):
    # 800/s against 400/s; at 4 s half the workers go: C = 4, capacity 200/s.
    up = upstream(workers=C, service_ms=20, jitter_ms=4)
    proxy = lab.Proxy("sluice-adaptive", str(tmp_path), up.port, None, sluice_bin=sluice_binary())
    with limit_samples(proxy, 0.0) as limits:
        rows = lab.run_load_changing(load_bin, proxy.port, [(800, 13)], up, 4.0, {"workers": 4})
    # 10 samples a second from the start: seconds 2-4 before, 9-13 once 5 s have passed.
    before = sorted(v for v in limits[20:40] if v is not None)
    after = sorted(v for v in limits[90:130] if v is not None)
    assert before and after, limits
    median_before, median_after = before[len(before) // 2], after[len(after) // 2]
    assert C <= median_before <= 2 * C, limits
    assert median_after < median_before and median_after <= 2 * (C // 2) + 1, limits
    assert lab.mean_goodput(rows, 9, 13) >= 0.9 * 200, rows
