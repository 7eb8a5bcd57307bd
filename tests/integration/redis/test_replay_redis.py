"""`sluice replay --store redis://HOST:PORT` against a real standalone redis-server: the trace
decided by the Lua script must give output identical to `--store local`, all seven columns,
for every golden MANIFEST entry, several limits at once (all must pass, a denial charges none),
a long many-key trace with gaps of days, and bad input (the same decisions, then the same
error). Virtual time is not Redis's: a state survives a real pause of the replay. A store that
cannot answer ends the run quickly with one line naming it; a script flushed mid-run is loaded
again without a trace of it in the output; a Redis killed mid-run ends it after the decisions
already made."""
import collections
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replay_support import (StreamedReplay, compare, compare_all,  # noqa: E402
                            compare_all_by_name, family, first_differences, long_trace,
                            manifest, replay)
from integration_support import free_port, wait_until  # noqa: E402  (on the path now)

ENTRIES = manifest()
BY_FAMILY = collections.defaultdict(list)
for _e in ENTRIES:
    BY_FAMILY[family(_e.args)].append(_e)
TRACES = os.path.dirname(ENTRIES[0].trace)


def evalsha_calls(server):
    return server.client().info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)


# ------------------------------------------------------------------ the golden entries

@pytest.mark.parametrize("algorithm", sorted(BY_FAMILY))
def test_every_golden_entry_decides_through_redis_as_locally(redis_server, algorithm):
    cases = [(e.name, e.args, e.trace) for e in BY_FAMILY[algorithm]]
    failures = compare_all(cases, redis_server.url)
    assert not failures, f"{len(failures)} of {len(cases)} {algorithm} entries disagree:\n" + \
        "\n".join(failures)


# ------------------------------------------------------------------ several limits at once

COMBINATIONS = {
    "token-bucket+fixed-window": ["--limit", "token-bucket:rate=10/s,burst=5",
                                  "--limit", "fixed-window:limit=5,window=1s"],
    "gcra+sliding-window": ["--limit", "gcra:rate=10/s,burst=5",
                            "--limit", "sliding-window:limit=7,window=500ms"],
    "leaky-bucket+queue": ["--limit", "leaky-bucket:rate=5/s,burst=5",
                           "--limit", "queue:rate=10/s"],
    "leaky-bucket+queue-wait": ["--limit", "leaky-bucket:rate=5/s,burst=5,delay=2",
                                "--limit", "queue:rate=8/s", "--mode", "wait"],
    "token-bucket+gcra-wait-250ms": ["--limit", "token-bucket:rate=4/s,burst=2",
                                     "--limit", "gcra:rate=10/s,burst=5",
                                     "--mode", "wait", "--max-wait", "250ms"],
    "sliding-log+smooth-bursty+smooth-warmup": [
        "--limit", "sliding-log:limit=4,window=1s", "--limit", "smooth-bursty:rate=5/s",
        "--limit", "smooth-warmup:rate=8/s,warmup=1s"],
}


def singles(args):
    """`args` with one --limit at a time (the other options kept)."""
    limits, rest, i = [], [], 0
    while i < len(args):
        if args[i] == "--limit":
            limits.append(args[i + 1])
            i += 2
        else:
            rest.append(args[i])
            i += 1
    return [["--limit", spec, *rest] for spec in limits]


@pytest.mark.parametrize("trace", ["multikey.csv", "costs.csv"])
@pytest.mark.parametrize("name", sorted(COMBINATIONS))
def test_several_limits_all_must_pass_through_redis_as_locally(redis_server, name, trace):
    args, path = COMBINATIONS[name], os.path.join(TRACES, trace)
    combined = replay(args, path)
    assert combined.returncode == 0, combined.stderr
    # The trace must make the combination matter: no single limit decides it alone.
    for single in singles(args):
        if replay(single, path).stdout == combined.stdout:
            pytest.fail(f"{trace} is decided by {single} alone; the combination is not exercised")
    failure = compare(args, path, redis_server.url, f"{name} on {trace}")
    assert failure is None, failure


# ------------------------------------------------------------------ a long trace

