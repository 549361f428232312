# lowbit: `make run` and `make test` install what is missing, build, and run.
BUILD      ?= build
BUILD_TYPE ?= Release
CMAKE_ARGS ?=
GEN        := -G Ninja

.PHONY: all setup build run test test-native test-asan test-tsan test-qemu-x86 test-aarch64 \
        bench fuzz cross-aarch64 install clean

all: build

setup:
	@bash scripts/setup.sh test

configure = cmake -S . -B $(BUILD) $(GEN) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: setup
	@$(configure)
	@cmake --build $(BUILD)

# The main demonstration: model layers packed, explained, checked and timed. Builds only the
# library and the command (the tests are `make test`'s).
run:
	@bash scripts/setup.sh run
	@$(configure)
	@cmake --build $(BUILD) --target lowbit_cli
	@./$(BUILD)/tools/lowbit run

# The whole suite: native, sanitizers, the x86 CPU-model matrix, the aarch64 cross build.
test: setup
	@bash scripts/test_all.sh

test-native: build
	@cd $(BUILD) && ctest --output-on-failure -j2

test-asan: setup
	@bash scripts/test_all.sh asan

test-tsan: setup
	@bash scripts/test_all.sh tsan

test-qemu-x86: build
	@bash scripts/test_qemu_x86.sh $(BUILD)

test-aarch64: setup
	@bash scripts/test_aarch64.sh

bench: setup
	@bash scripts/setup.sh bench
	@cmake -S . -B $(BUILD)-bench $(GEN) -DCMAKE_BUILD_TYPE=Release -DLOWBIT_BUILD_BENCH=ON >/dev/null
	@cmake --build $(BUILD)-bench
	@./$(BUILD)-bench/bench/bench_kernels --benchmark_repetitions=15 --benchmark_report_aggregates_only=true

# Every libFuzzer harness (fuzz/) for FUZZ_SECONDS each: docs/fuzzing.md.
FUZZ_SECONDS ?= 60
fuzz: setup
	@bash scripts/fuzz.sh $(FUZZ_SECONDS)

cross-aarch64:
	@bash scripts/cross_aarch64.sh "$(PREFIX)"

install: build
	@cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX),)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-bench build-aarch64 build-fuzz
