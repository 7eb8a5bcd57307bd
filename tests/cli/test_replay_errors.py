"""Every `sluice replay` error: exit status 2 and exactly one stderr line that names the
argument or `line N` (physical lines, comments and blanks included) and the problem."""
import random

import pytest

from conftest import parse_decisions

TB = "token-bucket:rate=1/s,burst=3"
OK_TRACE = "0,a\n"

# ------------------------------------------------------------------ bad --limit specs
BAD_SPECS = [
    # (id, spec, regexes the message must match)
    ("unknown-algorithm", "foo:rate=1/s", ["foo", "algorithm"]),
    ("algorithm-names-are-case-sensitive", "TOKEN-BUCKET:rate=1/s,burst=1", ["TOKEN-BUCKET"]),
    ("empty-spec", "", ["algorithm"]),
    ("unknown-param", "token-bucket:rate=1/s,burst=1,bogus=2", ["bogus"]),
    ("param-of-another-algorithm", "gcra:rate=1/s,burst=1,window=1s", ["window"]),
    ("missing-param", "token-bucket:rate=1/s", ["burst", "missing|required"]),
    ("missing-rate", "leaky-bucket:burst=2", ["rate", "missing|required"]),
    ("missing-window", "sliding-log:limit=3", ["window", "missing|required"]),
    ("no-params-at-all", "gcra", ["missing|required"]),
    ("duplicate-param", "token-bucket:rate=1/s,burst=1,burst=2", ["burst", "twice|duplicate|again|more than once"]),
    ("duplicate-defaulted-param", "queue:rate=1/s,max-wait=1s,max-wait=2s",
     ["max-wait", "twice|duplicate|again|more than once"]),
    ("param-without-value", "token-bucket:rate=1/s,burst", ["burst"]),
    ("param-with-empty-value", "token-bucket:rate=1/s,burst=", ["burst"]),
    ("empty-param", "token-bucket:rate=1/s,,burst=1", ["param|value"]),
    ("rate-not-a-number", "token-bucket:rate=x/s,burst=1", ["rate"]),
    ("rate-without-period", "token-bucket:rate=10,burst=1", ["rate"]),
    ("rate-zero", "token-bucket:rate=0/s,burst=1", ["rate"]),
    ("rate-zero-period", "token-bucket:rate=1/0s,burst=1", ["rate"]),
    ("rate-unknown-unit", "token-bucket:rate=1/5x,burst=1", ["rate"]),
    ("rate-fraction", "token-bucket:rate=1.5/s,burst=1", ["rate"]),
    ("rate-negative", "token-bucket:rate=-1/s,burst=1", ["rate"]),
    ("rate-plus-sign", "token-bucket:rate=+1/s,burst=1", ["rate"]),
    ("rate-two-periods", "token-bucket:rate=1/s/s,burst=1", ["rate"]),
    ("rate-count-beyond-int64", "token-bucket:rate=9223372036854775808/s,burst=1", ["rate"]),
    ("rate-period-beyond-range", "token-bucket:rate=1/9223372036854775807h,burst=1", ["rate"]),
    ("burst-not-a-number", "token-bucket:rate=1/s,burst=x", ["burst"]),
    ("burst-negative", "token-bucket:rate=1/s,burst=-1", ["burst"]),
    ("burst-exponent", "gcra:rate=1/s,burst=1e3", ["burst"]),
    ("window-without-unit", "fixed-window:limit=1,window=10", ["window"]),
    ("window-fraction", "fixed-window:limit=1,window=1.5s", ["window"]),
    ("window-unknown-unit", "fixed-window:limit=1,window=1d", ["window"]),
    ("window-zero", "sliding-window:limit=1,window=0s", ["window"]),
    ("window-beyond-range", "sliding-log:limit=1,window=9999999999999h", ["window"]),
    ("limit-not-a-number", "fixed-window:limit=ten,window=1s", ["limit"]),
    ("max-wait-without-unit", "queue:rate=1/s,max-wait=5", ["max-wait"]),
    ("leaky-delay-and-nodelay", "leaky-bucket:rate=1/s,nodelay=1,delay=2", ["delay"]),
    ("leaky-nodelay-not-a-flag", "leaky-bucket:rate=1/s,nodelay=2", ["nodelay"]),
    ("leaky-rate-below-one-milli-request", "leaky-bucket:rate=1/h", ["rate"]),
    ("cold-factor-below-1", "smooth-warmup:rate=1/s,warmup=1s,cold-factor=0", ["cold-factor"]),
    ("concurrency-is-not-replayable", "concurrency:limit=1", ["concurrency"]),
]