LONG_SPECS = {
    "token-bucket": ["--limit", "token-bucket:rate=10/s,burst=20"],
    "token-bucket-wait": ["--limit", "token-bucket:rate=10/s,burst=5", "--mode", "wait"],
    "gcra": ["--limit", "gcra:rate=10/s,burst=5"],
    "gcra-wait-250ms": ["--limit", "gcra:rate=10/s,burst=5", "--mode", "wait",
                        "--max-wait", "250ms"],
    "leaky-bucket": ["--limit", "leaky-bucket:rate=10/s,burst=5,delay=2"],
    "fixed-window": ["--limit", "fixed-window:limit=10,window=1s"],
    "sliding-log": ["--limit", "sliding-log:limit=10,window=1s"],
    "sliding-window": ["--limit", "sliding-window:limit=10,window=1s"],
    "smooth-bursty-wait": ["--limit", "smooth-bursty:rate=10/s,max-burst=2s", "--mode", "wait"],
    "smooth-warmup": ["--limit", "smooth-warmup:rate=10/s,warmup=1s"],
    "queue": ["--limit", "queue:rate=10/s,max-wait=1s"],
    "token-bucket+sliding-log+leaky-bucket": [
        "--limit", "token-bucket:rate=10/s,burst=5", "--limit", "sliding-log:limit=12,window=1s",
        "--limit", "leaky-bucket:rate=12/s,burst=10,nodelay=1"],
}


@pytest.fixture(scope="module")
def long_trace_results(redis_server, tmp_path_factory):
    """{spec name: None or the disagreement} for the long trace, all specs run JOBS at a time."""
    path = tmp_path_factory.mktemp("long") / "long.csv"
    path.write_bytes(long_trace(lines=20_000, keys=400, seed=20_000))
    names = sorted(LONG_SPECS)
    failures = compare_all_by_name([(n, LONG_SPECS[n], str(path)) for n in names],
                                   redis_server.url)
    return failures


@pytest.mark.parametrize("name", sorted(LONG_SPECS))
def test_long_many_key_trace_with_gaps_of_days_decides_through_redis_as_locally(
        long_trace_results, name):
    failure = long_trace_results[name]
    assert failure is None, failure


# ------------------------------------------------------------------ errors

TB = ["--limit", "token-bucket:rate=10/s,burst=5"]


def test_unreachable_store_ends_the_run_quickly_with_one_line_naming_it():
    port = free_port()  # nothing listens there
    p = replay(TB, b"0,a\n1,b\n", f"redis://127.0.0.1:{port}", timeout=20)
    lines = p.stderr.decode().splitlines()
    assert p.returncode > 0, (p.returncode, p.stderr)
    assert len(lines) == 1 and "--store" in lines[0] and f"127.0.0.1:{port}" in lines[0], \
        p.stderr
    assert p.stdout == b""


def test_unreachable_cluster_seeds_end_the_run_quickly_with_one_line_naming_the_store():
    seeds = f"127.0.0.1:{free_port()},127.0.0.1:{free_port()}"
    p = replay(TB, b"0,a\n", f"redis-cluster://{seeds}", timeout=20)
    lines = p.stderr.decode().splitlines()
    assert p.returncode > 0, (p.returncode, p.stderr)
    assert len(lines) == 1 and "--store" in lines[0], p.stderr
    assert p.stdout == b""


BAD_URLS = [
    "redis://",
    "redis://127.0.0.1:6379/0",
    "redis://user@127.0.0.1:6379",
    "redis://[::1",
    "redis://127.0.0.1:",
    "redis://:6379",
    "redis://127.0.0.1:port",
    "redis://127.0.0.1:70000",
    "redis://127.0.0.1:0",
    "redis://127.0.0.1:6379,127.0.0.1:6380",
    "redis-cluster://",
    "redis-cluster://127.0.0.1:6379,",
    "rediss://127.0.0.1:6379",
    "memcached://127.0.0.1:11211",
    "127.0.0.1:6379",
    "",
]


@pytest.mark.parametrize("url", BAD_URLS)
def test_bad_store_url_exits_2_naming_the_store(url):
    p = replay(TB, b"0,a\n", url, timeout=20)
    lines = p.stderr.decode().splitlines()
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert len(lines) == 1 and "--store" in lines[0], p.stderr
    assert p.stdout == b""


def test_zone_with_a_redis_store_exits_2(redis_server):
    p = replay([*TB, "--zone", "1MiB"], b"0,a\n", redis_server.url, timeout=20)
    lines = p.stderr.decode().splitlines()
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert len(lines) == 1 and "--zone" in lines[0], p.stderr
    assert p.stdout == b""


def good_lines(n, start=0):
    return "".join(f"{start + i * 1000},k{i % 7},{1 + i % 3}\n" for i in range(n))


# A bad line inside the first block of decisions, and one after two full blocks (the Redis
# path decides 512 lines per round); comments and blank lines count as lines.
BAD_TRACES = {
    "not-a-number-on-line-7": "# head\n\n" + good_lines(4) + "x,a\n" + good_lines(3, 10 ** 6),
    "time-going-back-on-line-1203": good_lines(1200) + "\n# more\n5,a\n" + good_lines(5, 10 ** 9),
    "cost-0-on-line-1025": good_lines(1024) + "2000000,a,0\n" + good_lines(5, 10 ** 9),
    "missing-key-on-line-600": good_lines(599) + "700000\n" + good_lines(5, 10 ** 9),
}


