#!/usr/bin/env bash
# Builds bench/onednn/onednn_versions.cc and nan_activations.cc twice, runs the NaN check and
# the timings (on 1 and 2 OpenMP threads) of each:
# against Debian's oneDNN 2.6 (libdnnl-dev, the one kiln loads) and against oneDNN 3.2 from
# PyPI (onednn-cpu-gomp 2023.2.0: libdnnl.so.3 on GNU OpenMP, no headers), compiled with the
# 3.x headers of onednn-devel 2026.1.0 (its C++ API calls only functions 3.2 has).
# Downloads the two wheels (about 40 MB) into a temporary directory; installs nothing.
# Usage: bash bench/onednn/compare.sh [python]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${1:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m pip download -q --no-deps -d "$work" onednn-cpu-gomp==2023.2.0 onednn-devel==2026.1.0
(cd "$work" && for w in *.whl; do unzip -q -o "$w" -d unpacked; done)
include3="$(dirname "$(find "$work/unpacked" -path '*include/oneapi/dnnl/dnnl.hpp' | head -1)")/../.."
lib3="$(dirname "$(find "$work/unpacked" -name 'libdnnl.so.3' | head -1)")"
for program in onednn_versions nan_activations; do
  g++ -O2 -std=c++20 "$here/$program.cc" -o "$work/${program}2" -ldnnl
  g++ -O2 -std=c++20 -I"$include3" "$here/$program.cc" -o "$work/${program}3" -L"$lib3" -l:libdnnl.so.3 \
    -Wl,-rpath,"$lib3"
done
grep -m1 "model name" /proc/cpuinfo
"$work/nan_activations2"
"$work/nan_activations3"
for threads in 1 2; do
  for build in onednn_versions2 onednn_versions3; do
    echo "== $build, OMP_NUM_THREADS=$threads"
    OMP_NUM_THREADS=$threads "$work/$build"
  done
done
