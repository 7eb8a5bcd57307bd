# Thin wrapper over CMake presets: `make`, `make test`, `make run`, `make bench` (`make help`
# lists every target). Up to date, `make run` is quick: no apt, no configure, a no-op ninja.
PRESET ?= release
JOBS ?= $(shell nproc)
# Warnings as errors: ON or OFF when given (WERROR= or SLUICE_WERROR=); unset, a build tree
# keeps what it was configured with (a new one: OFF), so `make bench-gateway` on CI's tree
# does not reconfigure and rebuild it all.
WERROR ?= $(SLUICE_WERROR)
BUILD := build/$(PRESET)
PREFIX ?= /usr/local
# make run: the gateway, admin and demo upstream ports on 127.0.0.1.
PORT ?= 8080
ADMIN_PORT ?= 9090
UPSTREAM_PORT ?= 8081
# What `build` builds: everything, or these targets only (the TSan run builds its suites).
TARGETS ?=
FUZZ_SECONDS ?= 60

# The sanitizer runs (docs/reliability.md#sanitizers says what each covers and why): ASan+UBSan
# over every unit suite, the CLI tests and the integration suites of the listeners; TSan over
# the concurrent parts: lock-free limiters, tables, local policies, the engine, the Redis client
# and store, and the gateway and admin listeners under reload.
ASAN_LABELS ?= ^(unit_.*|cli|integration_(gateway|admin|check|resp))$$
TSAN_LABELS ?= ^(unit_(core|api|engine|table|local|redis)|integration_(gateway|admin))$$
TSAN_TARGETS ?= unit_core unit_api unit_engine unit_table unit_local unit_redis sluice

.PHONY: all help deps configure build check test test-asan test-tsan fuzz run demo-replay bench bench-gateway bench-decision package install clean

all: build

deps:
	@bash scripts/install-deps.sh

# A shell test: WERROR was given and build tree $(1) was configured otherwise.
werror_changed = { [ -n "$(WERROR)" ] && ! grep -qx 'SLUICE_WERROR:BOOL=$(WERROR)' $(1)/CMakeCache.txt; }
werror_flag = $(if $(WERROR),-DSLUICE_WERROR=$(WERROR))

# Once per build tree (and again when WERROR changes): afterwards ninja re-runs CMake by itself
# whenever a CMakeLists.txt changes.
configure: deps
	@if [ ! -f $(BUILD)/build.ninja ] || $(call werror_changed,$(BUILD)); then \
	  cmake --preset $(PRESET) $(werror_flag) >/dev/null; \
	fi

build: configure
	@cmake --build $(BUILD) -j $(JOBS) $(if $(TARGETS),--target $(TARGETS))

# One build's own tests.
check: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# What CI runs (.ci/run): the release build's tests, then each fuzzer for 30 s, then the
# sanitizer runs. With another PRESET, that build's tests alone.
test: check
ifeq ($(PRESET),release)
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=30
	@$(MAKE) --no-print-directory test-asan
	@$(MAKE) --no-print-directory test-tsan
endif

test-asan:
	@$(MAKE) --no-print-directory build PRESET=asan
	@bash scripts/run-sanitized-tests.sh asan '$(ASAN_LABELS)'

test-tsan:
	@$(MAKE) --no-print-directory build PRESET=tsan TARGETS='$(TSAN_TARGETS)'
	@bash scripts/run-sanitized-tests.sh tsan '$(TSAN_LABELS)'

# libFuzzer (clang-14, ASan+UBSan): each target of tests/fuzz for FUZZ_SECONDS, from its seed
# corpus and regressions; a crash fails and is left in build/fuzz/tests/fuzz/work/TARGET/artifacts/.
fuzz: deps
	@if [ ! -f build/fuzz/build.ninja ] || $(call werror_changed,build/fuzz) || \
	    ! grep -qx 'SLUICE_FUZZ_SECONDS:STRING=$(FUZZ_SECONDS)' build/fuzz/CMakeCache.txt; then \
	  cmake --preset fuzz $(werror_flag) -DSLUICE_FUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null; \
	fi
	@cmake --build build/fuzz -j $(JOBS) --target sluice_fuzzers
	@ctest --test-dir build/fuzz --output-on-failure -j $(JOBS)

# The main job: sluice as a gateway in front of a demo upstream (Ctrl-C stops both), the access
# log on the terminal. PORT=, ADMIN_PORT=, UPSTREAM_PORT= move it off 8080, 9090, 8081.
run: build
	@PORT=$(PORT) ADMIN_PORT=$(ADMIN_PORT) UPSTREAM_PORT=$(UPSTREAM_PORT) \
	  bash scripts/run-gateway.sh $(BUILD)/sluice examples/gateway.yaml

# Offline: a burst replayed through a token bucket and an nginx-style leaky bucket.
demo-replay: build
	@bash scripts/run-demo.sh $(BUILD)/sluice

bench: build
	@bash scripts/run-bench.sh $(BUILD)

# redis-benchmark: sluice CL.THROTTLE beside redis-server's EVALSHA token bucket and INCR.
bench-decision: build
	@/usr/bin/python3 bench/decision/run.py --build $(BUILD)

# wrk through nginx limit_req, HAProxy and sluice, pinned, interleaved; CPU, latency and syscalls
# per request. DURATION= and REPS= (seconds per round, rounds), SYSCALLS=perf|strace|off,
# PROFILE=1 (perf record of each gateway), SLUICE_BASELINE=OLD_SLUICE (a fourth column).
bench-gateway: build
	@bash bench/gateway/run.sh $(BUILD)

