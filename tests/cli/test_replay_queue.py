"""`queue` (Sentinel's ThrottlingController) as Sentinel's users see it: Sentinel starts a key's
last pass at -1 on an epoch clock, so a key's first request never waits, whatever the trace's
virtual time (defect 10: at t=0 it used to wait 99 ms)."""
import pytest

# spec, the spacing between two requests of one key in microseconds
SPECS = [("queue:rate=10/s", 100000),           # Sentinel's millisecond clock
         ("queue:rate=3/s,max-wait=1s", 333334)]  # its nanosecond clock (1000 % 3 != 0)


@pytest.mark.parametrize("spec,spacing", SPECS)
@pytest.mark.parametrize("t0", [0, 1, 99999, 5000000])
def test_a_keys_first_request_passes_at_once_at_any_trace_time(decide, spec, spacing, t0):
    rows = decide(f"{t0},k\n{t0},k\n", "--limit", spec)
    assert [(r[3], r[4]) for r in rows] == [(1, 0), (1, spacing)]


def test_each_key_starts_afresh_and_the_same_key_stays_spaced(decide):
    rows = decide("0,a\n0,b\n50000,a\n100000,a\n", "--limit", "queue:rate=10/s")
    assert [(r[1], r[3], r[4]) for r in rows] == [
        (b"a", 1, 0), (b"b", 1, 0), (b"a", 1, 50000), (b"a", 1, 100000)]


def test_a_first_request_passes_at_once_in_a_bounded_zone_too(decide):
    rows = decide("0,k\n0,k\n", "--limit", "queue:rate=10/s", "--zone", "1048576")
    assert [(r[3], r[4]) for r in rows] == [(1, 0), (1, 100000)]
