"""`sluice replay --store redis-cluster://...` against a real three-master Redis Cluster: the
trace's keys spread over the slots of all masters (each trace key's limits share one hash tag,
so one script decides them together), and the output must be identical to `--store local`
for golden entries of every algorithm, several limits at once, any live seed, and while a
slot holding busy keys is resharded by hand under the replay's traffic (ASK, TRYAGAIN, MOVED)."""
import collections
import os
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replay_support import (StreamedReplay, compare, compare_all, family,  # noqa: E402
                            first_differences, long_trace, manifest, replay)
from integration_support import free_port  # noqa: E402  (on the path now)


def subset():
    """Per algorithm: its first entry on the multi-key trace (keys on several masters) and
    its first in wait mode, or else on the costs trace."""
    chosen = collections.OrderedDict()
    for e in manifest():
        f = family(e.args)
        picks = chosen.setdefault(f, {})
        if e.trace.endswith("multikey.csv"):
            picks.setdefault("multikey", e)
        if "wait" in e.args:
            picks.setdefault("other", e)
        elif e.trace.endswith("costs.csv"):
            picks.setdefault("costs", e)
    cases = []
    for f, picks in chosen.items():
        second = picks.get("other") or picks.get("costs")
        cases += [(f, e) for e in (picks.get("multikey"), second) if e is not None]
    return cases


SUBSET = subset()
TRACES = os.path.dirname(manifest()[0].trace)
MULTIKEY = os.path.join(TRACES, "multikey.csv")


def test_the_multikey_trace_spreads_over_every_master(redis_cluster):
    with open(MULTIKEY, "rb") as f:
        keys = {line.split(b",")[1].decode() for line in f
                if line.strip() and not line.startswith(b"#")}
    owners = {redis_cluster.owner(redis_cluster.keyslot("k" + k)) for k in keys}
    assert owners == {0, 1, 2}, f"the multikey trace's keys sit on masters {owners} only"


@pytest.mark.parametrize("algorithm", sorted({f for f, _ in SUBSET}))
def test_golden_entries_decide_through_the_cluster_as_locally(redis_cluster, algorithm):
    cases = [(e.name, e.args, e.trace) for f, e in SUBSET if f == algorithm]
    failures = compare_all(cases, redis_cluster.url())
    assert not failures, "\n".join(failures)


def test_several_limits_all_must_pass_through_the_cluster_as_locally(redis_cluster):
    specs = [["--limit", "token-bucket:rate=10/s,burst=5",
              "--limit", "fixed-window:limit=5,window=1s"],
             ["--limit", "gcra:rate=10/s,burst=5",
              "--limit", "sliding-window:limit=7,window=500ms",
              "--limit", "leaky-bucket:rate=5/s,burst=5"]]
    cases = [(f"{' '.join(a)} on {t}", a, os.path.join(TRACES, t))
             for a in specs for t in ("multikey.csv", "costs.csv")]
    failures = compare_all(cases, redis_cluster.url())
    assert not failures, "\n".join(failures)


def test_one_seed_finds_the_whole_cluster(redis_cluster):
    third = redis_cluster.nodes[2].port
    failure = compare(["--limit", "gcra:rate=10/s,burst=5"], MULTIKEY,
                      f"redis-cluster://127.0.0.1:{third}")
    assert failure is None, failure


def test_a_dead_first_seed_is_passed_over_for_a_live_one(redis_cluster):
    seeds = f"127.0.0.1:{free_port()},127.0.0.1:{redis_cluster.nodes[2].port}"
    failure = compare(["--limit", "gcra:rate=10/s,burst=5"], MULTIKEY,
                      f"redis-cluster://{seeds}")
    assert failure is None, failure


# ------------------------------------------------------------------ resharding under traffic

RESHARD_ARGS = ["--limit", "token-bucket:rate=10/s,burst=5",
                "--limit", "sliding-log:limit=8,window=1s"]


def asking_calls(node):
    return node.client().info("commandstats").get("cmdstat_asking", {}).get("calls", 0)


