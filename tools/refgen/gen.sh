#!/bin/sh
# Rebuild the reference generators and regenerate every golden file under tests/golden/.
# Needs go (GOPATH mode, golang-golang-x-time-dev) and a JDK with /usr/share/java/guava.jar.
# `make test` does NOT need any of this: the goldens are committed.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${REFGEN_BUILD:-$HERE/build}          # /tools/refgen/build/ is git-ignored
GUAVA_JAR=${GUAVA_JAR:-/usr/share/java/guava.jar}
PY=${PYTHON:-/usr/bin/python3}
mkdir -p "$BUILD/gocache" "$BUILD/guava-classes"

echo "refgen: building xtime (golang.org/x/time/rate from /usr/share/gocode)"
(cd "$HERE/xtime" && GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= GOCACHE="$BUILD/gocache" \
    go build -o "$BUILD/xtime" main.go)

echo "refgen: building RefGen.java against $GUAVA_JAR"
javac -cp "$GUAVA_JAR" -d "$BUILD/guava-classes" "$HERE/guava/RefGen.java"

"$PY" "$HERE/make_traces.py" "$ROOT/tests/golden/traces"
"$PY" "$HERE/gen_goldens.py" --xtime "$BUILD/xtime" \
    --guava-cp "$BUILD/guava-classes:$GUAVA_JAR" --golden-dir "$ROOT/tests/golden"
du -sh "$ROOT/tests/golden"