@pytest.mark.parametrize("spec,problems", [c[1:] for c in BAD_SPECS], ids=[c[0] for c in BAD_SPECS])
def test_bad_limit_spec_exits_2_naming_the_limit_argument(fails, spec, problems):
    _, out = fails(OK_TRACE, "--limit", problems, "--limit", spec)
    assert out == b""


def test_bad_second_limit_is_reported_even_if_the_first_is_good(fails):
    fails(OK_TRACE, "--limit", ["bogus"], "--limit", TB, "--limit", "gcra:rate=1/s,burst=1,bogus=1")


# ------------------------------------------------------------------ bad options
BAD_OPTIONS = [
    ("unknown-mode", ["--mode", "foo"], "--mode", ["foo"]),
    ("mode-is-case-sensitive", ["--mode", "REJECT"], "--mode", ["REJECT"]),
    ("mode-without-value", ["--mode"], "--mode", []),
    ("max-wait-without-mode", ["--max-wait", "1s"], "--max-wait", ["wait"]),
    ("max-wait-with-reject-mode", ["--mode", "reject", "--max-wait", "1s"], "--max-wait", ["wait"]),
    ("max-wait-unknown-unit", ["--mode", "wait", "--max-wait", "1x"], "--max-wait", ["1x"]),
    ("max-wait-fraction", ["--mode", "wait", "--max-wait", "1.5s"], "--max-wait", []),
    ("max-wait-without-unit", ["--mode", "wait", "--max-wait", "0"], "--max-wait", []),
    ("max-wait-negative", ["--mode", "wait", "--max-wait", "-1s"], "--max-wait", []),
    ("max-wait-beyond-range", ["--mode", "wait", "--max-wait", "9999999999h"], "--max-wait", []),
    ("unknown-option", ["--bogus"], "--bogus", []),
    ("unsupported-store", ["--store", "memcached://x:1"], "--store", []),
]


@pytest.mark.parametrize("args,names,problems", [c[1:] for c in BAD_OPTIONS], ids=[c[0] for c in BAD_OPTIONS])
def test_bad_option_exits_2_naming_the_option(fails, args, names, problems):
    fails(OK_TRACE, names, problems, "--limit", TB, *args)


def test_missing_limit_exits_2_naming_limit(fails):
    fails(OK_TRACE, "--limit", [])


@pytest.mark.parametrize("spec", ["fixed-window:limit=1,window=1s", "sliding-log:limit=1,window=1s",
                                  "sliding-window:limit=1,window=1s"])
def test_window_algorithms_with_wait_mode_exit_2(fails, spec):
    fails(OK_TRACE, ("--limit", "--mode"), ["wait|reject"], "--limit", spec, "--mode", "wait")


# ------------------------------------------------------------------ bad trace lines
BAD_LINES = [
    # (id, bad line (placed as line 3), regexes)
    ("cost-zero", "0,a,0", ["cost"]),
    ("time-only", "0", []),
    ("empty-key", "0,,1", ["key"]),
    ("empty-key-no-cost", "0,", ["key"]),
    ("missing-time", ",a,1", ["time|t_us"]),
    ("missing-cost-after-comma", "0,a,", ["cost"]),
    ("too-many-fields", "0,a,1,2", []),
    ("time-not-a-number", "x,a", ["time|t_us"]),
]
NON_DECIMAL = ["+1", "1e3", "0x10", "1.5", "1x", "-1", " 1", "1 ", "1_000", "\u0661"]
BEYOND_INT64 = ["9223372036854775808", "18446744073709551616", "99999999999999999999999999"]


def bad_at_line_3(line):
    return "0,a\n# comment\n" + line + "\n0,a\n"


@pytest.mark.parametrize("line,problems", [c[1:] for c in BAD_LINES], ids=[c[0] for c in BAD_LINES])
def test_bad_line_exits_2_naming_line_n(fails, line, problems):
    fails(bad_at_line_3(line), "line 3", problems, "--limit", TB)


