#!/usr/bin/env bash
# make bench-gateway: bench/gateway/run.sh [BUILD_DIR]   (env: DURATION REPS CONNECTIONS PIN
#   SYSCALLS SYSCALL_REQUESTS PROFILE PROFILE_SECONDS PASSES SLUICE_BASELINE SLUICE_BASELINE_LABEL
#   DOCS)
# Three limiting gateways in front of the same upstream (nginx serving a small static file, one
# worker), under wrk -t1 -cCONNECTIONS for DURATION seconds:
#   nginx 1.22 limit_req (one worker), HAProxy 2.6 with a stick table (one thread), and sluice
#   serve with the equivalent rule (leaky-bucket = nginx limit_req, one worker); SLUICE_BASELINE
#   adds an older sluice binary on the same config as a fourth, and the upstream itself is
#   measured directly in the all-proxied scenario (what the upstream alone costs), and in the
#   refused one the floor (bench/gateway/floor.c: a fixed 429 per request head, no parsing,
#   no limiter: the kernel's share of a refusal).
# Pinned (PIN=1, the default, on a machine with 2+ CPUs): wrk alone on CPU 0; the gateway under
# test (every thread of it) and the upstream on CPU 1, so the client never competes with what it
# measures.
# Two scenarios: almost all refused (leaky-bucket rate 10/s, burst 5, keyed by client address:
# a local 429 for all but a few requests a second) and all proxied (a rate no client reaches).
# Before measuring, every gateway answers the same probe (a burst of requests on one keep-alive
# connection: which get 200 and which 429) or nothing is measured. Rounds are interleaved across
# gateways (the order rotating each round) and the medians reported, so that load from elsewhere
# spoils one round of each rather than every round of one.
# Per gateway: req/s, p50, p99 (wrk), CPU per request (user + system time of every process of
# the gateway, from /proc, over the requests wrk saw answered), and, in a separate pass after
# the timed rounds (a tracer slows what it traces), syscalls per request over SYSCALL_REQUESTS
# requests: `perf stat` on the syscall tracepoints where they work (SYSCALLS=perf), else
# `strace -c -f` (SYSCALLS=strace); SYSCALLS=off skips the pass. PROFILE=1 adds a `perf record`
# of each gateway per scenario (PROFILE_SECONDS each), summarized in build/bench/gateway/;
# PASSES=1 traces each gateway's epoll_wait calls under the same load (PROFILE_SECONDS) and
# reports its event loop's passes: how many events one returned, how long their handling took.
# Prints markdown tables and writes them into docs/performance.md under "## Gateway", up to the
# section's first "###" subsection (those are written by hand and kept) (DOCS=0: only into
# build/bench/gateway/results.md).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BUILD="${1:-build/release}"
DURATION="${DURATION:-6}"
REPS="${REPS:-5}"
CONNECTIONS="${CONNECTIONS:-50}"
SYSCALL_REQUESTS="${SYSCALL_REQUESTS:-100000}"
PROFILE="${PROFILE:-0}"
PROFILE_SECONDS="${PROFILE_SECONDS:-5}"
PASSES="${PASSES:-0}"
OUT="$ROOT/build/bench/gateway"
HERE="$ROOT/bench/gateway"
PY=/usr/bin/python3
mkdir -p "$OUT"

say() { echo "bench-gateway: $*" >&2; }

for tool in wrk nginx haproxy curl; do
  command -v "$tool" >/dev/null || { say "$tool is missing (bash scripts/install-deps.sh)"; exit 1; }
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

# How syscalls are counted: perf's syscall tracepoints cost the traced process little; strace
# stops it at every call, so it counts the same calls but under a much lighter load.
SYSCALLS="${SYSCALLS:-auto}"
if [ "$SYSCALLS" = auto ]; then
  if command -v perf >/dev/null && perf stat -e syscalls:sys_enter_read true >/dev/null 2>&1; then
    SYSCALLS=perf
  elif command -v strace >/dev/null; then
    SYSCALLS=strace
  else
    SYSCALLS=off
    say "neither perf's syscall tracepoints nor strace: no syscall counts"
  fi
fi
if [ "$PROFILE" = 1 ] && ! perf record -e cpu-clock -o /dev/null true >/dev/null 2>&1; then
  say "perf record does not work here: no profiles"; PROFILE=0
fi

