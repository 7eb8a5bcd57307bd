#!/usr/bin/env python3
"""One hot key over its limit, kept in Redis: Redis calls per decision with the local refusal
cache (`redis.cache_denials: 1s`, the default) and without it (`0s`), in the same run.

    /usr/bin/python3 bench/redis/hot_key.py --build build/release      (make bench-hot-key)

One redis-server (no persistence) and two `sluice serve` (workers: 1), identical but for
`cache_denials`, on free 127.0.0.1 ports. Their one route answers 200 by itself under the rule
`gcra:rate=100/s,burst=10` keyed by const:hot, so that almost every request of the load is
refused: the hot key of a client far over its quota. Each gateway in turn gets `wrk -t1 -c50
-dDs` (rounds interleaved, medians kept). Redis calls per decision are the `cmdstat_evalsha`
calls (INFO commandstats) over the run divided by the requests wrk completed. Prints a markdown
table; writes nothing.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import decision, evalsha_calls, metric, wrk  # noqa: E402  (bench/redis/run.py)

LIMIT = "gcra:rate=100/s,burst=10"
CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: redis://127.0.0.1:{redis}
  timeout: 50ms
  cache_denials: {cache}
routes:
  - name: hot
    match: {{path_prefix: /}}
    respond: {{status: 200}}
    rules: [hot]
rules:
  hot:
    limit: "{limit}"
    key: const:hot
    storage: redis
    on_failure: fail-closed
"""
CACHES = ["1s", "0s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build/release")
    ap.add_argument("--duration", type=int, default=5, help="seconds per wrk run (default 5)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--connections", type=int, default=50)
    opts = ap.parse_args()
    sluice = os.path.join(opts.build, "sluice")
    if not os.access(sluice, os.X_OK):
        sys.exit(f"no sluice binary at {sluice}: build first (make build)")
    procs = []
    tmp = tempfile.mkdtemp(prefix="sluice-bench-hot-")
    try:
        redis_port = decision.free_port()
        procs.append(subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", tmp],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL))
        decision.wait_port(redis_port, procs[-1], "redis-server")
        gateways = {}
        for cache in CACHES:
            gateway, admin = decision.free_port(), decision.free_port()
            config = os.path.join(tmp, f"sluice-{cache}.yaml")
            with open(config, "w") as f:
                f.write(CONFIG.format(gateway=gateway, admin=admin, redis=redis_port,
                                      cache=cache, limit=LIMIT))
            procs.append(subprocess.Popen([sluice, "serve", "--config", config],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          stdin=subprocess.DEVNULL))
            decision.wait_port(gateway, procs[-1], "sluice")
            gateways[cache] = (gateway, admin, procs[-1].pid)
        runs = {cache: [] for cache in CACHES}
        for _ in range(opts.rounds):
            for cache in CACHES:
                gateway, admin, pid = gateways[cache]
                calls = evalsha_calls(redis_port)
                cpu = decision.cpu_seconds(pid)
                done, rps, p50, p99, refused, errors = wrk(f"http://127.0.0.1:{gateway}/",
                                                           opts.duration, opts.connections)
                if errors:
                    sys.exit(f"cache_denials {cache}: socket errors {errors!r}")
                per = (evalsha_calls(redis_port) - calls) / done
                cpu_us = (decision.cpu_seconds(pid) - cpu) * 1e6 / done
                runs[cache].append((rps, per, refused / done, cpu_us, p99))
                print(f"  cache_denials {cache}: {rps:,.0f} req/s, {per:.4f} EVALSHA/decision, "
                      f"{refused / done:.1%} refused, {cpu_us:.1f} us CPU/req, p99 {p99}",
                      file=sys.stderr, flush=True)
        print(f"\nOne hot key, {time.strftime('%Y-%m-%d')}: rule `{LIMIT}` kept in Redis, "
              f"key const:hot; `wrk -t1 -c{opts.connections} -d{opts.duration}s` against each "
              f"gateway (workers: 1), {opts.rounds} interleaved rounds, medians; "
              f"{os.cpu_count()} cores shared by wrk, both gateways and redis-server; 1-minute "
              f"load {os.getloadavg()[0]:.1f} at the end.\n")
        print("| `redis.cache_denials` | decisions/s | Redis calls (EVALSHA) per decision | "
              "refused | sluice CPU µs/decision | p99 (wrk) |")
        print("|---|---:|---:|---:|---:|---:|")
        for cache in CACHES:
            r = runs[cache]
            med = lambda i: statistics.median(x[i] for x in r)  # noqa: E731
            p99 = sorted(x[4] for x in r)[len(r) // 2]
            print(f"| `{cache}` | {med(0):,.0f} | {med(1):.4f} | {med(2):.1%} | {med(3):.1f} | "
                  f"{p99} |")
        cached = metric(gateways["1s"][1], "sluice_redis_answers_total")
        print(f"\nAnswers of the `1s` gateway (sluice_redis_answers_total, all sources): "
              f"{cached:,.0f}.")
    finally:
        for p in reversed(procs):
            decision.stop(p)


if __name__ == "__main__":
    main()
