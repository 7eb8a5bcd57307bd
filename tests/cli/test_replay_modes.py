"""--mode reject|wait, --max-wait, and options of the replay synopsis."""
import pytest

TB = ["--limit", "token-bucket:rate=1/s,burst=1"]
S = 1_000_000


def test_reject_is_the_default_mode(decide):
    trace = "0,a\n0,a\n500000,a\n1000000,a\n"
    assert decide(trace, *TB) == decide(trace, *TB, "--mode", "reject")


def test_reject_mode_admits_only_what_goes_through_at_once(decide):
    rows = decide("0,a\n0,a\n", *TB)
    assert [(r[3], r[4]) for r in rows] == [(1, 0), (0, 0)]


def test_wait_mode_without_max_wait_is_unbounded_and_reports_the_delay(decide):
    rows = decide("0,a\n" * 4, *TB, "--mode", "wait")
    assert [(r[3], r[4]) for r in rows] == [(1, 0), (1, S), (1, 2 * S), (1, 3 * S)]


def test_wait_mode_admits_a_delay_equal_to_max_wait_and_denies_beyond(decide):
    rows = decide("0,a\n" * 3, *TB, "--mode", "wait", "--max-wait", "1s")
    assert [(r[3], r[4]) for r in rows] == [(1, 0), (1, S), (0, 0)]


def test_denied_wait_reservation_is_cancelled(decide):
    # the third request (2 s) is denied and must not hold a slot: the fourth waits 1 s again
    rows = decide("0,a\n0,a\n0,a\n1000000,a\n", *TB, "--mode", "wait", "--max-wait", "1s")
    assert [(r[3], r[4]) for r in rows] == [(1, 0), (1, S), (0, 0), (1, S)]


@pytest.mark.parametrize("duration,us", [("1500us", 1500), ("250ms", 250_000), ("2m", 120 * S), ("1h", 3600 * S)])
def test_max_wait_duration_units(decide, duration, us):
    # one token per max-wait: the second request waits exactly max-wait, the third twice that
    spec = f"token-bucket:rate=1/{duration},burst=1"
    rows = decide("0,a\n" * 3, "--limit", spec, "--mode", "wait", "--max-wait", duration)
    assert [(r[3], r[4]) for r in rows] == [(1, 0), (1, us), (0, 0)]


def test_gcra_30_per_60s_burst_15_is_cl_throttle_key_15_30_60(allowed):
    # limit = burst + 1 = 16 at one instant; emission interval 2 s
    trace = "0,k\n" * 17 + "1999999,k\n2000000,k\n2000000,k\n"
    assert allowed(trace, "--limit", "gcra:rate=30/60s,burst=15") == [1] * 16 + [0, 0, 1, 0]


def test_gcra_wait_mode_denies_a_cost_above_burst_plus_one(allowed):
    assert allowed("0,k,3\n0,k,4\n", "--limit", "gcra:rate=1/s,burst=2", "--mode", "wait") == [1, 0]


@pytest.mark.parametrize("spec", ["queue:rate=10/s", "queue:rate=3/s,max-wait=1s"])
def test_queue_follows_its_own_parameters_in_either_mode(decide, spec):
    trace = "0,a\n0,a\n0,a\n0,a,2\n100000,b\n2000000,a\n"
    want = decide(trace, "--limit", spec)
    assert decide(trace, "--limit", spec, "--mode", "wait") == want
    assert decide(trace, "--limit", spec, "--mode", "wait", "--max-wait", "1ms") == want


def test_store_local_is_accepted(decide):
    assert decide("0,a\n", *TB, "--store", "local")[0][3] == 1


def test_zone_option_of_the_synopsis_is_accepted(decide):
    assert decide("0,a\n", *TB, "--zone", "1048576")[0][3] == 1
