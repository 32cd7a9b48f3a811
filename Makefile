# kiln: the two commands are `make demo` and `make test`.
JOBS ?= $(shell nproc)
BUILD ?= build
# Python packages (python/requirements.txt, pinned) live in this venv; pip's cache is the user's.
VENV ?= .venv
PYTHON := $(CURDIR)/$(VENV)/bin/python
# Local builds are the build a user installs (pip install ., plain cmake): one portable binary
# whose hot kernels pick the CPU's instruction set at load time (src/core/cpu_isa.h), so the
# numbers measured here are the numbers users get. KILN_NATIVE=ON (-march=native) remains
# for experiments; it is said OFF here so that a build directory configured with it before
# is reset. They also build the Python extension into python/kiln, which the venv imports
# (kiln-dev.pth).
CMAKE_FLAGS ?= -DKILN_NATIVE=OFF -DKILN_PYTHON=ON -DKILN_R=ON -DPython_EXECUTABLE=$(PYTHON)
# ccache (when installed; `make deps` installs it) lets the wheel's build reuse the objects the
# release build compiled: the two compile the library with the same flags (MPI only in the
# communicator), the same compiler name, and from build directories at the same depth (the
# base directory makes their absolute paths relative). Depend mode hashes the compiler's own
# dependency list (-MD) instead of running the preprocessor once more on every miss.
CCACHE := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_DEPEND := 1
LAUNCHER := -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE)
endif
# The compiler both take (scikit-build-core would otherwise name Python's, g++, where CMake's
# default is c++: the same program under another name, which ccache counts as another).
WHEEL_CXX := $(if $(filter environment%,$(origin CXX)),$(CXX),c++)

.PHONY: all deps venv build wheel wheel-test sdist r demo test pytest docs bench bench-distribute bench-python bench-peers asan tsan fuzz format format-check clean

all: build

deps:
	@bash scripts/install-deps.sh

venv: $(VENV)/.installed
$(VENV)/.installed: python/requirements.txt
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q -r python/requirements.txt
	echo "$(CURDIR)/python" > "$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/kiln-dev.pth"
	touch $@

$(BUILD)/Makefile: | $(VENV)/.installed
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) $(LAUNCHER)

# Configured again each time (a second or two, nothing rebuilt when nothing changed), so a
# build directory made with other flags, such as KILN_NATIVE=ON, gets these.
build: deps venv $(BUILD)/Makefile
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS) $(LAUNCHER) > /dev/null
	cmake --build $(BUILD) -j $(JOBS)

# A self-contained wheel in dist/ (docs/python.md): pip builds it (the same portable build as
# `pip install .`, but without MPI, whose runtime cannot travel in a wheel), then auditwheel
# copies the shared libraries it links (protobuf, OpenSSL's libcrypto, zlib) into it and tags
# it manylinux. OpenBLAS comes from the scipy-openblas32 wheel it depends on.
wheel: deps venv
	rm -rf $(BUILD)/wheel-raw dist
	$(if $(CCACHE),$(CCACHE) --zero-stats > /dev/null)
	CXX=$(WHEEL_CXX) CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(PYTHON) -m pip wheel --no-deps -q -w $(BUILD)/wheel-raw \
	  -C build-dir=$(BUILD)-wheel -C cmake.define.KILN_MPI=OFF $(if $(CCACHE),-C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE)) .
	$(if $(CCACHE),$(CCACHE) --show-stats | grep -E 'Hits|Misses' | head -2)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PYTHON) -m auditwheel repair -w dist $(BUILD)/wheel-raw/kiln-*.whl
	@ls -l dist/

# The wheel installed into a fresh venv, checked from outside the source tree: import, the
# kiln command, its libraries' dependencies, then Python tests against it (scripts/wheel_test.sh).
wheel-test: wheel
	bash scripts/wheel_test.sh

# A source distribution (dist/kiln-<version>.tar.gz): builds where the build dependencies
# are present, and names each missing one (with its Debian package) where they are not.
sdist: venv
	$(PYTHON) -c "from scikit_build_core.build import build_sdist; print(build_sdist('dist'))"

# The R package (r/): built over this build's libkiln with Rcpp and installed into R's
# library (R CMD INSTALL's default: the site library), where ctest's testthat run finds it.
r: build
	KILN_INCLUDE_DIR=$(CURDIR)/include KILN_LIB_DIR=$(CURDIR)/$(BUILD) MAKEFLAGS=-j$(JOBS) \
	  R CMD INSTALL --preclean --no-test-load --no-docs --no-html --no-multiarch r

# The guided tours: C++, Python, then R.
demo: build r
	cd $(BUILD) && ./examples/tour
	$(PYTHON) examples/tour.py
	Rscript examples/tour.R

# Every test: ctest (C++), then pytest (Python, with TensorFlow as the oracle).
test: build r
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@grep -h "^testthat:" $(BUILD)/Testing/Temporary/LastTest.log || echo "testthat: not run (KILN_R off)"
	$(MAKE) --no-print-directory pytest

# Spread over the cores by pytest-xdist (each worker imports TensorFlow once).
pytest: build
	$(PYTHON) -m pytest -q -n $(JOBS) python/tests

# docs/ops.md, generated from the op registry (a test fails when it is stale).
docs: build
	PYTHONPATH=python $(PYTHON) scripts/gen_op_docs.py

bench: build
	./$(BUILD)/bench/kiln_bench --benchmark_min_time=0.2

# kiln's allreduce against a raw MPI_Allreduce of the same bytes, two ranks on this machine.
bench-distribute: build
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --oversubscribe ./$(BUILD)/bench/distribute_bench

