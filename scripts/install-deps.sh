#!/usr/bin/env bash
# Installs the Debian 12 packages Sluice builds, tests and benchmarks with.
# Idempotent: packages already installed are skipped, apt runs only when something is missing.
set -euo pipefail

PACKAGES=(
  # build
  g++ cmake ninja-build make pkg-config
  # libraries
  libcli11-dev libfmt-dev libspdlog-dev libxxhash-dev libboost-json1.81-dev libyaml-cpp-dev libboost1.81-dev libhiredis-dev libssl-dev libabsl-dev libhowardhinnant-date-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev python3 python3-pytest valgrind
  # fuzzers (make fuzz): clang with libFuzzer and the sanitizer runtimes, llvm-symbolizer
  clang-14 libclang-rt-14-dev llvm-14
  # real peers and clients the integration tests start: nginx, curl, wrk, python requests
  nginx-light curl wrk python3-requests
  # HAProxy: the overload benchmark's other limiting proxy (maxconn + timeout queue) and
  # bench-gateway's third gateway; strace and perf count a gateway's syscalls and profile it
  haproxy strace linux-perf
  redis-server redis-sentinel redis-tools python3-redis
  # Envoy rate limit service: gRPC/protobuf C++ and codegen, and the Python client of its tests
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  python3-grpcio python3-grpc-tools python3-protobuf
  # the raw HTTP/2 client of the RLS stream tests (its HPACK encoder; it brings python3-hpack)
  python3-h2
  # the metrics reference test parses /metrics with the Prometheus client's own parser
  python3-prometheus-client
  # shipping (docs/packaging.md): systemd readiness, the man page, the .deb (dpkg-shlibdeps and
  # file for CPack) and its tests (dpkg-deb, systemd-analyze verify, man -l, lintian)
  libsystemd-dev help2man dpkg-dev file systemd man-db lintian
  # the dashboard test (tests/integration/ui): headless Chromium, driven by puppeteer-core
  # under node (npm ci below)
  chromium nodejs
)

# puppeteer-core for the dashboard test, at the version its package-lock.json pins.
install_ui_test_deps() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/integration/ui"
  # Debian's npm conflicts with a nodejs that brings its own (NodeSource's): only when missing.
  if ! command -v npm >/dev/null; then
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends npm
  fi
  if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
     [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    echo "install-deps: npm ci in tests/integration/ui"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
}

# One dpkg-query for all of them (a call per package costs about 10 ms each: `make run` and
# `make` pass through here every time).
declare -A installed=()
while read -r status package; do
  [[ $status == ii ]] && installed[$package]=1
done < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${PACKAGES[@]}" 2>/dev/null || true)
missing=()
for p in "${PACKAGES[@]}"; do
  [[ -n ${installed[$p]:-} ]] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  install_ui_test_deps
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_ui_test_deps
