#!/usr/bin/env bash
# `make run`: a replay demo until `sluice serve` exists. A promotion hits one key (steady
# 5 req/s, then 60 requests in 1 s, then steady again); the same trace goes through an
# x/time/rate token bucket and an nginx limit_req leaky bucket, shown per 100 ms.
# Usage: bash scripts/run-demo.sh [SLUICE_BIN]
set -euo pipefail

BIN=${1:-build/release/sluice}
[[ -x $BIN ]] || { echo "run-demo: no sluice binary at $BIN (run make)" >&2; exit 1; }
PY=/usr/bin/python3
[[ -x $PY ]] || PY=python3

exec "$PY" - "$BIN" <<'PYEOF'
import subprocess
import sys

BIN = sys.argv[1]
LIMITS = [
    ("token-bucket rate=10/s,burst=20", ["--limit", "token-bucket:rate=10/s,burst=20"]),
    ("leaky-bucket rate=10/s,burst=20 (delay)", ["--limit", "leaky-bucket:rate=10/s,burst=20"]),
]
BUCKET_US = 100_000

# The trace, in microseconds: 5 req/s for 1 s, 60 requests spread over 1 s, 5 req/s for 2 s.
times = [2_000_000 + i * 200_000 for i in range(5)]
times += [3_000_000 + (i * 1_000_000) // 60 for i in range(60)]
times += [4_000_000 + i * 200_000 for i in range(10)]
trace = "".join(f"{t},shop\n" for t in times)


def replay(args):
    out = subprocess.run([BIN, "replay", *args], input=trace, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"run-demo: sluice replay {' '.join(args)} failed: {out.stderr.strip()}")
    rows = []
    for line in out.stdout.splitlines():
        t, _key, _cost, allowed, delay, _remaining, _retry = line.split(",")
        rows.append((int(t), allowed == "1", int(delay)))
    return rows


def per_bucket(rows):
    """bucket -> [at once, delayed, rejected, sent]; 'sent' counts when a request proceeds."""
    buckets = {}
    for t, allowed, delay in rows:
        b = buckets.setdefault(t // BUCKET_US, [0, 0, 0, 0])
        b[0 if allowed and delay == 0 else 1 if allowed else 2] += 1
        if allowed:
            buckets.setdefault((t + delay) // BUCKET_US, [0, 0, 0, 0])[3] += 1
    return buckets


results = [(name, replay(args)) for name, args in LIMITS]
tables = [per_bucket(rows) for _, rows in results]
arrivals = {}
for t in times:
    arrivals[t // BUCKET_US] = arrivals.get(t // BUCKET_US, 0) + 1
keys = sorted(set(arrivals).union(*tables))

chart_w = max(sum(v[:3]) for tab in tables for v in tab.values())
sub = f"{'chart':<{chart_w}} {'now':>4}{'late':>5}{'rej':>5}{'sent':>6}"
cell_w = max(len(sub), *(len(name) for name, _ in results))


def row(left, cells):
    print((left + " | " + " | ".join(c.ljust(cell_w) for c in cells)).rstrip())


print(f"Sluice replay demo: a promotion on one key, {len(times)} requests")
print("  5 req/s for 1 s, then 60 requests in 1 s (from 3.0 s), then 5 req/s for 2 s.")
print("  A row is 100 ms of arrivals:  # passed at once   ~ passed after a delay   x rejected")
print("  sent: requests that proceed in that 100 ms, after their delay.")
print()
row(" " * 10, [name for name, _ in results])
row(f"{'time':>6} {'in':>3}", [sub for _ in results])
for k in keys:
    cells = []
    for tab in tables:
        now, late, rej, sent = tab.get(k, [0, 0, 0, 0])
        chart = "#" * now + "~" * late + "x" * rej
        cells.append(f"{chart:<{chart_w}} {now:>4}{late:>5}{rej:>5}{sent:>6}")
    row(f"{k * BUCKET_US / 1e6:5.1f}s {arrivals.get(k, 0):>3}", cells)

print()
print(f"{'totals':<42}{'passed':>7}{'delayed':>9}{'rejected':>10}{'max delay':>11}")
for name, rows in results:
    passed = sum(1 for _, a, d in rows if a and d == 0)
    delayed = sum(1 for _, a, d in rows if a and d > 0)
    rejected = sum(1 for _, a, _ in rows if not a)
    max_delay = max((d for _, a, d in rows if a), default=0)
    print(f"{name:<42}{passed:>7}{delayed:>9}{rejected:>10}{max_delay / 1000:>8.0f} ms")
PYEOF
