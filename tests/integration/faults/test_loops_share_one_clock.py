"""Several event loops deciding the same key: each loop decides with the time it read at the
start of its pass (nginx's cached time), so a loop can bring a time older than one another loop
has just decided the key at. Under wrk on two loops, passes take milliseconds and that gap
exceeds a tight tolerance. A rule far above the load must still never refuse (defect 3 of the
second hardening round: a GCRA of 10M/s with a 1 ms tolerance refused 1.5% of requests at
0.9% of its rate; each table's time now never runs back, core of nginx's limit_req rule).

Every algorithm a route can use is on one route, each keyed by one constant key (the hottest
case: every request of both loops meets the same state), at about 100x the offered load with a
tolerance of 1 ms or so."""
from wrk_support import WrkRun

RULES = {
    # 10M/s: wrk offers 20k-100k/s here, i.e. 0.2-1% of it. Tolerances: 1 ms of the rate.
    "tb": "limit: token-bucket:rate=10000000/s,burst=10000",
    "gcra": "limit: gcra:rate=10000000/s,burst=10000",
    # nginx's ms clock: every request of one millisecond adds 1 with no leak, so the burst must
    # hold one millisecond's arrivals (under 100 here) whatever the clocks do.
    "leaky": "limit: leaky-bucket:rate=10000000/s,burst=1000,nodelay=1",
    "fixed": "limit: fixed-window:limit=10000,window=1ms",
    "sliding": "limit: sliding-window:limit=10000,window=1ms",
    # Guava's and Sentinel's pacing delay a request that comes less than 1/rate after the last
    # one: allowed to wait up to 1 ms (100 ns at this rate is what they need).
    "bursty": "{limit: smooth-bursty:rate=10000000/s,max-burst=1ms, action: delay, max_wait: 1ms}",
    "warmup": "{limit: smooth-warmup:rate=10000000/s,warmup=1ms, action: delay, max_wait: 1ms}",
    "queue": "limit: queue:rate=10000000/s,max-wait=1ms",
    "inflight": "limit: concurrency:limit=5000",
}


def rule_lines():
    out = []
    for name, body in RULES.items():
        if body.startswith("{"):
            fields = body[1:-1].split(", ")
            out.append(f"  {name}:")
            out += [f"    {f}" for f in fields]
        else:
            out.append(f"  {name}:\n    {body}")
        out.append("    key: const:all")
    return "\n".join(out)


CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 2
routes:
  - name: all
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [%s]
rules:
%s
""" % (", ".join(RULES), rule_lines().replace("{", "{{").replace("}", "}}"))


def test_no_algorithm_refuses_a_load_far_below_its_rate_from_two_loops(sluice):
    s = sluice(CONFIG)
    run = WrkRun(s.url + "/", seconds=6, connections=50).result()
    denied = {rule: s.metric("sluice_rule_requests_total", rule=rule, outcome="denied")
              for rule in RULES}
    assert run.requests > 20_000, run.report  # enough load for loop passes to overlap
    assert denied == {rule: 0 for rule in RULES}, (denied, run.statuses)
    assert run.statuses == {200: run.requests}, run.statuses
