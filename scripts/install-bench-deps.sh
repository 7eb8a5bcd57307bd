#!/usr/bin/env bash
# Installs the Debian 12 packages the peer benchmarks of `make bench` need: Go with
# golang.org/x/time/rate 0.3.0, and a JDK 17 with Guava 31.1. (Sluice's own benchmark needs only
# libbenchmark-dev, which scripts/install-deps.sh installs.)
# Idempotent: what is installed is skipped, apt runs only when something is missing. Any JDK
# that provides java and javac counts as default-jdk-headless (Debian 12's is OpenJDK 17).
set -euo pipefail

PACKAGES=(golang-go golang-golang-x-time-dev libguava-java default-jdk-headless)

installed() {
  if [ "$1" = default-jdk-headless ] && command -v javac >/dev/null && command -v java >/dev/null; then
    return 0
  fi
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-bench-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
