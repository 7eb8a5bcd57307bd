"""`sluice replay --zone BYTES`: per-key states in a bounded table per limit.

While every key fits, the decisions are the exact ones; when keys outnumber the table, memory
stays at the budget and the least recently used keys are forgotten."""
import os

import pytest

from conftest import assert_usage_error, run_measured

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "traces")
SPECS = [
    "token-bucket:rate=10/s,burst=5",
    "gcra:rate=7/s,burst=3",
    "leaky-bucket:rate=10/s,burst=5,delay=2",
    "fixed-window:limit=4,window=1s",
    "sliding-window:limit=4,window=1s",
    "smooth-bursty:rate=5/s",
    "smooth-warmup:rate=10/s,warmup=2s",
    "queue:rate=10/s",
]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("trace", ["multikey.csv", "poisson_r10.csv", "costs.csv"])
def test_a_zone_that_holds_every_key_decides_exactly_as_unbounded_state(replay, spec, trace):
    with open(os.path.join(GOLDEN, trace), "rb") as f:
        data = f.read()
    exact = replay(data, "--limit", spec)
    zoned = replay(data, "--limit", spec, "--zone", "1MiB")
    assert exact.returncode == 0 and zoned.returncode == 0, zoned.stderr
    assert zoned.stdout == exact.stdout


def test_zone_with_several_limits_still_charges_none_on_a_denial(decide):
    # gcra 1/s burst 2 (3 at once) and a fixed window of 2 per second. At t=0 the window denies
    # the 3rd request; had it charged the gcra, its TAT would be 3 s and only one request could
    # pass at t=1 s. Uncharged (TAT 2 s), two pass: 1 s + 1 s - 3 s <= 1 s, then 2 s <= 1 s no.
    trace = "0,a\n0,a\n0,a\n1000000,a\n1000000,a\n"
    rows = decide(trace, "--limit", "gcra:rate=1/s,burst=2", "--limit",
                  "fixed-window:limit=2,window=1s", "--zone", "64KiB")
    assert [r[3] for r in rows] == [1, 1, 0, 1, 1]


@pytest.mark.parametrize("zone,problem", [
    ("12q", "unknown unit"),
    ("MiB", "bytes"),
    ("64", "below one bucket"),
    ("99999999999999999999999", "too large"),
])
def test_a_bad_zone_is_refused_naming_it(replay, zone, problem):
    p = replay("0,a\n", "--limit", "gcra:rate=1/s,burst=0", "--zone", zone)
    assert_usage_error(p, "--zone", problem)


def test_sliding_log_cannot_be_bounded_by_a_zone(replay):
    p = replay("0,a\n", "--limit", "sliding-log:limit=1,window=1s", "--zone", "1MiB")
    assert_usage_error(p, "--zone", "sliding-window")


def write_flood(path, keys):
    # one-shot keys, one line per us of virtual time, and a client every 1000 lines
    with open(path, "w") as f:
        for i in range(keys):
            f.write(f"{i},bot-{i}\n")
            if i % 1000 == 0:
                f.write(f"{i},client\n")
    return path


def test_a_million_distinct_keys_through_a_1mib_zone_stay_within_the_budget(sluice_bin,
                                                                            tmp_path):
    # gcra 1/s, no burst. The run spans 1 s of virtual time, so the client passes exactly once
    # however many bots push through the 1 MiB table. Peak memory with 1M keys is that with
    # 100k keys (the table is full either way), while without --zone it grows with the keys.
    # (A child's peak RSS includes what it inherited before exec, hence the comparisons.)
    with open(sluice_bin, "rb") as f:
        if b"__asan_init" in f.read():
            pytest.skip("AddressSanitizer's quarantine keeps freed memory resident: RSS says "
                        "nothing about the table's budget in a sanitizer build")
    spec = ("--limit", "gcra:rate=1/s,burst=0")
    out = tmp_path / "out.csv"
    big = write_flood(tmp_path / "big.csv", 1_000_000)
    rc, zoned_big = run_measured(sluice_bin, big, out, *spec, "--zone", "1MiB")
    assert rc == 0
    client = [l for l in out.read_bytes().split(b"\n") if b",client," in l]
    assert len(client) == 1000
    assert sum(int(l.split(b",")[3]) for l in client) == 1
    rc, zoned_small = run_measured(sluice_bin, write_flood(tmp_path / "small.csv", 100_000), out,
                                   *spec, "--zone", "1MiB")
    assert rc == 0
    rc, unbounded_big = run_measured(sluice_bin, big, out, *spec)
    assert rc == 0
    assert zoned_big < zoned_small + 2 * 1024, (zoned_small, zoned_big)
    assert unbounded_big > zoned_big + 30 * 1024, (zoned_big, unbounded_big)