def test_resharding_a_busy_slot_under_traffic_changes_no_decision(redis_cluster, tmp_path):
    trace = long_trace(lines=50_000, keys=300, seed=50_000, day_gaps=0, hot=8)
    cluster = redis_cluster
    # Three slots of busy keys, each moved to the next master, preferring slots that hold
    # two trace keys (one script call decides a slot's requests of a block together). A trace
    # key's states are `...{k<KEY>}:<limit>`, two per key here, moved one per MIGRATE, so the
    # script meets the slot half-moved (TRYAGAIN) as well as moved (ASK, then MOVED).
    by_slot = collections.defaultdict(list)
    for key in [f"hot{i}" for i in range(8)] + [f"u{i}" for i in range(300)]:
        by_slot[cluster.keyslot("k" + key)].append(key)
    slots = sorted(by_slot, key=lambda s: (-len(by_slot[s]), not by_slot[s][0].startswith("hot"),
                                           s))[:3]
    assert any(len(by_slot[s]) > 1 for s in slots), "no slot holds two trace keys"
    moves = [(slot, (cluster.owner(slot) + 1) % cluster.MASTERS) for slot in slots]
    asking_before = sum(asking_calls(n) for n in cluster.nodes)

    run = StreamedReplay(RESHARD_ARGS, cluster.url(), tmp_path)
    moved = threading.Event()
    fed_when_moved = []

    def feed():
        # Paced while the slots move (the replay decides 64 KiB of trace at a time), then the
        # rest at once.
        for at in range(0, len(trace), 8192):
            if not moved.is_set():
                time.sleep(0.04)
            if not run.feed(trace[at:at + 8192]):
                return

    feeder = threading.Thread(target=feed, daemon=True)
    try:
        feeder.start()
        time.sleep(0.3)  # traffic first
        keys_moved = 0
        for slot, to in moves:
            keys_moved += cluster.move_slot(slot, to, pause=0.15, batch=1)
        fed_when_moved.append(run.fed)
        moved.set()
        feeder.join(timeout=30)
        rc, out, err = run.finish(timeout=30)
    finally:
        moved.set()
        run.kill()

    assert fed_when_moved[0] < len(trace), "the trace ran out before the slots had moved"
    assert keys_moved > 0, "the moved slots held none of the replay's states"
    for slot, to in moves:
        assert cluster.owner_everywhere(slot) == to
    local = replay(RESHARD_ARGS, trace)
    assert (rc, err) == (0, b""), err
    assert out == local.stdout, first_differences(local.stdout, out)
    # The replay met a slot in migration and followed the ASK redirection.
    assert sum(asking_calls(n) for n in cluster.nodes) > asking_before


def test_a_first_request_in_a_slot_being_migrated_waits_for_the_move(redis_cluster, tmp_path):
    # A trace key's states (one per limit) do not exist yet anywhere: the source answers ASK,
    # the importing node TRYAGAIN (a multi-key script whose keys are missing), until the slot
    # has moved; the replay must retry within its timeout rather than give up.
    cluster = redis_cluster
    key = f"fresh{time.monotonic_ns()}"
    slot = cluster.keyslot("k" + key)
    to = (cluster.owner(slot) + 1) % cluster.MASTERS
    trace = f"0,{key}\n0,{key}\n1000,{key},2\n".encode()
    run = StreamedReplay(RESHARD_ARGS, cluster.url(), tmp_path)
    cluster.begin_migration(slot, to)
    try:
        run.feed(trace)
        run.proc.stdin.close()
        time.sleep(0.5)
        still_running = run.proc.poll() is None
    finally:
        cluster.end_migration(slot, to)
    try:
        rc, out, err = run.finish(timeout=30)
    finally:
        run.kill()
    local = replay(RESHARD_ARGS, trace)
    assert (rc, err) == (0, b""), err
    assert out == local.stdout, first_differences(local.stdout, out)
    assert still_running
