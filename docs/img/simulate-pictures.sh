#!/usr/bin/env bash
# Makes the pictures of docs/algorithms.md ("Pictures: sluice simulate") and docs/simulate.md with
# `sluice simulate`; each line below is the command behind one picture. The output is the same
# byte for byte on every run (tests/cli/test_simulate_docs.py checks the committed files).
#   bash docs/img/simulate-pictures.sh [SLUICE_BINARY [OUTPUT_DIR]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sluice=${1:-$here/../../build/release/sluice}
out=${2:-$here}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# picture NAME PLOT ARGS...: `sluice simulate ARGS --svg`, keeping the plot PLOT as NAME.svg.
picture() {
  local name=$1 plot=$2
  shift 2
  "$sluice" simulate "$@" --svg "$tmp/p" >/dev/null
  cp "$tmp/p-$plot.svg" "$out/$name.svg"
}

picture simulate-boundary admitted --scenario boundary
picture simulate-burst admitted --scenario burst
picture simulate-burst-delay delay --scenario burst
picture simulate-diurnal admitted --scenario diurnal --plot rate --bucket 500ms
picture simulate-flood-fairness fairness --scenario flood
picture simulate-collapse-goodput goodput --scenario collapse
picture simulate-collapse-limit limit --scenario collapse
picture simulate-collapse-slows-limit limit --scenario collapse-slows
