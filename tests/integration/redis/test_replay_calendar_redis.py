"""Calendar windows (fixed-window align=calendar) through `sluice replay --store redis://`: the
trace's time is Unix time for both stores, the replay names each request's windows from it as
the daemon does from its wall clock, and the script counts in the one holding its instant. A
daily quota in Europe/Berlin across both DST changes of 2026, a weekly one across Sunday nights
and a monthly one across month ends must give output identical to --store local, and the
waits a person can check: a 23-hour and a 25-hour day, a 28-day February."""
import os
import random
import sys
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replay_support import compare, replay  # noqa: E402

BERLIN = ZoneInfo("Europe/Berlin")
US = 1_000_000
HOUR = 3600 * US


def berlin_us(text):
    """Unix microseconds of a local time in Berlin, 'YYYY-MM-DD HH:MM:SS'."""
    return int(datetime.fromisoformat(text).replace(tzinfo=BERLIN).timestamp()) * US


def spec(limit, window):
    return f"fixed-window:limit={limit},window={window},align=calendar,timezone=Europe/Berlin"


def traffic(start, hours, keys, seed):
    """Requests every few minutes (costs 1..3) over `keys` keys for `hours` from `start`, with
    some at the very first and last microseconds of local midnights."""
    rng = random.Random(seed)
    t, end, out = berlin_us(start), berlin_us(start) + hours * HOUR, []
    while t < end:
        out.append(f"{t},k{rng.randrange(keys)},{rng.randint(1, 3)}\n")
        t += rng.choice((1, rng.randint(1, 60 * US), rng.randint(1, 20 * 60 * US)))
    return "".join(out).encode()


CASES = {
    "daily-spring-dst": ([spec(40, "1d")], traffic("2026-03-27 18:00:00", 80, 3, 1)),
    "daily-autumn-dst": ([spec(40, "1d")], traffic("2026-10-23 18:00:00", 80, 3, 2)),
    "weekly-month-end": ([spec(300, "1w")], traffic("2026-01-24 00:00:00", 24 * 16, 2, 3)),
    "monthly-month-ends": ([spec(900, "1mo"), spec(60, "1d")],
                           traffic("2026-01-30 00:00:00", 24 * 32, 2, 4)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_calendar_windows_decide_through_redis_as_locally(redis_server, name):
    specs, trace = CASES[name]
    args = [a for s in specs for a in ("--limit", s)]
    problem = compare(args, trace, redis_server.url, name)
    assert problem is None, problem
    out = replay(args, trace, redis_server.url).stdout.decode().splitlines()
    allowed = sum(line.split(",")[3] == "1" for line in out)
    assert 0 < allowed < len(out), "the trace both passes and runs into its quota"


def decisions(spec_text, lines, store):
    run = replay(["--limit", spec_text], "".join(lines).encode(), store)
    assert run.returncode == 0, run.stderr
    return [line.split(",") for line in run.stdout.decode().splitlines()]


@pytest.mark.parametrize("day, hours", [("2026-03-29", 23), ("2026-10-25", 25),
                                        ("2026-03-28", 24)])
def test_a_berlin_day_of_a_dst_change_is_23_or_25_hours(redis_server, day, hours):
    midnight = berlin_us(f"{day} 00:00:00")
    lines = [f"{midnight},k\n", f"{midnight + US},k\n", f"{midnight + hours * HOUR},k\n"]
    first, second, next_day = decisions(spec(1, "1d"), lines, redis_server.url)
    assert first[3] == "1" and second[3] == "0" and next_day[3] == "1"
    assert int(second[6]) == hours * HOUR - US, "retry_after_us: to the next local midnight"


def test_a_monthly_quota_starts_again_on_the_first(redis_server):
    feb1, mar1 = berlin_us("2026-02-01 00:00:00"), berlin_us("2026-03-01 00:00:00")
    lines = [f"{feb1 - US},k\n", f"{feb1 - 1},k\n", f"{feb1},k\n", f"{feb1 + US},k\n",
             f"{mar1},k\n"]
    got = decisions(spec(1, "1mo"), lines, redis_server.url)
    assert [d[3] for d in got] == ["1", "0", "1", "0", "1"]
    assert int(got[1][6]) == 1, "one microsecond to February"
    assert int(got[3][6]) == 28 * 24 * HOUR - US, "February has 28 days"
