#!/usr/bin/env python3
"""Redis backend benchmark: what a decision on a rule kept in Redis costs the gateway and Redis,
exact and leased, beside the baseline of one EVALSHA per request (Spring Cloud Gateway's token
bucket as a Lua script, driven by redis-benchmark) and beside the same rule kept locally.

    /usr/bin/python3 bench/redis/run.py --build build/release

One redis-server (no persistence) and one `sluice serve` (workers: 1) on free 127.0.0.1 ports.
The gateway's routes answer 200 by themselves, each guarded by one rule whose limit is far
above the load (every request passes, so what is measured is the decision's cost):

- none:   no rule (the gateway's own cost);
- local:  token-bucket, storage: local;
- exact:  the same limit, storage: redis (every decision goes to Redis, batched per loop turn);
- leased: the same, storage: redis, lease: 100 (permits taken 100 at a time, spent locally).

Each is loaded with `wrk -t1 -cN -d5s` (N: --connections, 50 by default; 3 rounds, medians).
Redis commands per decision are the `cmdstat_evalsha` calls (INFO commandstats) over the run
divided by the requests wrk completed. The baseline, measured in each round, is
redis-benchmark `-c N -P 1` sending one EVALSHA of bench/decision/token_bucket.lua per request,
as bench/decision/run.py does. `--against OTHER_SLUICE` runs a second gateway (say main's
build) beside this one, interleaved round by round. Prints markdown tables; writes nothing.
"""
import argparse
import importlib.util
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DECISION = os.path.join(ROOT, "bench", "decision")


