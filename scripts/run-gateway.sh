#!/usr/bin/env bash
# `make run`: the main job. Starts a demo upstream and sluice as a rate-limiting gateway in front
# of it (examples/gateway.yaml), shows 200s turning into 429s, then keeps serving until Ctrl-C.
set -euo pipefail
SLUICE=${1:-build/release/sluice}
CONFIG=${2:-examples/gateway.yaml}
UPSTREAM=127.0.0.1:8081
GATEWAY=http://127.0.0.1:8080
ADMIN=http://127.0.0.1:9090

busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in 8080 8081 9090; do
  if busy "$port"; then
    echo "make run: port $port on 127.0.0.1 is in use; stop what holds it and try again" >&2
    exit 1
  fi
done

"$SLUICE" demo-upstream --listen "$UPSTREAM" &
UPSTREAM_PID=$!
LOG=$(dirname "$SLUICE")/access.log
"$SLUICE" serve --config "$CONFIG" >"$LOG" &
SLUICE_PID=$!
trap 'kill -TERM $SLUICE_PID $UPSTREAM_PID 2>/dev/null; wait 2>/dev/null' EXIT INT TERM

for _ in $(seq 50); do
  curl -fs -o /dev/null "$ADMIN/healthz" && break
  sleep 0.1
done

cat <<INFO

  sluice is serving $GATEWAY (config $CONFIG), in front of a demo upstream on $UPSTREAM.
  Admin API and metrics: $ADMIN/v1/rules  $ADMIN/metrics
  Access log: tail -f $LOG

  A burst from one client (per-ip: 5/s, burst 10):
    for i in \$(seq 20); do curl -s -o /dev/null -w '%{http_code} ' $GATEWAY/; done; echo

INFO
printf '  '
for i in $(seq 20); do curl -s -o /dev/null -w '%{http_code} ' "$GATEWAY/"; done
echo
echo
echo "  Response fields of a limited request:"
curl -s -D - -o /dev/null "$GATEWAY/" | grep -iE '^(HTTP|ratelimit|retry-after|x-ratelimit)' | sed 's/^/    /'
echo
echo "  Change the limit live (state kept), then try again:"
echo "    curl -X PUT $ADMIN/v1/rules/per-ip -d '{\"limit\": \"token-bucket:rate=50/s,burst=100\", \"key\": \"client_ip\"}'"
echo
echo "  Ctrl-C stops sluice and the demo upstream."
wait "$SLUICE_PID"
