#!/usr/bin/env bash
# Regenerates the comparison table of docs/algorithms.md: one burst trace through every
# replayable algorithm at an equivalent setting (10 per second, 10 at once), in reject mode,
# in wait mode with --max-wait 500ms and in wait mode without a bound.
# Usage: bash scripts/algorithm-table.sh [SLUICE_BIN] [TRACE]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/build/release/sluice}
TRACE=${2:-$ROOT/examples/traces/burst-steady-burst.csv}

[[ -x $BIN ]] || { echo "algorithm-table: no sluice binary at $BIN (run make)" >&2; exit 1; }
[[ -r $TRACE ]] || { echo "algorithm-table: cannot read trace $TRACE" >&2; exit 1; }

# Each SPEC admits 10 at one instant and 10 per second thereafter (see docs/algorithms.md).
SPECS=(
  token-bucket:rate=10/s,burst=10
  gcra:rate=10/s,burst=9
  leaky-bucket:rate=10/s,burst=9
  leaky-bucket:rate=10/s,burst=9,nodelay=1
  fixed-window:limit=10,window=1s
  sliding-log:limit=10,window=1s
  sliding-window:limit=10,window=1s
  smooth-bursty:rate=10/s
  smooth-warmup:rate=10/s,warmup=1s
  queue:rate=10/s
)

# The two bursts are the first and last timestamps of the trace.
read -r FIRST LAST < <(awk -F, '!/^#/ && NF { if (f == "") f = $1; l = $1 } END { print f, l }' "$TRACE")

# Prints "first_burst last_burst total max_delay_ms" for one run, or "-" when the mode is
# refused (window algorithms decide in reject mode only).
summarise() {
  local out
  if ! out=$("$BIN" replay "$@" < "$TRACE" 2>/dev/null); then
    echo "- - - -"
    return
  fi
  awk -F, -v first="$FIRST" -v last="$LAST" '
    { total += $4; if ($1 == first) a += $4; if ($1 == last) b += $4; if ($5 > m) m = $5 }
    END { printf "%d %d %d %s\n", a, b, total, (m % 1000 ? sprintf("%.3f", m / 1000) : m / 1000) }
  ' <<<"$out"
}

N_FIRST=$(awk -F, -v t="$FIRST" '$1 == t' "$TRACE" | wc -l)
N_LAST=$(awk -F, -v t="$LAST" '$1 == t' "$TRACE" | wc -l)
N_ALL=$(grep -cv '^#' "$TRACE")

echo "Trace: $N_ALL requests, $N_FIRST at t=$FIRST us (1st burst), $N_LAST at t=$LAST us (2nd burst)."
echo "Columns: admitted requests (allowed=1, with or without delay) and the largest delay_us in ms."
echo
echo "| limit | reject: 1st burst | reject: 2nd burst | reject: total | reject: max delay | wait ≤500ms: 1st burst | wait ≤500ms: total | wait ≤500ms: max delay | wait: total | wait: max delay |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
for spec in "${SPECS[@]}"; do
  read -r ra rb rt rm < <(summarise --limit "$spec")
  read -r wa _ wt wm < <(summarise --limit "$spec" --mode wait --max-wait 500ms)
  read -r _ _ ut um < <(summarise --limit "$spec" --mode wait)
  echo "| \`$spec\` | $ra | $rb | $rt | $rm | $wa | $wt | $wm | $ut | $um |"
done
