#!/usr/bin/env bash
# Runs the chosen tests of a sanitizer build (make test-asan, make test-tsan) and fails on any
# sanitizer report, the sluice processes' that the integration tests start included: each
# sanitizer writes its reports to build/PRESET/sanitizer-logs/ (a report on stderr would be
# lost in a server's log), and any file there fails the run.
#   scripts/run-sanitized-tests.sh PRESET LABEL_REGEX
set -euo pipefail
cd "$(dirname "$0")/.."
preset=$1
labels=$2
build=build/$preset
logs=$PWD/$build/sanitizer-logs
supp=$PWD/tests/sanitizers
rm -rf "$logs"
mkdir -p "$logs"

# Tests that measure the release binary's memory or speed skip themselves under a sanitizer.
export SLUICE_SANITIZER=$preset
export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="log_path=$logs/tsan:suppressions=$supp/tsan.supp:second_deadlock_stack=1:history_size=4"

status=0
start=$(date +%s)
ctest --test-dir "$build" --output-on-failure -j "${JOBS:-$(nproc)}" -L "$labels" || status=$?
echo "$preset tests ($labels): $(( $(date +%s) - start )) s"
reports=("$logs"/*)
if [ -e "${reports[0]}" ]; then
  echo "$preset: ${#reports[@]} sanitizer report(s):"
  for f in "${reports[@]}"; do
    echo "== $f"
    head -n 80 "$f"
  done
  status=1
fi
exit $status