# callgrind: user-space instructions per proxied request, sluice beside nginx (deterministic on
# a noisy machine); BASELINE=/path/to/older/sluice adds another binary beside them, named in
# the table by BASELINE_LABEL.
.PHONY: bench-instructions
bench-instructions: build
	@/usr/bin/python3 bench/gateway/instructions.py --build $(BUILD) $(if $(BASELINE),--baseline $(BASELINE) --baseline-label "$(BASELINE_LABEL)")

# Before and after: this build's core and table benchmarks beside another's, interleaved
# (BEFORE=DIR holding sluice_core_bench and sluice_table_bench).
.PHONY: bench-compare
bench-compare: build
	@test -n "$(BEFORE)" || { echo "make bench-compare BEFORE=DIR (an older build's bench/)"; exit 2; }
	@cmake --build $(BUILD) --target sluice_core_bench sluice_table_bench >/dev/null
	@/usr/bin/python3 bench/compare/run.py --before $(BEFORE) --after $(BUILD)/bench

# wrk: GET /v1/check/{rule} (nginx auth_request's call) beside GET /healthz on the admin listener.
.PHONY: bench-check
bench-check: build
	@bash bench/decision/check_http.sh $(BUILD)

# The Redis backend: decisions/s per instance and Redis commands per decision, exact and leased,
# beside one EVALSHA per request (docs/performance.md#redis-backend).
.PHONY: bench-redis
bench-redis: build
	@/usr/bin/python3 bench/redis/run.py --build $(BUILD)

# One hot key far over a limit kept in Redis: Redis calls per decision with the local refusal
# cache (redis.cache_denials: 1s) and without it (0s), interleaved in one run.
.PHONY: bench-hot-key
bench-hot-key: build
	@/usr/bin/python3 bench/redis/hot_key.py --build $(BUILD)

# Goodput of an upstream that collapses (C workers, S ms, unbounded queue) at 0.5x, 1x, 2x and 3x
# its capacity, open-loop, deadline 200 ms: no limiter, nginx limit_conn, HAProxy maxconn + timeout
# queue and sluice's static concurrency limit, in one run (docs/overload.md). OVERLOAD_STEP_SECONDS
# (default 30), OVERLOAD_WORKERS (16), OVERLOAD_SERVICE_MS (10) and OVERLOAD_ROUNDS (3) change
# the run.
OVERLOAD_STEP_SECONDS ?= 30
OVERLOAD_WORKERS ?= 16
OVERLOAD_SERVICE_MS ?= 10
OVERLOAD_ROUNDS ?= 3
.PHONY: bench-overload
bench-overload: build
	@/usr/bin/python3 bench/overload/run.py --build $(BUILD) --step-seconds $(OVERLOAD_STEP_SECONDS) \
	  --workers $(OVERLOAD_WORKERS) --service-ms $(OVERLOAD_SERVICE_MS) --rounds $(OVERLOAD_ROUNDS)

# The Debian packages (docs/packaging.md): $(BUILD)/sluice_<version>_amd64.deb and
# $(BUILD)/libsluice-dev_<version>_amd64.deb.
package: build
	@cd $(BUILD) && cpack -G DEB

# Everything under PREFIX (default /usr/local): the binary, man page, completion, config and unit,
# and libsluice with its headers, CMake package and sluice.pc.
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

help:
	@echo "make [all]         install missing Debian packages, build $(BUILD)/sluice"
	@echo "make test          build, then every test (unit, CLI, golden, integration, package),"
	@echo "                   each fuzzer for 30 s, test-asan and test-tsan: what CI runs"
	@echo "make check         one build's own tests (PRESET=release, asan, tsan...)"
	@echo "make test-asan     unit, CLI and listener suites under ASan and UBSan"
	@echo "make test-tsan     limiters, tables, policies, engine, Redis, gateway, admin: TSan"
	@echo "make fuzz          each libFuzzer target for FUZZ_SECONDS (default 60), clang-14"
	@echo "make run           sluice serve (examples/gateway.yaml) before a demo upstream"
	@echo "                   (PORT=8080 ADMIN_PORT=9090 UPSTREAM_PORT=8081)"
	@echo "make demo-replay   a burst replayed through a token bucket and a leaky bucket"
	@echo "make bench         core and table benchmarks beside their peers"
	@echo "make bench-gateway bench-decision bench-check bench-redis: the server benchmarks"
	@echo "make bench-overload goodput at 0.5x-3x an upstream's capacity: none, nginx, HAProxy,"
	@echo "                   sluice static and adaptive (OVERLOAD_STEP_SECONDS=30 OVERLOAD_WORKERS=16 OVERLOAD_SERVICE_MS=10)"
	@echo "make bench-compare BEFORE=DIR: core and table benchmarks, before and after, in one run"
	@echo "                   (bench-gateway takes SLUICE_BASELINE=OLD_SLUICE for the same)"
	@echo "make bench-instructions  instructions per gateway request beside nginx (callgrind;"
	@echo "                   BASELINE=OLD_SLUICE adds an older binary)"
	@echo "make package       the Debian packages (cpack)"
	@echo "make install       cmake --install to PREFIX=$(PREFIX)"
	@echo "make clean         remove build/"

clean:
	rm -rf build