# ---- processes started here, stopped on any exit
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

wait_port() {
  for _ in $(seq 200); do
    if $PY -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),1)" 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  say "nothing listens on port $1"; exit 1
}
render() {  # render TEMPLATE OUTPUT: @NAME@ -> $NAME
  sed -e "s|@PREFIX@|$OUT|g; s|@UPSTREAM_PORT@|$UPSTREAM_PORT|g; s|@PROXY_PORT@|$PROXY_PORT|g" \
      -e "s|@SLUICE_PORT@|$SLUICE_PORT|g; s|@ADMIN_PORT@|$ADMIN_PORT|g; s|@BURST@|$BURST|g" \
      -e "s|@NGINX_RATE@|$NGINX_RATE|g; s|@SLUICE_RATE@|$SLUICE_RATE|g" \
      -e "s|@HAPROXY_PORT@|$HAPROXY_PORT|g; s|@HAPROXY_LIMIT@|$HAPROXY_LIMIT|g" "$1" >"$2"
}

# Eight distinct free ports from one process (separate binds to port 0 may repeat a port).
read -r UPSTREAM_PORT PROXY_PORT HAPROXY_PORT SLUICE_PORT ADMIN_PORT BASE_PORT BASE_ADMIN_PORT \
  FLOOR_PORT <<<"$($PY "$ROOT/tests/integration/plain_support.py" 8 | tr '\n' ' ')"
BURST=5 NGINX_RATE=1r/s SLUICE_RATE=1/s HAPROXY_LIMIT=1  # placeholders until a scenario sets them

mkdir -p "$OUT/www"
echo "hello from upstream" >"$OUT/www/hello.txt"
render "$HERE/nginx-upstream.conf.in" "$OUT/upstream.conf"
$SERVER_CPU nginx -p "$OUT" -c "$OUT/upstream.conf" -e "$OUT/upstream-error.log" &
upstream_pid=$!
PIDS+=("$upstream_pid")
wait_port "$UPSTREAM_PORT"
upstream_pids="$upstream_pid $(pgrep -P "$upstream_pid" | tr '\n' ' ')"
cc -O2 -o "$OUT/floor" "$HERE/floor.c"

