#!/usr/bin/env bash
# `make bench`: Sluice's core benchmarks and their peers in one run, on this machine, and one
# markdown table of medians (also written to build/bench/results.md).
#   bash scripts/run-bench.sh [BUILD_DIR]      (default build/release)
# Peers: golang.org/x/time/rate 0.3.0 (Go, GOPATH mode against Debian's copy), Guava 31.1
# RateLimiter (Java 17), and a bare 64-bit CAS loop (in bench/core_bench.cpp) as the floor.
# The machine is shared and noisy, so every figure is a median: of 5 repetitions (Sluice, Go)
# or of 7 timed rounds after a warm-up (Guava), and the repetitions are interleaved across the
# suite, so that a burst of load from elsewhere spoils one repetition of several benchmarks
# rather than every repetition of one. Takes about two and a half minutes after the build.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${1:-build/release}"
OUT="$ROOT/build/bench"
REPS=5
MIN_TIME=0.3         # seconds per repetition of each Sluice benchmark
GO_BENCHTIME=300ms   # the same for each Go benchmark
mkdir -p "$OUT"

say() { echo "run-bench: $*" >&2; }

# ---- build (a no-op when up to date)
if [ ! -f "$BUILD/build.ninja" ]; then
  bash scripts/install-deps.sh
  cmake --preset "$(basename "$BUILD")" >/dev/null
fi
if ! cmake --build "$BUILD" --target sluice_core_bench sluice_table_bench >"$OUT/build.log" 2>&1; then
  cat "$OUT/build.log" >&2
  exit 1
fi
bash scripts/install-bench-deps.sh

# ---- the machine
cpu_model="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
machine="$(nproc) CPUs, ${cpu_model:-unknown CPU}, Linux $(uname -r)"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
tools="g++ $(g++ -dumpfullversion), $(go version | cut -d' ' -f3), Java $(java -version 2>&1 | head -1 | cut -d'"' -f2)"
say "$machine, load average $load_start"

# ---- Sluice
say "Sluice core benchmarks ($REPS repetitions, medians)"
"$BUILD/bench/sluice_core_bench" --benchmark_repetitions="$REPS" \
  --benchmark_report_aggregates_only=true --benchmark_enable_random_interleaving=true \
  --benchmark_min_time="$MIN_TIME" \
  --benchmark_out="$OUT/core.json" --benchmark_out_format=json >"$OUT/core.txt" 2>&1 \
  || { cat "$OUT/core.txt" >&2; exit 1; }

# ---- golang.org/x/time/rate: GOPATH mode, Debian's copy of the module under /usr/share/gocode
say "x/time/rate peer (go test -bench, $REPS counts)"
export GO111MODULE=off GOPATH="$OUT/gopath:/usr/share/gocode" GOCACHE="$OUT/gocache" GOFLAGS=
(cd bench/peers/xtime && go test -c -o "$OUT/xtime.test" .)
: >"$OUT/xtime-1.txt"
: >"$OUT/xtime-2.txt"
for _ in $(seq "$REPS"); do
  "$OUT/xtime.test" -test.run='^$' -test.bench='^Benchmark(AllowN?(Pass|Deny)|TimeNow)$' \
    -test.benchtime="$GO_BENCHTIME" -test.cpu=1 >>"$OUT/xtime-1.txt"
  "$OUT/xtime.test" -test.run='^$' -test.bench='^BenchmarkParallel' \
    -test.benchtime="$GO_BENCHTIME" -test.cpu=2 >>"$OUT/xtime-2.txt"
done

# ---- Guava RateLimiter
say "Guava peer (warm-up, then the median of 7 rounds)"
rm -rf "$OUT/guava-classes"
javac -Xlint:all -Werror -cp /usr/share/java/guava.jar -d "$OUT/guava-classes" \
  bench/peers/guava/GuavaBench.java
java -XX:+UseSerialGC -cp "/usr/share/java/guava.jar:$OUT/guava-classes" GuavaBench >"$OUT/guava.txt"

# ---- the table
table="$(python3 bench/report.py --sluice "$OUT/core.json" \
  --go "$OUT/xtime-1.txt" "$OUT/xtime-2.txt" --guava "$OUT/guava.txt")"
{
  echo "Command: \`make bench\` (scripts/run-bench.sh $BUILD), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Machine: $machine; $tools. Load average (1/5/15 min) $load_start at start,"
  echo "$(cut -d' ' -f1-3 /proc/loadavg) at end."
  echo
  echo "Medians of wall-clock ns per operation; \`threads:2\` and 2-goroutine rows: wall time ÷ the"
  echo "operations of both (inverse throughput). \`peer ÷ Sluice\` above 1 means Sluice is faster."
  echo
  echo "$table"
} >"$OUT/results.md"
cat "$OUT/results.md"

# ---- keyed tables beside the absl floor (docs/performance.md, "Keyed tables"); about 5
# minutes, most of it building 10M-key fixtures. SKIP_TABLES=1 leaves it out.
if [ -z "${SKIP_TABLES:-}" ]; then
  say "keyed tables (3 repetitions, medians; table and absl floor)"
  "$BUILD/bench/sluice_table_bench" --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true --benchmark_min_time=0.3 \
    --benchmark_filter='BM_Table<Gcra, (false|true)>|BM_Table<TokenBucket, false>/.*/0/|BM_Table<LeakyBucket, false>/.*/0/|BM_TableBatched<Gcra>/.*/0/|Dependent|BM_AbslFloor' \
    --benchmark_out="$OUT/table.json" --benchmark_out_format=json >"$OUT/table.txt" 2>&1 \
    || { cat "$OUT/table.txt" >&2; exit 1; }
  echo
  echo "Keyed tables (medians; raw: $OUT/table.txt):"
  grep '_median' "$OUT/table.txt" | sed 's/_median//; s/  */ /g'
fi