@pytest.mark.parametrize("text", NON_DECIMAL + BEYOND_INT64)
def test_non_decimal_or_too_large_time_exits_2(fails, text):
    fails(bad_at_line_3(text + ",a,1"), "line 3", ["time|t_us"], "--limit", TB)


@pytest.mark.parametrize("text", NON_DECIMAL + BEYOND_INT64)
def test_non_decimal_or_too_large_cost_exits_2(fails, text):
    fails(bad_at_line_3("1,a," + text), "line 3", ["cost"], "--limit", TB)


def test_time_beyond_the_nanosecond_range_exits_2(fails):
    # times are held as int64 nanoseconds: 9223372036854775 us is the last representable one
    fails("9223372036854775,a\n9223372036854776,b\n", "line 2", ["time|range"], "--limit", TB)


def test_largest_representable_time_is_accepted(decide):
    assert decide("9223372036854775,a\n", "--limit", TB)[0][3] == 1


def test_decreasing_time_exits_2(fails):
    fails("5,a\n5,a\n4,a\n", "line 3", ["earlier|decreas|before|must not"], "--limit", TB)


def test_decreasing_time_across_keys_exits_2(fails):
    fails("5,a\n4,b\n", "line 2", ["earlier|decreas|before|must not"], "--limit", TB)


def test_line_numbers_count_comments_blank_lines_and_crlf_lines(fails):
    trace = "# c\r\n\r\n0,a\r\n\n#x\n0,a,0\n0,a\n"
    fails(trace, "line 6", ["cost"], "--limit", TB)


def test_decisions_before_the_bad_line_stay_on_stdout(fails):
    _, out = fails("0,a\n1,b\n# c\n2,a,0\n3,a\n", "line 4", ["cost"], "--limit", TB)
    assert [(r[0], r[1]) for r in parse_decisions(out)] == [(0, b"a"), (1, b"b")]


def test_many_decisions_before_the_bad_line_stay_on_stdout(fails):
    good = "".join(f"{i},k{i % 7}\n" for i in range(20000))
    _, out = fails(good + "x\n", "line 20001", [], "--limit", TB)
    assert len(parse_decisions(out)) == 20000


# ------------------------------------------------------------------ never a crash
SPECS = [TB, "gcra:rate=3/s,burst=2", "leaky-bucket:rate=2/s,burst=3", "queue:rate=3/s",
         "fixed-window:limit=3,window=1s", "sliding-log:limit=3,window=1s",
         "sliding-window:limit=3,window=1s", "smooth-bursty:rate=3/s", "smooth-warmup:rate=3/s,warmup=1s"]


def garbage_traces(seed, n):
    rng = random.Random(seed)
    pieces = [b"0", b"1", b"9", b"9223372036854775", b"9223372036854775807", b",", b",,", b"a",
              b"\xff", b"-", b"+", b"e", b".", b" ", b"#", b"\r", b"\n", b"\r\n", b"\x00", b"0,a,1\n"]
    for _ in range(n):
        yield b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 40)))


@pytest.mark.parametrize("spec", SPECS)
def test_garbage_traces_never_crash(replay, spec):
    for trace in garbage_traces(SPECS.index(spec) + 1, 25):
        for mode in (["--mode", "reject"], ["--mode", "wait"]):
            p = replay(trace, "--limit", spec, *mode)
            assert p.returncode in (0, 2), (trace, mode, p.returncode, p.stderr)
            if p.returncode == 2:
                assert p.stderr.count(b"\n") == 1 and p.stderr.endswith(b"\n"), (trace, p.stderr)


@pytest.mark.parametrize("spec", SPECS)
def test_extreme_costs_and_times_never_crash(replay, spec):
    big = 9223372036854775807
    trace = (f"0,a,{big}\n0,a\n0,a,{big}\n9223372036854774,a\n9223372036854775,a,{big}\n"
             f"9223372036854775,a\n9223372036854775,b,{big}\n9223372036854775,b\n")
    for mode in (["--mode", "reject"], ["--mode", "wait"], ["--mode", "wait", "--max-wait", "2562047h"]):
        p = replay(trace, "--limit", spec, *mode)
        assert p.returncode in (0, 2), (mode, p.returncode, p.stderr)
        rows = parse_decisions(p.stdout)
        assert len(rows) == 8 if p.returncode == 0 else p.stderr.count(b"\n") == 1
        assert all(r[4] == 0 for r in rows if r[3] == 0), rows
