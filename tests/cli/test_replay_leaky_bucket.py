"""`leaky-bucket` is nginx limit_req arithmetic (DESIGN.md, "Details that the checks rely on").

Every expectation below is computed by hand from nginx's integer formulas
(docs/references.md section 1): rate in whole milli-requests/s, times cut to whole ms,
excess = max(0, excess - rate*ms//1000 + 1000*cost), reject when excess > burst,
delay = (excess - delay_threshold)*1000//rate ms.
"""
import pytest

S = 1_000_000  # microseconds


def lb(**params):
    return ["--limit", "leaky-bucket:" + ",".join(f"{k}={v}" for k, v in params.items())]


def columns(rows):
    return [r[3] for r in rows], [r[4] for r in rows]


def test_100_per_minute_is_held_as_1666_milli_requests_per_second(allowed):
    # decay after 600 ms is 1666*600//1000 = 999, so excess 1 > burst 0 (exact 1666.67/s would drain it);
    # 600999 us is still 600 ms; at 601 ms the decay is 1001 and the request passes
    trace = "0,a\n600000,a\n600999,a\n601000,a\n"
    assert allowed(trace, *lb(rate="100/m")) == [1, 0, 0, 1]


def test_100_per_minute_delays_use_the_truncated_rate(decide):
    # excess 1000..5000 -> delay excess*1000//1666 ms: 600, 1200, 1800, 2400, 3001 (exact rate: 3000)
    allowed, delays = columns(decide("0,a\n" * 7, *lb(rate="100/m", burst=5)))
    assert allowed == [1, 1, 1, 1, 1, 1, 0]
    assert delays == [0, 600_000, 1_200_000, 1_800_000, 2_400_000, 3_001_000, 0]


def test_times_are_cut_to_whole_milliseconds(allowed):
    # 999999 us is 999 ms: decay 999, excess 1 > 0; at 1000 ms the decay is 1000
    assert allowed("0,a\n999999,a\n1000000,a\n", *lb(rate="1/s")) == [1, 0, 1]


def test_requests_within_one_millisecond_see_no_decay(decide):
    allowed, delays = columns(decide("0,a\n500,a\n999,a\n", *lb(rate="1/s", burst=1)))
    assert allowed == [1, 1, 0]
    assert delays == [0, 1_000_000, 0]


def test_burst_plus_one_requests_pass_at_one_instant(decide):
    allowed, delays = columns(decide("5000,a\n" * 5, *lb(rate="1/s", burst=3)))
    assert allowed == [1, 1, 1, 1, 0]
    assert delays == [0, 1 * S, 2 * S, 3 * S, 0]


def test_burst_defaults_to_0_so_one_request_passes_at_one_instant(allowed):
    assert allowed("0,a\n0,a\n", *lb(rate="10/s")) == [1, 0]


def test_every_new_key_starts_with_excess_0(decide):
    allowed, delays = columns(decide("0,a\n0,b\n0,c\n0,a\n", *lb(rate="1/s", burst=1)))
    assert allowed == [1, 1, 1, 1]
    assert delays == [0, 0, 0, 1 * S]


def test_a_new_keys_first_request_is_never_counted_whatever_its_cost(decide):
    # nginx stores excess 0 for a new node and never checks it against burst
    allowed, delays = columns(decide("0,a,9\n0,a\n0,a,3\n", *lb(rate="1/s", burst=3)))
    assert allowed == [1, 1, 0]
    assert delays == [0, 1 * S, 0]


def test_delay_n_lets_n_excess_requests_through_undelayed(decide):
    # excess 0, 1000, 2000 <= delay 2000 -> no delay; then (excess - 2000)*1000//1000 ms
    allowed, delays = columns(decide("0,a\n" * 7, *lb(rate="1/s", burst=5, delay=2)))
    assert allowed == [1, 1, 1, 1, 1, 1, 0]
    assert delays == [0, 0, 0, 1 * S, 2 * S, 3 * S, 0]


def test_nodelay_1_passes_the_whole_burst_without_delay(decide):
    allowed, delays = columns(decide("0,a\n" * 5, *lb(rate="1/s", burst=3, nodelay=1)))
    assert allowed == [1, 1, 1, 1, 0]
    assert delays == [0, 0, 0, 0, 0]


def test_cost_c_adds_c_times_1000_to_the_excess(decide):
    # excess: 0; +3000 = 3000 (delay 3 s); +3000 = 6000 > 5000 denied, nothing charged;
    # +2000 = 5000 == burst allowed (delay 5 s); +1000 = 6000 denied
    trace = "0,a,1\n0,a,3\n0,a,3\n0,a,2\n0,a,1\n"
    allowed, delays = columns(decide(trace, *lb(rate="1/s", burst=5)))
    assert allowed == [1, 1, 0, 1, 0]
    assert delays == [0, 3 * S, 0, 5 * S, 0]


def test_cost_after_decay(decide):
    # 5000 after the first requests; 2 s later: 5000 - 2000 + 2000 = 5000 -> delay 5 s; +1000 denied
    trace = "0,a\n0,a,5\n2000000,a,2\n2000000,a\n"
    allowed, delays = columns(decide(trace, *lb(rate="1/s", burst=5)))
    assert allowed == [1, 1, 1, 0]
    assert delays == [0, 5 * S, 5 * S, 0]


def test_decay_is_rate_times_ms_integer_divided_by_1000(decide):
    # rate 2/s = 2000: excess 0, 1000, 2000; at 400 ms 2000 - 800 + 1000 = 2200 > 2000;
    # at 500 ms 2000 - 1000 + 1000 = 2000 -> delay 2000*1000//2000 = 1000 ms
    allowed, delays = columns(decide("0,a\n0,a\n0,a\n400000,a\n500000,a\n", *lb(rate="2/s", burst=2)))
    assert allowed == [1, 1, 1, 0, 1]
    assert delays[4] == 1 * S


def test_decay_is_truncated_at_every_step_and_last_moves_on(decide):
    # 7/m = 116 milli-requests/s; every 8 ms the decay is 116*8//1000 = 0 but `last` moves on,
    # so 10 steps leave excess exactly 10000 (a decay from t=0 would give 116*80//1000 = 9)
    trace = "0,a\n" + "".join(f"{8000 * k},a\n" for k in range(1, 11))
    allowed, delays = columns(decide(trace, *lb(rate="7/m", burst=100)))
    assert allowed == [1] * 11
    assert delays == [0] + [k * 1000 * 1000 // 116 * 1000 for k in range(1, 11)]
    assert delays[-1] == 86_206_000


def test_a_denied_request_does_not_move_last(allowed):
    # burst 0 at 1/s: denied at 500 ms (excess 500); if `last` moved to 500 ms the request
    # at 1000 ms would see excess 500 and be denied too
    assert allowed("0,a\n500000,a\n1000000,a\n", *lb(rate="1/s")) == [1, 0, 1]


@pytest.mark.parametrize("mode", [["--mode", "wait"], ["--mode", "wait", "--max-wait", "1ms"]])
def test_leaky_bucket_follows_its_own_parameters_in_either_mode(decide, mode):
    trace = "0,a\n0,a\n0,a,2\n250000,a\n3000000,a\n"
    spec = lb(rate="2/s", burst=3, delay=1)
    assert decide(trace, *spec, *mode) == decide(trace, *spec)
