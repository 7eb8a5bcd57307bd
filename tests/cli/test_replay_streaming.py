"""Replay streams: for a fixed set of keys, memory does not grow with the trace length."""
import os
import subprocess

import pytest

from conftest import run_measured

KEYS = 100
MAX_RSS_KB = 100 * 1024


def write_trace(path, lines):
    # 100 keys, non-decreasing time (3 us steps), costs 1..3
    with open(path, "w") as f:
        f.writelines(f"{i * 3},k{i % KEYS},{1 + i % 3}\n" for i in range(lines))
    return path


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("stream")
    return {n: write_trace(d / f"t{n}.csv", n) for n in (200_000, 2_000_000)}


# A bound on the release binary's memory: a sanitizer's shadow memory and quarantine are not
# sluice's (scripts/run-sanitized-tests.sh sets SLUICE_SANITIZER).
@pytest.mark.skipif(bool(os.environ.get("SLUICE_SANITIZER")),
                    reason="RSS bounds hold for the release binary, not under a sanitizer")
@pytest.mark.parametrize("spec", [
    ["--limit", "token-bucket:rate=10/s,burst=20"],
    ["--limit", "sliding-log:limit=50,window=1s"],
    ["--limit", "leaky-bucket:rate=10/s,burst=5", "--limit", "gcra:rate=100/s,burst=10"],
    ["--limit", "smooth-warmup:rate=10/s,warmup=1s", "--mode", "wait"],
], ids=["token-bucket", "sliding-log", "leaky+gcra", "smooth-warmup-wait"])
def test_two_million_lines_with_100_keys_run_in_bounded_memory(sluice_bin, traces, tmp_path, spec):
    out = tmp_path / "out.csv"
    rc_small, rss_small = run_measured(sluice_bin, traces[200_000], out, *spec)
    rc, rss = run_measured(sluice_bin, traces[2_000_000], out, *spec)
    assert (rc_small, rc) == (0, 0)
    assert rss < MAX_RSS_KB, f"max RSS {rss} KB"
    assert rss < rss_small + 10 * 1024, f"RSS grew with the trace: {rss_small} KB -> {rss} KB"
    with open(out, "rb") as f:
        data = f.read()
    assert data.count(b"\n") == 2_000_000
    assert data.endswith(b"\n") and data[data.rindex(b"\n", 0, -1) + 1:].startswith(b"5999997,k99,")
