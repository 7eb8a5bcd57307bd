#!/usr/bin/env bash
# `make bench-gateway`: the gateway beside nginx 1.22, side by side in one run (issue 4).
#   bash bench/gateway/run.sh [BUILD_DIR]        (default build/release)
#   DURATION=10 REPS=3 CONNECTIONS=50 bash bench/gateway/run.sh
#   SLUICE_BASELINE=/path/to/older/sluice bash bench/gateway/run.sh   (a 4th target: the same
#     config on another sluice binary, interleaved with the rest: before/after in one run;
#     SLUICE_BASELINE_LABEL="what it is" names it in the table, else its --version)
#   PIN=0 ...   (no CPU pinning)
# wrk -t1 -cCONNECTIONS for DURATION seconds against three targets, all in front of the same
# upstream (nginx `return 200`, one worker):
#   (a) the upstream directly, (b) nginx as a reverse proxy with limit_req, one worker,
#   (c) sluice serve with the equivalent rule (leaky-bucket = nginx limit_req), one worker.
# Pinned (PIN=1, the default, on a machine with 2+ CPUs): wrk alone on CPU 0, the proxy under
# test and the upstream on CPU 1, so the client never competes with what it measures.
# Before measuring, every proxy is asked once and must answer as nginx does (same status).
# Two runs: a rate far above the load (every request passes the limiter) and a low rate (most
# are rejected with 429). Repetitions are interleaved across targets and the medians reported,
# so that load from elsewhere spoils one repetition of each rather than every one of one.
# Prints a markdown table and writes it into docs/performance.md under "## Gateway".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BUILD="${1:-build/release}"
DURATION="${DURATION:-10}"
REPS="${REPS:-3}"
CONNECTIONS="${CONNECTIONS:-50}"
OUT="$ROOT/build/bench/gateway"
HERE="$ROOT/bench/gateway"
mkdir -p "$OUT"

say() { echo "bench-gateway: $*" >&2; }

for tool in wrk nginx; do
  command -v "$tool" >/dev/null || { say "$tool is missing (bash scripts/install-bench-deps.sh)"; exit 1; }
done
if [ ! -f "$BUILD/build.ninja" ]; then
  bash scripts/install-deps.sh
  cmake --preset "$(basename "$BUILD")" >/dev/null
fi
cmake --build "$BUILD" --target sluice >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log" >&2; exit 1; }
SLUICE="$BUILD/sluice"
BASELINE="${SLUICE_BASELINE:-}"
PIN="${PIN:-1}"
CLIENT_CPU="" SERVER_CPU=""
if [ "$PIN" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  CLIENT_CPU="taskset -c 0" SERVER_CPU="taskset -c 1"
fi

# ---- processes started here, stopped on any exit
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

wait_port() {
  for _ in $(seq 100); do
    if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),1)" 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  say "nothing listens on port $1"; exit 1
}
render() {  # render TEMPLATE OUTPUT: @NAME@ -> $NAME
  sed -e "s|@PREFIX@|$OUT|g; s|@UPSTREAM_PORT@|$UPSTREAM_PORT|g; s|@PROXY_PORT@|$PROXY_PORT|g" \
      -e "s|@SLUICE_PORT@|$SLUICE_PORT|g; s|@ADMIN_PORT@|$ADMIN_PORT|g; s|@BURST@|$BURST|g" \
      -e "s|@NGINX_RATE@|$NGINX_RATE|g; s|@SLUICE_RATE@|$SLUICE_RATE|g" "$1" >"$2"
}

# Six distinct free ports from one process (separate binds to port 0 may repeat a port).
read -r UPSTREAM_PORT PROXY_PORT SLUICE_PORT ADMIN_PORT BASE_PORT BASE_ADMIN_PORT \
  <<<"$(python3 "$ROOT/tests/integration/plain_support.py" 6 | tr '\n' ' ')"
BURST=100
NGINX_RATE=1r/s SLUICE_RATE=1/s  # placeholders until a run sets them

render "$HERE/nginx-upstream.conf.in" "$OUT/upstream.conf"
$SERVER_CPU nginx -p "$OUT" -c "$OUT/upstream.conf" -e "$OUT/upstream-error.log" &
PIDS+=($!)
wait_port "$UPSTREAM_PORT"
upstream_worker=$(pgrep -P "${PIDS[0]}")

