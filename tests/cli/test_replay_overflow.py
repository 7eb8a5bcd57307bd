"""Numbers never wrap: where the arithmetic of a value would overflow, replay refuses it
(exit 2 naming the line) instead of deciding on a wrapped or saturated value.

Checked against the exact (unbounded integer) reference models in tools/refmodels."""
import os
import sys

import pytest

from conftest import assert_usage_error, parse_decisions

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "refmodels"))
import models  # noqa: E402  (tools/refmodels/models.py)

LAST_US = 9223372036854775          # the last time that fits int64 nanoseconds
NEAR_END = (f"{LAST_US - 775},a\n{LAST_US - 1},a\n{LAST_US},a,2\n{LAST_US},a\n{LAST_US},a\n")


def model_lines(spec, mode, trace):
    m = models.make(spec, mode)
    return list(models.replay(m, trace.encode().splitlines(keepends=True)))


def assert_exact_or_refused(p, want):
    got = p.stdout.split(b"\n")[:-1]
    if p.returncode == 2:
        assert_usage_error(p, "line %d" % (len(got) + 1))
    else:
        assert p.returncode == 0, p.stderr
        assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = g.split(b","), w.split(b",")
        assert g[:4] == w[:4] and abs(int(g[4]) - int(w[4])) <= 2, (g, w)


CASES = [
    ("gcra:rate=1/s,burst=1", "reject"),
    ("gcra:rate=1/s,burst=1", "wait"),
    ("gcra:rate=1/h,burst=3", "reject"),
    ("queue:rate=3/s", "reject"),
    ("queue:rate=1/m,max-wait=2m", "reject"),
    ("queue:rate=10/s", "reject"),
    ("leaky-bucket:rate=1/s,burst=2", "reject"),
    ("fixed-window:limit=3,window=2562047h", "reject"),
    ("sliding-log:limit=3,window=2562047h", "reject"),
    ("sliding-window:limit=3,window=2562047h", "reject"),
]


@pytest.mark.parametrize("spec,mode", CASES)
def test_decisions_near_the_end_of_the_time_range_are_exact_or_refused(replay, spec, mode):
    assert_exact_or_refused(replay(NEAR_END, "--limit", spec, "--mode", mode),
                            model_lines(spec, mode, NEAR_END))


@pytest.mark.parametrize("spec", [
    "smooth-bursty:rate=3/s",
    "smooth-warmup:rate=3/s,warmup=1s",
    "token-bucket:rate=3/s,burst=28000000000",
])
def test_a_wait_beyond_the_time_range_is_never_a_negative_delay(replay, spec):
    # the first request costs 28e9 permits at 3/s: the next one waits about 9.33e15 us, more
    # than int64 nanoseconds hold; the delay must be exact or the line refused, never wrapped
    p = replay("0,a,28000000000\n0,a\n5,a\n", "--limit", spec, "--mode", "wait")
    if p.returncode == 2:
        assert_usage_error(p, "line %d" % (p.stdout.count(b"\n") + 1))
    rows = parse_decisions(p.stdout)
    assert all(r[4] >= 0 for r in rows), rows
    assert all(r[4] == 0 or r[4] >= 333_333 for r in rows), rows