# CPU time (user + system, clock ticks, every thread) the processes PIDS... have used so far.
cpu_ticks() {
  local sum=0 pid
  for pid in "$@"; do
    # The fields after the command name, which is in parentheses: utime and stime are 12 and 13.
    sum=$((sum + $(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')))
  done
  echo "$sum"
}
# CPU 1's busy and total ticks (/proc/stat): what ran there besides the measured processes.
cpu1_ticks() { awk '$1 == "cpu1" {print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }

# wrk_once SCENARIO GATEWAY -> one line appended to $OUT/SCENARIO-GATEWAY.txt:
#   req/s p50_ms p99_ms non2xx total cpu_ticks other_cpu1_ticks cpu1_ticks
# cpu_ticks: every process of the gateway (its CPU per request is the steadier figure on a
# shared machine: it moves less with what else runs); other_cpu1_ticks: CPU 1's busy time not
# spent in the gateway or the upstream (other helpers' work, and softirq charged to no one).
wrk_once() {
  local out t0 t1 u0 u1 b0 b1 c0 c1
  # shellcheck disable=SC2086
  t0=$(cpu_ticks ${GW_PIDS[$2]}); u0=$(cpu_ticks $upstream_pids); read -r b0 c0 <<<"$(cpu1_ticks)"
  out=$($CLIENT_CPU wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "http://127.0.0.1:${GW_PORT[$2]}/")
  # shellcheck disable=SC2086
  t1=$(cpu_ticks ${GW_PIDS[$2]}); u1=$(cpu_ticks $upstream_pids); read -r b1 c1 <<<"$(cpu1_ticks)"
  echo "$out" >"$OUT/last-$1-$2.wrk"
  local own=$((t1 - t0 + u1 - u0))
  [ "$2" = direct ] && own=$((t1 - t0))
  echo "$(echo "$out" | $PY "$HERE/tables.py" wrk) $((t1 - t0)) $((b1 - b0 - own)) $((c1 - c0))" >>"$OUT/$1-$2.txt"
}

# syscalls_once SCENARIO GATEWAY: the gateway's syscalls over SYSCALL_REQUESTS requests, into
# $OUT/syscalls-SCENARIO-GATEWAY.txt (lines "name calls errors", then "requests N").
# perf counts EAGAIN returns of the read, write and accept calls as their errors; strace counts
# every error.
syscalls_once() {
  local file="$OUT/syscalls-$1-$2.txt" raw="$OUT/syscalls-$1-$2.raw" tracer out pid
  local -a pids
  read -r -a pids <<<"${GW_PIDS[$2]}"
  if [ "$SYSCALLS" = perf ]; then
    local -a events=(-e 'syscalls:sys_enter_*')
    for call in read readv recvfrom recvmsg write writev sendto sendmsg sendfile64 accept4; do
      events+=(-e "syscalls:sys_exit_$call" --filter 'ret == -11')
    done
    perf stat -x, -o "$raw" "${events[@]}" -e task-clock,context-switches \
      -p "$(IFS=,; echo "${pids[*]}")" &
  else
    local -a attach=()
    for pid in "${pids[@]}"; do attach+=(-p "$pid"); done
    strace -c -f -q -o "$raw" "${attach[@]}" &
  fi
  tracer=$!
  sleep 2  # attached to every thread before the first request
  out=$(WRK_REQUESTS="$SYSCALL_REQUESTS" $CLIENT_CPU wrk -t1 -c"$CONNECTIONS" -d300s \
        -s "$HERE/count.lua" "http://127.0.0.1:${GW_PORT[$2]}/")
  kill -INT "$tracer"
  wait "$tracer" 2>/dev/null || true
  $PY "$HERE/tables.py" syscalls "$SYSCALLS" "$raw" "$(echo "$out" | $PY "$HERE/tables.py" wrk-total)" >"$file"
}

# profile_once SCENARIO GATEWAY: perf record, with kernel call chains (cpu-clock: this VM has
# no hardware counters), of every process of the gateway over PROFILE_SECONDS of load; where the
# samples went into $OUT/profile-SCENARIO-GATEWAY.txt (`perf report -i` the .data for more).
profile_once() {
  local data="$OUT/perf-$1-$2.data" pids
  pids=$(echo "${GW_PIDS[$2]}" | xargs | tr ' ' ',')
  perf record -q -g -F 2999 -e cpu-clock -p "$pids" -o "$data" 2>/dev/null &
  local rec=$!
  sleep 1
  $CLIENT_CPU wrk -t1 -c"$CONNECTIONS" -d"${PROFILE_SECONDS}s" "http://127.0.0.1:${GW_PORT[$2]}/" >/dev/null
  kill -INT "$rec"
  wait "$rec" 2>/dev/null || true
  perf script -i "$data" -F comm,tid,ip,sym,dso 2>/dev/null | $PY "$HERE/tables.py" profile \
    >"$OUT/profile-$1-$2.txt"
}

# passes_once SCENARIO GATEWAY: the loop's passes (an epoll_wait's return to the next call) under
# PROFILE_SECONDS of load, into $OUT/passes-SCENARIO-GATEWAY.txt.
passes_once() {
  local data="$OUT/passes-$1-$2.data" pids
  pids=$(echo "${GW_PIDS[$2]}" | xargs | tr ' ' ',')
  perf record -q -e syscalls:sys_enter_epoll_wait -e syscalls:sys_exit_epoll_wait -p "$pids" \
    -o "$data" 2>/dev/null &
  local rec=$!
  sleep 1
  $CLIENT_CPU wrk -t1 -c"$CONNECTIONS" -d"${PROFILE_SECONDS}s" "http://127.0.0.1:${GW_PORT[$2]}/" >/dev/null
  kill -INT "$rec"
  wait "$rec" 2>/dev/null || true
  perf script -i "$data" -F tid,time,event,trace 2>/dev/null | $PY "$HERE/tables.py" passes \
    >"$OUT/passes-$1-$2.txt"
}

cpu_model="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
machine="$(nproc) CPUs, ${cpu_model:-unknown CPU}, Linux $(uname -r)"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
say "$machine, load average $load_start"
started_at="$(date -u +%Y-%m-%dT%H:%MZ)"

rm -f "$OUT"/*.txt "$OUT"/*.raw "$OUT"/*.data "$OUT"/probe-*
declare -A GW_PORT GW_PIDS
for run in reject pass; do
  if [ "$run" = pass ]; then
    # A rate no client reaches; the burst covers the requests one loop pass admits within the
    # same millisecond (nginx's clock), so that not one is refused.
    BURST=100 NGINX_RATE=1000000r/s SLUICE_RATE=1000000/s HAPROXY_LIMIT=1000000000
  else
    BURST=5 NGINX_RATE=10r/s SLUICE_RATE=10/s HAPROXY_LIMIT=6
  fi
  render "$HERE/nginx-proxy.conf.in" "$OUT/proxy.conf"
  render "$HERE/haproxy.cfg.in" "$OUT/haproxy.cfg"
  render "$HERE/sluice.yaml.in" "$OUT/sluice.yaml"
  $SERVER_CPU nginx -p "$OUT" -c "$OUT/proxy.conf" -e "$OUT/proxy-error.log" &
  nginx_pid=$!
  $SERVER_CPU haproxy -db -f "$OUT/haproxy.cfg" >"$OUT/haproxy-$run.log" 2>&1 &
  haproxy_pid=$!
  $SERVER_CPU "$SLUICE" serve --config "$OUT/sluice.yaml" 2>"$OUT/sluice-$run.log" &
  sluice_pid=$!
  PIDS+=("$nginx_pid" "$haproxy_pid" "$sluice_pid")
  started=("$nginx_pid" "$haproxy_pid" "$sluice_pid")
  GATEWAYS=(nginx haproxy sluice)
  if [ -n "$BASELINE" ]; then
    sed -e "s|127.0.0.1:$SLUICE_PORT|127.0.0.1:$BASE_PORT|; s|127.0.0.1:$ADMIN_PORT|127.0.0.1:$BASE_ADMIN_PORT|" \
      "$OUT/sluice.yaml" >"$OUT/baseline.yaml"
    $SERVER_CPU "$BASELINE" serve --config "$OUT/baseline.yaml" 2>"$OUT/baseline-$run.log" &
    base_pid=$!
    PIDS+=("$base_pid")
    started+=("$base_pid")
    GATEWAYS+=(baseline)
    GW_PORT[baseline]=$BASE_PORT GW_PIDS[baseline]="$base_pid"
    wait_port "$BASE_PORT"
  fi
  wait_port "$PROXY_PORT"
  wait_port "$HAPROXY_PORT"
  wait_port "$SLUICE_PORT"
  GW_PORT[nginx]=$PROXY_PORT GW_PIDS[nginx]="$nginx_pid $(pgrep -P "$nginx_pid" | tr '\n' ' ')"
  GW_PORT[haproxy]=$HAPROXY_PORT GW_PIDS[haproxy]="$haproxy_pid"
  GW_PORT[sluice]=$SLUICE_PORT GW_PIDS[sluice]="$sluice_pid"
  GW_PORT[direct]=$UPSTREAM_PORT GW_PIDS[direct]="$upstream_pids"
  # Behaviour first: every gateway answers the probe burst as nginx does, or nothing is measured.
  # The probe's burst spends each gateway's bucket: it runs once per gateway and scenario.
  want=$($PY "$HERE/probe.py" "$PROXY_PORT")
  echo "$want" >"$OUT/probe-$run.txt"
  for gw in "${GATEWAYS[@]:1}"; do
    got=$($PY "$HERE/probe.py" "${GW_PORT[$gw]}")
    [ "$got" = "$want" ] || { say "$run: $gw answers the probe with [$got], nginx with [$want]"; exit 1; }
  done
  say "$run: every gateway answers the probe with [$want]"
  ROUND=("${GATEWAYS[@]}")
  [ "$run" = pass ] && ROUND=(direct "${GATEWAYS[@]}")
  if [ "$run" = reject ]; then
    $SERVER_CPU "$OUT/floor" "$FLOOR_PORT" &
    floor_pid=$!
    PIDS+=("$floor_pid")
    started+=("$floor_pid")
    wait_port "$FLOOR_PORT"
    GW_PORT[floor]=$FLOOR_PORT GW_PIDS[floor]="$floor_pid"
    ROUND=(floor "${GATEWAYS[@]}")
  fi
  for rep in $(seq "$REPS"); do
    say "$run ($NGINX_RATE, burst $BURST), round $rep/$REPS, load $(cut -d' ' -f1 /proc/loadavg)"
    n=${#ROUND[@]}
    for i in $(seq 0 $((n - 1))); do
      wrk_once "$run" "${ROUND[$(((i + rep) % n))]}"
    done
  done
  if [ "$SYSCALLS" != off ]; then
    for gw in "${GATEWAYS[@]}"; do
      say "$run: syscalls of $gw over $SYSCALL_REQUESTS requests ($SYSCALLS)"
      syscalls_once "$run" "$gw"
    done
  fi
  if [ "$PROFILE" = 1 ]; then
    for gw in "${GATEWAYS[@]}"; do
      say "$run: perf record of $gw, ${PROFILE_SECONDS}s"
      profile_once "$run" "$gw"
    done
  fi
  if [ "$PASSES" = 1 ]; then
    for gw in "${GATEWAYS[@]}"; do
      say "$run: loop passes of $gw, ${PROFILE_SECONDS}s"
      passes_once "$run" "$gw"
    done
  fi
  kill "${started[@]}"
  wait "${started[@]}" 2>/dev/null || true
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

{
  echo "## Gateway"
  echo
  echo "Command: \`make bench-gateway\` (bench/gateway/run.sh $BUILD; DURATION=$DURATION REPS=$REPS"
  echo "SYSCALLS=$SYSCALLS SYSCALL_REQUESTS=$SYSCALL_REQUESTS), $started_at;"
  echo "\`wrk -t1 -c$CONNECTIONS -d${DURATION}s\`, medians of $REPS interleaved rounds."
  echo
  echo "Machine: $machine; $(nginx -v 2>&1 | cut -d' ' -f3), HAProxy $(haproxy -v | head -1 | cut -d' ' -f3),"
  echo "$(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2). Load average (1/5/15 min) $load_start at start, $load_end at"
  echo "end (wrk and the gateway under test count about 2 of it)."
  echo
  echo "Every gateway forwards to the same upstream, nginx serving a 20-byte static file with one"
  echo "worker, keep-alive on both sides, no access log. nginx: \`limit_req\` keyed by"
  echo "\$binary_remote_addr, \`burst=B nodelay\`, \`limit_req_log_level info\` under \`error_log warn\`"
  echo "so that a refusal writes no error-log line (at the default level nginx writes one per refused"
  echo "request, which the others do not: earlier runs of this table made nginx dearer that way)."
  echo "HAProxy: a stick table of client addresses storing \`http_req_rate(1s)\`, the rate read before"
  echo "the request is tracked (only admitted requests count, as limit_req counts), \`http-request deny"
  echo "deny_status 429\` past 1 + B, one thread. sluice: \`leaky-bucket:rate=R,burst=B,nodelay=1\` keyed"
  echo "by client_ip, one worker, its default RateLimit fields on (the others send none)."
  echo "Configs: bench/gateway/. Pinned: ${CLIENT_CPU:-no} (wrk) / ${SERVER_CPU:-no} (the gateway, every"
  echo "thread, and the upstream). CPU µs/request: user + system time of every process of the"
  echo "gateway (nginx: master and worker) from /proc, over the requests wrk saw answered; the"
  echo "upstream's own time is not in it (the direct row is the upstream alone)."
  if [ -n "$BASELINE" ]; then
    label="${SLUICE_BASELINE_LABEL:-$("$BASELINE" --version 2>/dev/null | head -1)}"
    echo "Baseline binary: $BASELINE (${label:-no --version})."
  fi
  echo
  $PY "$HERE/tables.py" report "$OUT" "$SYSCALLS" "$SYSCALL_REQUESTS"
} >"$OUT/results.md"
cat "$OUT/results.md"

if [ "${DOCS:-1}" = 0 ]; then
  say "DOCS=0: tables left in $OUT/results.md"
  exit 0
fi
$PY - "$ROOT/docs/performance.md" "$OUT/results.md" <<'PYEOF'
import os, re, sys
doc, section = sys.argv[1], open(sys.argv[2]).read().rstrip("\n") + "\n"
text = open(doc).read() if os.path.exists(doc) else "# Performance\n"
m = re.search(r"^## Gateway\n.*?(?=^## |^### |\Z)", text, re.M | re.S)
if m:
    text = text[: m.start()] + section + ("\n" if m.end() < len(text) else "") + text[m.end():]
else:
    text = text.rstrip("\n") + "\n\n" + section
open(doc, "w").write(text)
PYEOF
say "tables written to docs/performance.md (## Gateway)"