# CPU time (user + system, clock ticks) a process has used so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# wrk_once NAME PORT PID -> one line "req/s p50_ms p99_ms non2xx total cpu_ticks" appended to
# $OUT/NAME.txt; PID is the process serving PORT (its CPU per request is the steadier figure on
# a shared machine: it does not move with what else runs).
wrk_once() {
  local out t0 t1
  t0=$(cpu_ticks "$3")
  out=$($CLIENT_CPU wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "http://127.0.0.1:$2/")
  t1=$(cpu_ticks "$3")
  echo "$out" >"$OUT/last-$1.wrk"
  echo "$out" | python3 -c '
import re, sys
t = sys.stdin.read()
def ms(label):
    m = re.search(r"^\s*" + label + r"\s+([\d.]+)(us|ms|s)\s*$", t, re.M)
    v, unit = float(m.group(1)), m.group(2)
    return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
total = int(re.search(r"(\d+) requests in", t).group(1))
m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", t)
p50, p99 = ms("50%"), ms("99%")
print(f"{rps:.0f} {p50:.3f} {p99:.3f} {int(m.group(1)) if m else 0} {total}", end=" ")
' >>"$OUT/$1.txt"
  echo $((t1 - t0)) >>"$OUT/$1.txt"
}

cpu_model="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
machine="$(nproc) CPUs, ${cpu_model:-unknown CPU}, Linux $(uname -r)"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
say "$machine, load average $load_start"

