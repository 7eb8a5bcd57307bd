# Thin wrapper over CMake presets: `make`, `make test`, `make run`, `make bench`.
PRESET ?= release
JOBS ?= $(shell nproc)
WERROR ?= $(if $(SLUICE_WERROR),$(SLUICE_WERROR),OFF)
BUILD := build/$(PRESET)

.PHONY: all deps configure build test test-asan run bench bench-gateway clean

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

run: build
	@bash scripts/run-demo.sh $(BUILD)/sluice

bench: build
	@bash scripts/run-bench.sh $(BUILD)

bench-gateway: build
	@bash bench/gateway/run.sh $(BUILD)

clean:
	rm -rf build