# From Python, in one run each: eager ops against TensorFlow, numpy, JAX (and torch when
# installed); cached kiln.function calls against tf.function and jax.jit.
bench-python: build
	$(PYTHON) bench/python/bench_eager.py
	$(PYTHON) bench/python/bench_function.py

# The same workloads in kiln, TensorFlow (eager, tf.function, XLA), JAX and ONNX Runtime: one
# table, its JSON and a plot of the ratios. A peer that cannot be installed is skipped, saying so.
# Then the real models (Keras applications exported by TensorFlow) served by kiln and TensorFlow
# at batch 1 and 32, one and two threads (bench/python/bench_models.py).
bench-peers: build
	KILN_BENCH_PEERS=1 bash scripts/install-deps.sh || echo "(libtorch-dev not installed: the LibTorch columns are skipped)"
	cmake $(BUILD) >/dev/null && cmake --build $(BUILD) -j $(JOBS)
	$(PYTHON) -m pip install -q -r python/requirements-bench.txt || echo "(benchmark-only peers not installed: their columns are skipped)"
	$(PYTHON) bench/python/bench_peers.py --json $(BUILD)/bench_peers.json
	$(PYTHON) bench/python/plot_peers.py $(BUILD)/bench_peers.json $(BUILD)/bench_peers.png || echo "(matplotlib missing: no plot)"
	$(PYTHON) bench/python/bench_models.py --json $(BUILD)/bench_models.json
	@echo "tables: above; JSON: $(BUILD)/bench_peers.json, $(BUILD)/bench_models.json; plot: $(BUILD)/bench_peers.png"

# The sanitizer and fuzz builds: -O1 with line tables only (-g1), the level the sanitizers'
# authors recommend for tests. RelWithDebInfo's -O2 -g compiled 2.5x slower under ASan+UBSan
# (binary.cc 180 s against 67; linalg.cc 94 against 36) and 1.8x under TSan, and those builds
# were most of CI's hour; reports keep their file:line stacks.
SANITIZER_BUILD := -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"

# ASan + UBSan build of the whole suite (without MPI, whose own start-up allocations the leak
# checker would report; the collectives run in the plain build's tests). Clang's, with
# libFuzzer's coverage hooks, so that the same build also serves `make fuzz`: the two were
# separate builds of the whole library (GCC's ASan, Clang's libFuzzer), a quarter of CI's time,
# and the sanitizer builds are now GCC's TSan and Clang's ASan. The sanitizer runs
# hold the kernels to the lower instruction-set levels (src/core/cpu_isa.h): ASan AVX2 (whose
# kernels read and write past rows on purpose), TSan the x86-64 baseline; make test and the
# fuzzer run the CPU's own level. LeakSanitizer's exit-time scan crashes now and then ("Tracer
# caught signal 11") in a process that has loaded oneDNN and its OpenMP runtime, even on one
# OpenMP thread, so the whole suite runs with leak checks and oneDNN off (KILN_ONEDNN=0: kiln's
# own convolutions), then the convolution tests again on oneDNN with ASan and UBSan's checks
# but no leak scan.
ASAN_ENV := KILN_CPU_ISA=avx2 OMP_THREAD_LIMIT=1 UBSAN_OPTIONS=print_stacktrace=1
ASAN_CONFIGURE := cmake -S . -B build-asan $(SANITIZER_BUILD) -DCMAKE_CXX_COMPILER=clang++ -DKILN_SANITIZE=address \
  -DKILN_FUZZ=ON -DKILN_BUILD_BENCH=OFF -DKILN_MPI=OFF
asan: deps
	$(ASAN_CONFIGURE)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && $(ASAN_ENV) KILN_ONEDNN=0 ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 ctest --output-on-failure -j $(JOBS) -E install_package_consumer
	cd build-asan && $(ASAN_ENV) ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 ctest --output-on-failure -j $(JOBS) -R 'OneDnn|Conv'

# ThreadSanitizer build of the whole suite (without MPI, as ASan).
tsan: deps
	cmake -S . -B build-tsan $(SANITIZER_BUILD) -DKILN_SANITIZE=thread -DKILN_BUILD_BENCH=OFF -DKILN_MPI=OFF
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && KILN_CPU_ISA=baseline TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS) -E install_package_consumer

# The fuzzers in the ASan build (Clang's, above: `make asan` first leaves nothing to build),
# FUZZ_SECONDS each (default 60): the kernel fuzzer (every op row x dtype, eager against
# traced) and the loader under libFuzzer.
# FUZZ_SEED picks the kernel fuzzer's cases (CI keeps 1, so a red run replays; any other
# number explores new ones).
FUZZ_SECONDS ?= 60
FUZZ_SEED ?= 1
fuzz: deps
	$(ASAN_CONFIGURE)
	cmake --build build-asan -j $(JOBS) --target load_fuzzer kernel_fuzz
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ./fuzz/kernel_fuzz --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED)
	mkdir -p build-asan/corpus
	$(PYTHON) fuzz/make_tf_seeds.py build-asan/corpus || echo "(no TensorFlow in $(VENV): no seeds TensorFlow wrote)"
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 KILN_FUZZ_SEED_DIR=corpus ./fuzz/load_fuzzer corpus \
	  -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 -malloc_limit_mb=2048 -print_final_stats=1

format:
	clang-format -i $$(git ls-files '*.h' '*.cc' '*.cpp')

# Fails, listing the places, when a C++ file is not as clang-format (.clang-format) writes it.
format-check: deps
	clang-format --dry-run --Werror $$(git ls-files '*.h' '*.cc' '*.cpp')

clean:
	rm -rf build build-wheel build-asan build-tsan build-fuzz python/kiln/_core*.so
