# kiln: the two commands are `make demo` and `make test`.
JOBS ?= $(shell nproc)
BUILD ?= build
# Local builds are tuned for this CPU; an installable build (plain cmake) is not.
CMAKE_FLAGS ?= -DKILN_NATIVE=ON

.PHONY: all deps build demo test bench asan tsan fuzz format format-check clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/Makefile:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

# The guided tour of the library.
demo: build
	cd $(BUILD) && ./examples/tour

# Every test.
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD)/bench/kiln_bench --benchmark_min_time=0.2

# ASan + UBSan build of the whole suite.
asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=address -DKILN_BUILD_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) -E install_package_consumer

# ThreadSanitizer build of the whole suite.
tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=thread -DKILN_BUILD_BENCH=OFF
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS) -E install_package_consumer

# The loader under libFuzzer with ASan (clang), for FUZZ_SECONDS (default 60).
FUZZ_SECONDS ?= 60
fuzz: deps
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DKILN_FUZZ=ON \
	  -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_EXAMPLES=OFF
	cmake --build build-fuzz -j $(JOBS) --target load_fuzzer
	mkdir -p build-fuzz/corpus
	cd build-fuzz && ASAN_OPTIONS=detect_leaks=1 KILN_FUZZ_SEED_DIR=corpus ./fuzz/load_fuzzer corpus \
	  -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 -malloc_limit_mb=2048 -print_final_stats=1

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

# Fails, listing the places, when a C++ file is not as clang-format (.clang-format) writes it.
format-check: deps
	clang-format --dry-run --Werror $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf build build-asan build-tsan build-fuzz
