#!/bin/sh
# tfjs_interop: kiln writes TensorFlow.js models ($1: the generator), the real TensorFlow.js
# (node, tests/tfjs/node_modules) runs them. Without node it is skipped (exit 77), unless
# KILN_REQUIRE_TFJS=1 (CI), where a missing node is a failure.
set -eu
models_tool="$1"; work="$2"; here="$(cd "$(dirname "$0")" && pwd)"
node_bin="$(command -v node || true)"
if [ -z "$node_bin" ] || [ ! -d "$here/node_modules/@tensorflow/tfjs" ]; then
  echo "tfjs_interop: SKIPPED: needs node and @tensorflow/tfjs (make deps installs both)"
  if [ "${KILN_REQUIRE_TFJS:-0}" = 1 ]; then echo "tfjs_interop: KILN_REQUIRE_TFJS=1: failing"; exit 1; fi
  exit 77
fi
rm -rf "$work"
"$models_tool" "$work"
"$node_bin" "$here/run_model.js" "$work/cases.json"