@pytest.mark.parametrize("name", sorted(BAD_TRACES))
def test_bad_line_writes_the_decisions_before_it_then_exits_2_as_locally(redis_server, name):
    trace = BAD_TRACES[name].encode()
    args = ["--limit", "gcra:rate=100/s,burst=3", "--limit", "fixed-window:limit=2,window=1s"]
    local = replay(args, trace)
    remote = replay(args, trace, redis_server.url)
    assert local.returncode == 2 and local.stdout, local.stderr
    assert f": line {name.rsplit('-', 1)[1]}: ".encode() in local.stderr, local.stderr
    assert (remote.returncode, remote.stderr) == (local.returncode, local.stderr)
    assert remote.stdout == local.stdout, first_differences(local.stdout, remote.stdout)


# ------------------------------------------------------------------ Redis going away

STREAM_ARGS = ["--limit", "token-bucket:rate=10/s,burst=5",
               "--limit", "sliding-log:limit=8,window=1s"]


def test_script_flushed_mid_replay_is_loaded_again_without_changing_a_decision(
        own_redis_server, tmp_path):
    trace = long_trace(lines=30_000, keys=50, seed=7, day_gaps=1)
    first, rest = trace[:200_000], trace[200_000:]
    run = StreamedReplay(STREAM_ARGS, own_redis_server.url, tmp_path)
    try:
        assert run.feed(first)
        wait_until(lambda: evalsha_calls(own_redis_server) >= 2, timeout=15,
                   what="the replay to decide its first blocks")
        own_redis_server.cmd("SCRIPT FLUSH")
        before = evalsha_calls(own_redis_server)
        assert run.feed(rest)
        rc, out, err = run.finish()
    finally:
        run.kill()
    assert evalsha_calls(own_redis_server) > before
    local = replay(STREAM_ARGS, trace)
    assert (rc, err) == (0, b""), err
    assert out == local.stdout, first_differences(local.stdout, out)


def test_redis_killed_mid_replay_ends_it_with_one_line_after_the_decisions_made(
        own_redis_server, tmp_path):
    trace = long_trace(lines=30_000, keys=50, seed=8, day_gaps=1)
    run = StreamedReplay(STREAM_ARGS, own_redis_server.url, tmp_path)
    try:
        run.feed(trace[:200_000])
        # Two script calls: the first block's decisions are made (one call per block).
        wait_until(lambda: evalsha_calls(own_redis_server) >= 2, timeout=15,
                   what="the replay to decide its first blocks")
        own_redis_server.kill()
        run.feed(trace[200_000:])
        rc, out, err = run.finish(timeout=20)
    finally:
        run.kill()
    lines = err.decode().splitlines()
    assert rc > 0 and rc != 2, (rc, err)
    assert len(lines) == 1 and "--store" in lines[0], err
    local = replay(STREAM_ARGS, trace).stdout
    assert out and local.startswith(out) and out.endswith(b"\n"), \
        "the decisions written before Redis went away are not a prefix of the local ones"


def test_replay_through_a_restarted_redis_decides_as_locally(own_redis_server):
    path = os.path.join(TRACES, "multikey.csv")
    assert compare(TB, path, own_redis_server.url) is None
    own_redis_server.restart()
    failure = compare(TB, path, own_redis_server.url)
    assert failure is None, failure


def test_a_state_outlives_a_real_pause_between_two_requests_of_its_key(own_redis_server, tmp_path):
    # Virtual time is not Redis's: a key's state must not expire because the replay is slow in
    # real time. Key "a" empties its bucket at t=0 and is asked again 1 ms later in virtual
    # time, after a real pause longer than the 200 ms the bucket needs to refill.
    args = ["--limit", "token-bucket:rate=10/s,burst=2"]
    head = b"0,a\n0,a\n0,a\n" + b"".join(b"0,pad%d\n" % i for i in range(8000))  # > 64 KiB
    tail = b"1000,a\n"
    run = StreamedReplay(args, own_redis_server.url, tmp_path)
    try:
        assert run.feed(head)
        wait_until(lambda: evalsha_calls(own_redis_server) >= 1, timeout=15,
                   what="the replay to decide its first block")
        time.sleep(0.6)
        assert run.feed(tail)
        rc, out, err = run.finish()
    finally:
        run.kill()
    local = replay(args, head + tail)
    assert (rc, err) == (0, b""), err
    assert out.splitlines()[-1] == local.stdout.splitlines()[-1] == b"1000,a,1,0,0,0,99000", \
        first_differences(local.stdout, out)
