# Thin wrapper over CMake presets: `make`, `make test`, `make run`, `make bench`.
PRESET ?= release
JOBS ?= $(shell nproc)
WERROR ?= $(if $(SLUICE_WERROR),$(SLUICE_WERROR),OFF)
BUILD := build/$(PRESET)

.PHONY: all deps configure build test test-asan run demo-replay bench bench-gateway bench-decision clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) -DSLUICE_WERROR=$(WERROR) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan:
	@$(MAKE) test PRESET=asan

# The main job: sluice as a gateway in front of a demo upstream (Ctrl-C stops both).
run: build
	@bash scripts/run-gateway.sh $(BUILD)/sluice examples/gateway.yaml

# Offline: a burst replayed through a token bucket and an nginx-style leaky bucket.
demo-replay: build
	@bash scripts/run-demo.sh $(BUILD)/sluice

bench: build
	@bash scripts/run-bench.sh $(BUILD)

# redis-benchmark: sluice CL.THROTTLE beside redis-server's EVALSHA token bucket and INCR.
bench-decision: build
	@/usr/bin/python3 bench/decision/run.py --build $(BUILD)

bench-gateway: build
	@bash bench/gateway/run.sh $(BUILD)

# wrk: GET /v1/check/{rule} (nginx auth_request's call) beside GET /healthz on the admin listener.
.PHONY: bench-check
bench-check: build
	@bash bench/decision/check_http.sh $(BUILD)

# The Redis backend: decisions/s per instance and Redis commands per decision, exact and leased,
# beside one EVALSHA per request (docs/performance.md#redis-backend).
.PHONY: bench-redis
bench-redis: build
	@/usr/bin/python3 bench/redis/run.py --build $(BUILD)

clean:
	rm -rf build
