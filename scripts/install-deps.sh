#!/usr/bin/env bash
# Installs, with apt-get, only the Debian packages kiln needs that are missing. Idempotent.
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  libeigen3-dev          # GEMM fallback, vectorized math
  libgtest-dev libgmock-dev libbenchmark-dev
  libprotobuf-dev protobuf-compiler   # GraphDef
  nlohmann-json3-dev     # manifests (save/load)
  libopenblas-dev        # large float GEMM (loaded at run time; Eigen if absent)
  graphviz               # kiln graph --format svg
  libssl-dev             # SHA-256 checksums of saved files (libcrypto)
  clang libclang-rt-14-dev  # the loader fuzz target (libFuzzer + ASan)
)

# Node.js runs the TensorFlow.js interop tests; any node >= 18 will do (Debian's or another).
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
