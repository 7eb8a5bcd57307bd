#!/usr/bin/env bash
# `make run`: the main job. Starts a demo upstream and sluice as a rate-limiting gateway in front
# of it (examples/gateway.yaml), shows 200s turning into 429s, then keeps serving until Ctrl-C.
# The access log (the config's access_log: stdout) goes to this terminal.
#
# Ports: PORT (the gateway, 8080), ADMIN_PORT (9090), UPSTREAM_PORT (the demo upstream, 8081),
# all on 127.0.0.1. The example is not edited: the gateway and admin addresses are flags, and
# the upstream's port is written into a copy of the config in a temporary directory.
# Usage: PORT=8000 bash scripts/run-gateway.sh [SLUICE_BIN] [CONFIG]
set -euo pipefail
SLUICE=${1:-build/release/sluice}
CONFIG=${2:-examples/gateway.yaml}
PORT=${PORT:-8080}
ADMIN_PORT=${ADMIN_PORT:-9090}
UPSTREAM_PORT=${UPSTREAM_PORT:-8081}

fail() {
  echo "make run: $*" >&2
  exit 1
}
busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

for var in PORT ADMIN_PORT UPSTREAM_PORT; do
  value=${!var}
  if ! [[ $value =~ ^[0-9]+$ ]] || ((value < 1 || value > 65535)); then
    fail "$var=$value is not a port (1-65535)"
  fi
done
if [[ $PORT == "$ADMIN_PORT" || $PORT == "$UPSTREAM_PORT" ||
      $ADMIN_PORT == "$UPSTREAM_PORT" ]]; then
  fail "PORT, ADMIN_PORT and UPSTREAM_PORT must differ"
fi
for var in PORT ADMIN_PORT UPSTREAM_PORT; do
  if busy "${!var}"; then
    fail "port ${!var} on 127.0.0.1 is in use; stop what holds it, or choose another:" \
      "make run $var=..."
  fi
done

# The example's upstream servers (one, on loopback), moved to UPSTREAM_PORT in a copy.
SERVERS='servers: \[127\.0\.0\.1:[0-9]+\]'
grep -qE "$SERVERS" "$CONFIG" ||
  fail "$CONFIG has no 'servers: [127.0.0.1:PORT]' line for the demo upstream"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sluice-run.XXXXXX")
RUN_CONFIG=$WORK/$(basename "$CONFIG")
sed -E "s/$SERVERS/servers: [127.0.0.1:$UPSTREAM_PORT]/" "$CONFIG" >"$RUN_CONFIG"

GATEWAY=http://127.0.0.1:$PORT
ADMIN=http://127.0.0.1:$ADMIN_PORT
PIDS=()
cleanup() {
  ((${#PIDS[@]})) && kill -TERM "${PIDS[@]}" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$SLUICE" demo-upstream --listen "127.0.0.1:$UPSTREAM_PORT" &
PIDS+=($!)
"$SLUICE" serve --config "$RUN_CONFIG" --listen "127.0.0.1:$PORT" --admin "127.0.0.1:$ADMIN_PORT" &
SLUICE_PID=$!
PIDS+=("$SLUICE_PID")

for _ in $(seq 250); do
  kill -0 "$SLUICE_PID" 2>/dev/null || fail "sluice serve exited (its error is above)"
  curl -fs -o /dev/null "$ADMIN/healthz" && busy "$PORT" && break
  sleep 0.02
done

cat <<INFO

  sluice is serving $GATEWAY (config $CONFIG), in front of a demo upstream on 127.0.0.1:$UPSTREAM_PORT.
  Admin API and metrics: $ADMIN/v1/rules  $ADMIN/metrics
  The access log is this terminal: one line per request.

  A burst from one client (per-ip: 5/s, burst 10):
    for i in \$(seq 20); do curl -s -o /dev/null -w '%{http_code} ' $GATEWAY/; done; echo

INFO
codes=$(for _ in $(seq 20); do curl -s -o /dev/null -w '%{http_code} ' "$GATEWAY/"; done)
sleep 0.05 # the access log's lines for the burst come first
echo
echo "  The burst's statuses: $codes"
echo
echo "  Response fields of a limited request:"
curl -s -D - -o /dev/null "$GATEWAY/" | grep -iE '^(HTTP|ratelimit|retry-after|x-ratelimit)' | sed 's/^/    /'
echo
echo "  Change the limit live (state kept), then try again:"
echo "    curl -X PUT $ADMIN/v1/rules/per-ip -d '{\"limit\": \"token-bucket:rate=50/s,burst=100\", \"key\": \"client_ip\"}'"
echo
echo "  Ctrl-C stops sluice and the demo upstream."
wait "$SLUICE_PID"