rm -f "$OUT"/*.txt
for run in pass reject; do
  if [ "$run" = pass ]; then
    NGINX_RATE=1000000r/s SLUICE_RATE=1000000/s
  else
    NGINX_RATE=100r/s SLUICE_RATE=100/s
  fi
  render "$HERE/nginx-proxy.conf.in" "$OUT/proxy.conf"
  render "$HERE/sluice.yaml.in" "$OUT/sluice.yaml"
  $SERVER_CPU nginx -p "$OUT" -c "$OUT/proxy.conf" -e "$OUT/proxy-error.log" &
  nginx_pid=$!
  PIDS+=("$nginx_pid")
  $SERVER_CPU "$SLUICE" serve --config "$OUT/sluice.yaml" 2>"$OUT/sluice-$run.log" &
  sluice_pid=$!
  PIDS+=("$sluice_pid")
  base_pid=""
  if [ -n "$BASELINE" ]; then
    sed -e "s|127.0.0.1:$SLUICE_PORT|127.0.0.1:$BASE_PORT|; s|127.0.0.1:$ADMIN_PORT|127.0.0.1:$BASE_ADMIN_PORT|" \
      "$OUT/sluice.yaml" >"$OUT/baseline.yaml"
    $SERVER_CPU "$BASELINE" serve --config "$OUT/baseline.yaml" 2>"$OUT/baseline-$run.log" &
    base_pid=$!
    PIDS+=("$base_pid")
    wait_port "$BASE_PORT"
  fi
  wait_port "$PROXY_PORT"
  wait_port "$SLUICE_PORT"
  nginx_worker=$(pgrep -P "$nginx_pid")
  # Behaviour first: each proxy answers a request as nginx does, or nothing is measured.
  want=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PROXY_PORT/")
  for port in "$SLUICE_PORT" ${base_pid:+"$BASE_PORT"}; do
    got=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")
    [ "$got" = "$want" ] || { say "port $port answers $got where nginx answers $want"; exit 1; }
  done
  for rep in $(seq "$REPS"); do
    say "run $run ($NGINX_RATE), repetition $rep/$REPS"
    wrk_once "$run-direct" "$UPSTREAM_PORT" "$upstream_worker"
    wrk_once "$run-nginx" "$PROXY_PORT" "$nginx_worker"
    wrk_once "$run-sluice" "$SLUICE_PORT" "$sluice_pid"
    if [ -n "$base_pid" ]; then wrk_once "$run-baseline" "$BASE_PORT" "$base_pid"; fi
  done
  kill "$nginx_pid" "$sluice_pid" $base_pid
  wait "$nginx_pid" "$sluice_pid" $base_pid 2>/dev/null || true
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

table="$(python3 - "$OUT" <<'PYEOF'
import os, statistics, sys
out = sys.argv[1]
hz = os.sysconf("SC_CLK_TCK")
names = {"direct": "upstream direct", "nginx": "nginx 1.22 limit_req", "sluice": "sluice serve"}
if os.path.exists(f"{out}/pass-baseline.txt"):
    names["baseline"] = "sluice serve (baseline binary)"
runs = {"pass": "rate 1000000/s (all pass)", "reject": "rate 100/s, burst 100 (most rejected)"}
print("| run | target | req/s | p50 ms | p99 ms | CPU µs/request | answered 429 "
      "| sluice ÷ nginx req/s | nginx ÷ sluice CPU |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for run, title in runs.items():
    med = {}
    for target in names:
        rows = [list(map(float, l.split())) for l in open(f"{out}/{run}-{target}.txt")]
        cpu = statistics.median(r[5] / hz / r[4] * 1e6 for r in rows)
        share = sum(r[3] for r in rows) / max(1, sum(r[4] for r in rows))
        med[target] = [statistics.median(r[i] for r in rows) for i in range(3)] + [cpu, share]
    for target, label in names.items():
        rps, p50, p99, cpu, share = med[target]
        ratio = cpu_ratio = ""
        if target in ("sluice", "baseline"):
            ratio = f"{rps / med['nginx'][0]:.2f}"
            cpu_ratio = f"{med['nginx'][3] / cpu:.2f}"
        print(f"| {title} | {label} | {rps:,.0f} | {p50:.2f} | {p99:.2f} | {cpu:.1f} "
              f"| {share:.1%} | {ratio} | {cpu_ratio} |")
PYEOF
)"

{
  echo "## Gateway"
  echo
  echo "Command: \`make bench-gateway\` (bench/gateway/run.sh $BUILD), $(date -u +%Y-%m-%dT%H:%MZ);"
  echo "\`wrk -t1 -c$CONNECTIONS -d${DURATION}s\`, medians of $REPS interleaved repetitions."
  echo
  echo "Machine: $machine; $(nginx -v 2>&1 | cut -d' ' -f3), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)."
  echo "Load average (1/5/15 min) $load_start at start, $load_end at end."
  echo
  echo "All three targets answer from the same upstream, nginx \`return 200\` with one worker, on"
  echo "the same host as wrk and the proxies. nginx proxies with \`limit_req\` (burst $BURST"
  echo "nodelay, keyed by \$binary_remote_addr, keep-alive to the upstream); sluice runs the equivalent"
  echo "rule \`leaky-bucket:rate=R,burst=$BURST,nodelay=1\` keyed by client_ip, one worker,"
  echo "access log off, RateLimit headers on (nginx sends none). Configs: bench/gateway/."
  echo "CPU µs/request: the serving process's user + system time over the requests it answered"
  echo "(the upstream's worker for the direct row); wrk, the upstream and the proxy share the"
  echo "machine's cores, so req/s moves with the load and the CPU cost is the steadier comparison."
  echo "Pinned: ${CLIENT_CPU:-no} (wrk) / ${SERVER_CPU:-no} (proxies and upstream)."
  if [ -n "$BASELINE" ]; then
    label="${SLUICE_BASELINE_LABEL:-$("$BASELINE" --version 2>/dev/null | head -1)}"
    echo "Baseline binary: $BASELINE (${label:-no --version})."
  fi
  echo "Target (issue 4): sluice ≥ 1.2× nginx's req/s with p99 ≤ nginx's, in both runs."
  echo
  echo "$table"
} >"$OUT/results.md"
cat "$OUT/results.md"

python3 - "$ROOT/docs/performance.md" "$OUT/results.md" <<'PYEOF'
import os, re, sys
doc, section = sys.argv[1], open(sys.argv[2]).read().rstrip("\n") + "\n"
text = open(doc).read() if os.path.exists(doc) else "# Performance\n"
m = re.search(r"^## Gateway\n.*?(?=^## |\Z)", text, re.M | re.S)
if m:
    text = text[: m.start()] + section + ("\n" if m.end() < len(text) else "") + text[m.end():]
else:
    text = text.rstrip("\n") + "\n\n" + section
open(doc, "w").write(text)
PYEOF
say "table written to docs/performance.md (## Gateway)"
