#!/usr/bin/env bash
# make wheel-test: installs dist/kiln-*.whl into a fresh venv (no source tree on its path),
# checks the package and the kiln command, then runs Python tests against the installed
# package. TensorFlow and pytest (the tests' oracle and runner) come from the dev venv's
# site-packages, appended after the fresh venv's own (its .pth files, such as kiln-dev.pth,
# are not processed), so `import kiln` can only find the wheel's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEV_PYTHON=${DEV_PYTHON:-$ROOT/.venv/bin/python}
WORK=${WORK:-$ROOT/build/wheel-test}
TESTS=${WHEEL_TESTS:-"test_version.py test_doc_examples.py test_ops_oracle.py test_tf_saved_model.py test_saved_model_save.py test_cpu_isa_levels.py test_function_oracle.py test_config.py test_data_oracle.py"}
wheel=$(ls "$ROOT"/dist/kiln-*.whl | head -1)
rm -rf "$WORK" && mkdir -p "$WORK/run"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "$wheel"
site=$("$WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
dev_site=$("$DEV_PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cd "$WORK/run"
"$WORK/venv/bin/python" - "$ROOT" <<'PY'
import os, sys
import kiln
root = sys.argv[1]
assert not os.path.abspath(kiln.__file__).startswith(root + "/python"), kiln.__file__
info = kiln.sysconfig.get_build_info()
print("installed:", kiln.__file__, kiln.__version__, dict(info))
# scipy-openblas32's, through KILN_OPENBLAS_LIBRARY (float32 goes to oneDNN on AVX-512 CPUs with libdnnl)
assert "openblas" in info["gemm_library"], info
x = kiln.ones([300, 300])
assert float(kiln.reduce_sum(kiln.matmul(x, x))) == 300.0 ** 3
assert abs(float(kiln.math.erfc(kiln.zeros([20]))[0]) - 1.0) < 1e-6  # erfc's vector path (libmvec)
maps = open("/proc/self/maps").read()
assert "libscipy_openblas" in maps, "the product did not run on scipy-openblas32's OpenBLAS"
# At run time too, nothing comes from the system but glibc, libstdc++, libgcc, zlib, what
# Python's own standard-library modules load (libffi for ctypes, libbz2, liblzma), glibc's
# vector math library (libmvec, which kiln opens at run time for float32 erfc), and oneDNN
# where the system has it: kiln looks for libdnnl.so.2 (and its libgomp, libOpenCL) at run
# time for float32 convolutions and runs its own kernels without it (docs/perf/dispatch.md).
import re
allowed = re.compile(r"/(ld-linux-x86-64|libc|libm|libmvec|libpthread|libdl|librt|libgcc_s|libstdc\+\+|libz|libffi|libbz2|liblzma"
                     r"|libdnnl|libgomp|libOpenCL)\.so")
assert info["convolution_library"].startswith(("onednn", "kiln (")), info
system = {l.split()[-1] for l in maps.splitlines() if ".so" in l and l.split()[-1].startswith(("/usr/", "/lib"))}
stray = sorted(p for p in system if not allowed.search(p))
assert not stray, f"system libraries loaded: {stray}"
PY
"$WORK/venv/bin/kiln" --help | head -3
"$WORK/venv/bin/kiln" --version
# Every shared library in the wheel needs nothing outside glibc, libstdc++, libgcc and zlib
# (manylinux's allowed set) once installed.
for so in $(find "$site/kiln" "$site/kiln.libs" -name '*.so*' -o -path '*/_bin/kiln' -type f); do
  if LD_LIBRARY_PATH= ldd "$so" | grep -v -E 'linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libz\.so|libpthread|libdl\.so|librt\.so|kiln\.libs|/kiln/' ; then
    echo "wheel-test: $so needs a library from outside the wheel" >&2
    exit 1
  fi
done
# The sdist holds exactly the tracked files (an exclude pattern once dropped a header).
if git -C "$ROOT" rev-parse --git-dir > /dev/null 2>&1; then
  (cd "$ROOT" && "$DEV_PYTHON" -c "from scikit_build_core.build import build_sdist; build_sdist('$WORK/sdist')" > /dev/null)
  sdist=$(ls "$WORK"/sdist/kiln-*.tar.gz)
  top=$(basename "$sdist" .tar.gz)
  if ! diff <(git -C "$ROOT" ls-files | sort) \
            <(tar tzf "$sdist" | grep -v '/$' | sed "s|^$top/||" | grep -v '^PKG-INFO$' | sort); then
    echo "wheel-test: the sdist's files differ from the tracked files (above)" >&2
    exit 1
  fi
fi
echo "$dev_site" > "$site/zz_dev_site.pth"
cd "$WORK/run"
args=()
for t in $TESTS; do args+=("$ROOT/python/tests/$t"); done
"$WORK/venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$WORK/run" "${args[@]}"