def load_decision_bench():
    """bench/decision/run.py as a module: its process helpers and its EVALSHA command."""
    spec = importlib.util.spec_from_file_location("decision_bench",
                                                  os.path.join(DECISION, "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


decision = load_decision_bench()

LIMIT = "token-bucket:rate=100000000/s,burst=100000000"
CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: redis://127.0.0.1:{redis}
  timeout: 50ms
routes:
  - name: none
    match: {{path_prefix: /none}}
    respond: {{status: 200}}
  - name: local
    match: {{path_prefix: /local}}
    respond: {{status: 200}}
    rules: [local]
  - name: exact
    match: {{path_prefix: /exact}}
    respond: {{status: 200}}
    rules: [exact]
  - name: leased
    match: {{path_prefix: /leased}}
    respond: {{status: 200}}
    rules: [leased]
rules:
  local:
    limit: {limit}
    key: const:global
    storage: local
  exact:
    limit: {limit}
    key: const:global
    storage: redis
    on_failure: fail-closed
  leased:
    limit: {limit}
    key: const:global
    storage: redis
    on_failure: fail-closed
    lease: {lease}
"""
# (route, what the table calls it)
MODES = [
    ("none", "no rule (the gateway alone)"),
    ("local", "local rule (storage: local)"),
    ("exact", "Redis rule, exact"),
    ("leased", "Redis rule, leased (lease: {lease})"),
]


def redis_info(port, section):
    out = subprocess.run(["redis-cli", "-p", str(port), "INFO", section], capture_output=True,
                         text=True, check=True, timeout=10).stdout
    return out


def evalsha_calls(port):
    """EVALSHA calls so far. (The TIME, GET and SET that commandstats also counts are the
    scripts' own calls, made inside those EVALSHAs.)"""
    m = re.search(r"^cmdstat_evalsha:calls=(\d+)", redis_info(port, "commandstats"), re.M)
    return int(m.group(1)) if m else 0


def metric(admin_port, name):
    text = urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics", timeout=5).read()
    total = 0.0
    for line in text.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def wrk(url, duration, connections):
    """(requests completed, requests/s, latency p50 and p99 as wrk prints them, non-2xx
    responses, socket errors) of one wrk run."""
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--latency", url],
                         capture_output=True, text=True, timeout=duration + 60, check=True).stdout
    done = int(re.search(r"(\d+) requests in", out).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1)
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return (done, rps, p50, p99, int(bad.group(1)) if bad else 0,
            errors.group(1) if errors else "")


def start_gateway(sluice, tmp, tag, redis_port, lease):
    """One `sluice serve` (workers: 1) of the config above: (process, gateway port, admin port)."""
    gateway_port, admin_port = decision.free_port(), decision.free_port()
    config = os.path.join(tmp, f"sluice-{tag}.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(gateway=gateway_port, admin=admin_port, redis=redis_port,
                              limit=LIMIT, lease=lease))
    log = open(os.path.join(tmp, f"sluice-{tag}.log"), "wb")
    proc = subprocess.Popen([sluice, "serve", "--config", config], stdout=subprocess.DEVNULL,
                            stderr=log, stdin=subprocess.DEVNULL)
    decision.wait_port(gateway_port, proc, f"sluice ({tag})")
    for route, _ in MODES:  # the first decision loads the script (NOSCRIPT, SCRIPT LOAD)
        for _ in range(3):
            urllib.request.urlopen(f"http://127.0.0.1:{gateway_port}/{route}", timeout=5).read()
    return proc, gateway_port, admin_port


def measure_route(url, duration, connections, redis_port, redis_proc, sluice_proc):
    """One wrk run: (req/s, EVALSHA per decision, sluice and redis CPU µs per decision,
    "p50 / p99")."""
    evalsha_before = evalsha_calls(redis_port)
    cpu_redis = decision.cpu_seconds(redis_proc.pid)
    cpu_sluice = decision.cpu_seconds(sluice_proc.pid)
    done, rps, p50, p99, bad, errors = wrk(url, duration, connections)
    evalsha = (evalsha_calls(redis_port) - evalsha_before) / done
    cpu_redis = decision.cpu_seconds(redis_proc.pid) - cpu_redis
    cpu_sluice = decision.cpu_seconds(sluice_proc.pid) - cpu_sluice
    if bad or errors:
        sys.exit(f"{url}: {bad} non-2xx responses, socket errors {errors!r}: the "
                 "measurement is not of passing decisions")
    return rps, evalsha, cpu_sluice * 1e6 / done, cpu_redis * 1e6 / done, f"{p50} / {p99}"


def measure_baseline(redis_port, redis_proc, requests, clients):
    """redis-benchmark sending one EVALSHA of the token bucket per request: (EVALSHA/s, calls per
    request, redis CPU µs per request)."""
    with open(os.path.join(DECISION, "token_bucket.lua")) as f:
        script = f.read()
    sha = subprocess.run(["redis-cli", "-p", str(redis_port), "SCRIPT", "LOAD", script],
                         capture_output=True, text=True, check=True).stdout.strip()
    args = [a.replace("{key}", "rl:bench").replace("{sha}", sha) for a in decision.EVALSHA]
    calls_before = evalsha_calls(redis_port)
    cpu_redis = decision.cpu_seconds(redis_proc.pid)
    rps = decision.bench_once(redis_port, args, requests, 1, False, clients)
    calls = evalsha_calls(redis_port) - calls_before
    cpu_redis = decision.cpu_seconds(redis_proc.pid) - cpu_redis
    return rps, calls / requests, cpu_redis * 1e6 / requests


def print_tables(opts, results, redis_version, gateways):
    """One markdown table per wrk -c: each mode of each gateway, then the baseline; `vs
    baseline` is the median over rounds of the ratio to that round's baseline."""
    load = os.getloadavg()[0]
    print()
    print(f"Redis backend, {time.strftime('%Y-%m-%d %H:%M')}: redis-server {redis_version} on "
          f"127.0.0.1 and one sluice (workers: 1) per gateway ({', '.join(gateways)}), "
          f"`wrk -t1 -cN -d{opts.duration}s` per route, {opts.repeat} interleaved rounds, "
          f"medians; a limit every request passes ({LIMIT}, key const:global). Baseline in each "
          f"round: redis-benchmark `-c N -P 1 -n {opts.baseline_requests}` sending one EVALSHA "
          f"of bench/decision/token_bucket.lua (Spring Cloud Gateway's token bucket) per "
          f"request. {os.cpu_count()} cores shared by all processes; 1-minute load {load:.1f} "
          f"at the end.")
    for c in opts.connections:
        base_runs = results[("baseline", c, "")]
        print()
        print(f"`-c{c}`:")
        print()
        print("| gateway | mode | decisions/s | vs baseline | EVALSHA per decision | "
              "latency p50 / p99 (wrk) | sluice CPU µs/decision | redis-server CPU "
              "µs/decision |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for tag in gateways:
            for route, title in MODES:
                if route not in opts.modes:
                    continue
                runs = results[(tag, c, route)]
                ratio = statistics.median(r[0] / b[0] for r, b in zip(runs, base_runs))
                med = statistics.median(r[0] for r in runs)
                rps, per, cpu_s, cpu_r, latency = min(runs, key=lambda r: abs(r[0] - med))
                print(f"| {tag} | {title.format(lease=opts.lease)} | {med:,.0f} | "
                      f"{ratio:.2f}x | {statistics.median(r[1] for r in runs):.4f} | "
                      f"{latency} | {statistics.median(r[2] for r in runs):.1f} | "
                      f"{statistics.median(r[3] for r in runs):.1f} |")
        print(f"| baseline | one EVALSHA per request (redis-benchmark `-c {c} -P 1`) | "
              f"{statistics.median(b[0] for b in base_runs):,.0f} | 1.00x | "
              f"{statistics.median(b[1] for b in base_runs):.4f} | – | – | "
              f"{statistics.median(b[2] for b in base_runs):.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"),
                    help="the build folder holding sluice (default build/release)")
    ap.add_argument("--against", default="",
                    help="another sluice binary (say main's) measured in the same run, "
                         "interleaved round by round with this one")
    ap.add_argument("--duration", type=int, default=5, help="seconds per wrk run (default 5)")
    ap.add_argument("--connections", default="50",
                    help="wrk -c and redis-benchmark -c, comma-separated (default 50)")
    ap.add_argument("--modes", default="none,local,exact,leased",
                    help="routes measured, comma-separated (default all four)")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds; medians kept")
    ap.add_argument("--lease", type=int, default=100, help="the leased rule's lease")
    ap.add_argument("--baseline-requests", type=int, default=200_000,
                    help="redis-benchmark -n for the EVALSHA baseline")
    ap.add_argument("--no-store-bench", action="store_true",
                    help="skip sluice_redis_store_bench (the backend without HTTP) at the end")
    opts = ap.parse_args()
    opts.connections = [int(c) for c in opts.connections.split(",")]
    opts.modes = opts.modes.split(",")
    sluice = os.path.join(opts.build, "sluice")
    gateways = {"this": sluice}
    if opts.against:
        gateways["against"] = opts.against
    for tag, path in gateways.items():
        if not os.access(path, os.X_OK):
            sys.exit(f"no sluice binary at {path}: build first (make build)")
    for tool in ("redis-server", "redis-cli", "redis-benchmark", "wrk"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            sys.exit(f"{tool} not found: run scripts/install-deps.sh")

    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {os.cpu_count()} cores; load at start: {uptime}", flush=True)
    for tag, path in gateways.items():
        print(f"gateway {tag}: {path}", flush=True)

    procs = []
    tmp = tempfile.mkdtemp(prefix="sluice-bench-redis-")
    try:
        redis_port = decision.free_port()
        procs.append(subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", tmp],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL))
        redis_proc = procs[-1]
        decision.wait_port(redis_port, redis_proc, "redis-server")
        running = {}
        for tag, path in gateways.items():
            running[tag] = start_gateway(path, tmp, tag, redis_port, opts.lease)
            procs.append(running[tag][0])
        redis_version = subprocess.run(["redis-server", "--version"], capture_output=True,
                                       text=True).stdout.split()[2].removeprefix("v=")

        results = {}  # (gateway or "baseline", connections, route) -> [run per round]
        for round_no in range(opts.repeat):
            for c in opts.connections:
                b = measure_baseline(redis_port, redis_proc, opts.baseline_requests, c)
                results.setdefault(("baseline", c, ""), []).append(b)
                print(f"  round {round_no + 1} -c{c} baseline {b[0]:10,.0f} EVALSHA/s",
                      file=sys.stderr, flush=True)
                for tag, (proc, gateway_port, _) in running.items():
                    for route, _ in MODES:
                        if route not in opts.modes:
                            continue
                        r = measure_route(f"http://127.0.0.1:{gateway_port}/{route}",
                                          opts.duration, c, redis_port, redis_proc, proc)
                        results.setdefault((tag, c, route), []).append(r)
                        print(f"  round {round_no + 1} -c{c} {tag:7} {route:7} {r[0]:10,.0f} "
                              f"req/s ({r[0] / b[0]:.2f}x)  {r[1]:.4f} EVALSHA/decision  "
                              f"sluice {r[2]:5.1f} us CPU/req  redis {r[3]:5.1f} us CPU/req  "
                              f"latency p50/p99 {r[4]}", file=sys.stderr, flush=True)
        print_tables(opts, results, redis_version, list(gateways))
        for tag, (_, _, admin_port) in running.items():
            failures = metric(admin_port, "sluice_redis_failures_total")
            takes = metric(admin_port, "sluice_redis_lease_takes_total")
            print(f"\n{tag}: Redis failures during the gateway runs: {failures:.0f}; lease "
                  f"takes: {takes:.0f}.")
        print("\nCPU is user + system time from /proc/PID/stat over the run, per request served.")
        # The backend without HTTP in front: one loop's store against the same redis-server.
        store_bench = os.path.join(opts.build, "bench", "sluice_redis_store_bench")
        if os.path.exists(store_bench) and not opts.no_store_bench:
            print()
            print("Without HTTP (bench/redis/store_bench.cpp, one event loop, 256 decisions in "
                  "flight over 1000 keys, 3 s per mode; the baseline is the same client sending "
                  "one EVALSHA of bench/decision/token_bucket.lua per decision, pipelined):")
            print()
            sys.stdout.flush()
            subprocess.run([store_bench, "--port", str(redis_port), "--script",
                            os.path.join(DECISION, "token_bucket.lua"), "--seconds", "3"],
                           check=True)
    finally:
        for p in reversed(procs):
            decision.stop(p)


if __name__ == "__main__":
    main()
