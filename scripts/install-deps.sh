#!/usr/bin/env bash
# Installs, with apt-get, only the Debian packages kiln needs that are missing. Idempotent.
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  ccache                 # the wheel's build reuses the release build's objects (Makefile)
  libeigen3-dev          # GEMM fallback, vectorized math
  libgtest-dev libgmock-dev libbenchmark-dev
  libprotobuf-dev protobuf-compiler   # GraphDef
  nlohmann-json3-dev     # manifests (save/load)
  libopenblas-dev        # large float GEMM (loaded at run time; Eigen if absent)
  libdnnl-dev            # float32 convolutions on oneDNN (loaded at run time; kiln's own if absent)
  graphviz               # kiln graph --format svg
  libssl-dev             # SHA-256 checksums of saved files (libcrypto)
  zlib1g-dev             # GZIP and ZLIB TFRecord files (kiln.data)
  clang libclang-rt-14-dev  # the loader fuzz target (libFuzzer + ASan)
  clang-format           # make format, make format-check (CI)
  openmpi-bin libopenmpi-dev  # kiln.distribute: collectives over MPI, mpirun (kiln builds without them)
  r-base-core r-cran-rcpp r-cran-testthat r-cran-magrittr r-cran-bench  # the R package (make r), its tour
  qemu-user              # tests on emulated AVX2-only and baseline x86-64 CPUs (no AVX-512 there)
)

# `make bench-peers` only: LibTorch, a peer in the benchmark table (never needed by kiln).
if [ "${KILN_BENCH_PEERS:-0}" = 1 ]; then packages+=(libtorch-dev); fi

# Node.js runs the TensorFlow.js interop tests; any node >= 18 will do (Debian's or another).
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# TensorFlow.js (pure-JS CPU backend) for the interop tests, pinned by package-lock.json.
tfjs_dir="$(dirname "$0")/../tests/tfjs"
if [ ! -d "$tfjs_dir/node_modules/@tensorflow/tfjs" ]; then
  echo "install-deps: npm ci in tests/tfjs (@tensorflow/tfjs 4.22)"
  (cd "$tfjs_dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
