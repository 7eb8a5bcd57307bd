"""Redis hung (SIGSTOP) and then dead (SIGKILL) under full load: wrk at full speed on each
failure policy's route (test_failure_policies.py's config: fail-open, fail-closed, local at
half the rate). Through each fault's onset and its end no request fails and none waits much
past redis.timeout (50 ms); once the breaker is open, each route answers by its policy; after
SIGCONT and after the restart, decisions come from Redis again within a second."""
import os
import signal
import sys
import time

from test_failure_policies import (CONFIG, LOCAL_BURST, LOCAL_RATE, TIMEOUT_S, redis_answers,
                                   wait_for_redis_answers)

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from wrk_support import WrkRun  # noqa: E402

ROUTES = ("open", "closed", "local")
# A request that waited on the hung Redis waits out redis.timeout once; on two cores shared by
# wrk, sluice and redis-server, scheduling can add tens of milliseconds. One that waited on a
# dead Redis without a timeout (a connect, TCP retransmissions) would take seconds.
MAX_LATENCY_S = TIMEOUT_S + 0.45


def load(g, seconds):
    return {route: WrkRun(f"{g.url}/{route}", seconds=seconds, connections=4)
            for route in ROUTES}


def results(runs):
    return {route: run.result() for route, run in runs.items()}


def check_onset(fault, runs):
    for route, run in runs.items():
        print(f"{fault} onset /{route:6}: {run.requests} requests {run.statuses}, p99 "
              f"{run.latency_p99 * 1e3:.1f} ms, max {run.latency_max * 1e3:.1f} ms")
        assert run.errors == {"connect": 0, "read": 0, "write": 0, "timeout": 0}, run.report
        assert set(run.statuses) <= {200, 429}, (route, run.statuses)
        assert run.latency_max < MAX_LATENCY_S, (route, run.latency_max)


def check_policies(fault, runs):
    for route, run in runs.items():
        print(f"{fault} outage /{route:6}: {run.requests} requests {run.statuses}, max "
              f"{run.latency_max * 1e3:.1f} ms")
        assert run.requests > 100, "too little load to mean anything"
        assert run.latency_max < MAX_LATENCY_S
    assert runs["open"].statuses == {200: runs["open"].requests}, "fail-open allows all"
    assert runs["closed"].statuses == {429: runs["closed"].requests}, "fail-closed denies all"
    local = runs["local"].statuses
    # The local limiter at half the shared rate (25/s, burst 3) over the 1 s run: about 28 of
    # thousands admitted, not the full rate's 55 nor none.
    assert set(local) == {200, 429}
    assert 0.5 * LOCAL_RATE <= local[200] <= 1.25 * LOCAL_RATE + LOCAL_BURST + 5, local


def test_redis_stopped_then_killed_under_full_load(redis_server, gateways):
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    print()
    for fault in ("SIGSTOP", "SIGKILL"):
        onset = load(g, seconds=2)
        time.sleep(0.7)
        if fault == "SIGSTOP":
            rs.proc.send_signal(signal.SIGSTOP)
        else:
            rs.kill()
        check_onset(fault, results(onset))
        check_policies(fault, results(load(g, seconds=1)))  # the breaker is open by now
        recovering = load(g, seconds=2)
        time.sleep(0.3)
        before = redis_answers(g)
        if fault == "SIGSTOP":
            resumed = time.monotonic()
            rs.proc.send_signal(signal.SIGCONT)
        else:
            rs.restart()
            resumed = time.monotonic()
        recovery = wait_for_redis_answers(g, before, resumed)
        print(f"{fault}: decisions from Redis again {recovery * 1e3:.0f} ms after it was back")
        assert recovery <= 1.0
        check_onset(f"{fault} end", results(recovering))
    assert g.metric("sluice_redis_breaker_opens_total") >= 2
