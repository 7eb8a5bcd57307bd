#!/usr/bin/env bash
# `make bench-check`: the decision service's HTTP check (GET /v1/check/{rule}?key=..., the call
# nginx auth_request makes) under wrk, beside GET /healthz on the same admin listener for scale.
#   bash bench/decision/check_http.sh [BUILD_DIR]       (default build/release)
#   DURATION=10 REPS=3 CONNECTIONS=50 bash bench/decision/check_http.sh
# Targets, each `wrk -t1 -cCONNECTIONS -dDURATION`, repetitions interleaved, medians reported:
#   healthz       GET /healthz: the admin listener's HTTP alone
#   one key       GET /v1/check/open?key=k: every check allowed (204), one hot key
#   random keys   GET /v1/check/open?key=<random of 1e6> (random_key.lua): 204, new keys
#   one key, 429  GET /v1/check/tight?key=k: every check denied (429 + JSON body)
# Prints a markdown table and writes it into docs/performance.md under
# "## Decision service (HTTP check)".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BUILD="${1:-build/release}"
DURATION="${DURATION:-10}"
REPS="${REPS:-3}"
CONNECTIONS="${CONNECTIONS:-50}"
OUT="$ROOT/build/bench/check"
SECTION="## Decision service (HTTP check)"
mkdir -p "$OUT"
log() { echo "bench-check: $*" >&2; }

command -v wrk >/dev/null || { log "wrk is missing (bash scripts/install-bench-deps.sh)"; exit 1; }
SLUICE="$BUILD/sluice"
[ -x "$SLUICE" ] || { log "no $SLUICE; build first (make build)"; exit 1; }

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$OUT/sluice.yaml" <<YAML
admin: 127.0.0.1:$PORT
rules:
  open:
    limit: "gcra:rate=100000000/s,burst=1000000"
    key: client_ip
  tight:
    limit: "fixed-window:limit=1,window=1h"
    key: client_ip
YAML
"$SLUICE" serve --config "$OUT/sluice.yaml" 2>"$OUT/sluice.log" &
SLUICE_PID=$!
trap 'kill $SLUICE_PID 2>/dev/null || true; wait $SLUICE_PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 0.05
done
curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$OUT/sluice.log" >&2; exit 1; }

BASE="http://127.0.0.1:$PORT"
declare -A TARGETS=(
  [healthz]="$BASE/healthz"
  [one]="$BASE/v1/check/open?key=k"
  [random]="-s $ROOT/bench/decision/random_key.lua $BASE/v1/check/open"
  [deny]="$BASE/v1/check/tight?key=k"
)
ORDER=(healthz one random deny)

load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$OUT"/*.wrk
for rep in $(seq "$REPS"); do
  for name in "${ORDER[@]}"; do
    log "repetition $rep/$REPS: $name"
    # shellcheck disable=SC2086  # the target may carry "-s script"
    wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency ${TARGETS[$name]} >"$OUT/$name.$rep.wrk"
  done
done
kill -0 "$SLUICE_PID" || { log "sluice died"; cat "$OUT/sluice.log" >&2; exit 1; }

machine="$(nproc) CPUs, $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), Linux $(uname -r)"
python3 - "$OUT" "$REPS" >"$OUT/table.md" <<'PY'
import re, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
rows = [("healthz", "`GET /healthz` (scale)", "200"),
        ("one", "`GET /v1/check/{rule}`, one key", "204"),
        ("random", "`GET /v1/check/{rule}`, random keys of 10^6", "204"),
        ("deny", "`GET /v1/check/{rule}`, one key, denied", "429")]

def millis(text, label):
    value, unit = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\s*$", text, re.M).groups()
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]

print("| target | status | req/s | p50 ms | p99 ms | req/s ÷ healthz |")
print("|---|---|---:|---:|---:|---:|")
medians = {}
for name, label, status in rows:
    runs = [open(f"{out}/{name}.{r}.wrk").read() for r in range(1, reps + 1)]
    rps = statistics.median(float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1)) for t in runs)
    p50 = statistics.median(millis(t, "50%") for t in runs)
    p99 = statistics.median(millis(t, "99%") for t in runs)
    medians[name] = rps
    print(f"| {label} | {status} | {rps:,.0f} | {p50:.2f} | {p99:.2f} | "
          f"{rps / medians['healthz']:.2f} |")
PY

{
  echo "$SECTION"
  echo
  echo "Command: \`make bench-check\` (bench/decision/check_http.sh $BUILD), $(date -u +%Y-%m-%dT%H:%MZ);"
  echo "\`wrk -t1 -c$CONNECTIONS -d${DURATION}s\` per target, medians of $REPS interleaved repetitions."
  echo "Machine: $machine; wrk and sluice share it."
  echo "Load average (1/5/15 min) $load_start at start, $(cut -d' ' -f1-3 /proc/loadavg) at end."
  echo
  echo "All targets are on sluice's admin listener, which runs on one thread (HTTP/1.1 keep-alive)."
  echo "\`/healthz\` measures its HTTP alone; a check adds parsing the query, the decision and the"
  echo "RateLimit headers. Rule \`open\` is a gcra far above the load, so every check is a 204;"
  echo "\`tight\` is a fixed window of 1, so every check is a 429 with its JSON body. For nginx"
  echo "\`auth_request\` each check is one more HTTP exchange per request, over kept-alive connections."
  echo
  cat "$OUT/table.md"
} >"$OUT/results.md"
cat "$OUT/results.md"

python3 "$ROOT/bench/write_section.py" "$ROOT/docs/performance.md" "$OUT/results.md"
log "table written to docs/performance.md ($SECTION)"
