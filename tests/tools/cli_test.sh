#!/usr/bin/env bash
# The kiln program on a saved model: show, run (JSON and .npy inputs), graph in each
# format, export-tfjs, --help, and errors (stderr, non-zero exit).
set -euo pipefail
kiln="$1"
dir="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect() {  # expect PATTERN FILE
  grep -q -- "$1" "$2" || { echo "--- $2:"; cat "$2"; fail "expected '$1'"; }
}

"$kiln" show "$dir" > "$work/show"
expect "serving_default(x, steps)" "$work/show"
expect "x: float32 Tensor, shape=(None, 2)" "$work/show"
expect "Nodes: .* traced, .* after optimization" "$work/show"
expect "dense/kernel: float32 (2, 3)" "$work/show"

"$kiln" run "$dir" --input 'x=[[1,2],[-1,0.5]]' --input steps=3 > "$work/run"
expect "output_0: kiln.Tensor(" "$work/run"
expect "output_1: kiln.Tensor(" "$work/run"

# The same input as a .npy file (version 1.0 header, little-endian float32, C order).
printf '\x93NUMPY\x01\x00' > "$work/x.npy"
header="{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"
while [ $(( (10 + ${#header} + 1) % 64 )) -ne 0 ]; do header="$header "; done
printf "\\x$(printf %02x $(( (${#header} + 1) % 256 )))\\x$(printf %02x $(( (${#header} + 1) / 256 )))" >> "$work/x.npy"
printf '%s\n' "$header" >> "$work/x.npy"
printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x80\xbf\x00\x00\x00\x3f' >> "$work/x.npy"  # 1, 2, -1, 0.5
"$kiln" run "$dir" --input "x=$work/x.npy" --input steps=3 > "$work/run_npy"
cmp "$work/run" "$work/run_npy" || fail ".npy input gives different outputs than JSON"

"$kiln" graph "$dir" --format pbtxt > "$work/g.pbtxt"
expect 'op: "StatelessWhile"' "$work/g.pbtxt"
expect 'op: "VarHandleOp"' "$work/g.pbtxt"
"$kiln" graph "$dir" --format dot --optimized -o "$work/g.dot"
expect "digraph" "$work/g.dot"
"$kiln" graph "$dir" --format svg -o "$work/g.svg"
expect "<svg" "$work/g.svg"
"$kiln" export-tfjs "$dir" "$work/web" > /dev/null
expect '"format":"graph-model"' "$work/web/model.json"
test -s "$work/web/group1-shard1of1.bin" || fail "no weight shard"

for c in show run graph export-tfjs; do
  "$kiln" "$c" --help > "$work/help" && expect "usage: kiln $c" "$work/help"
done

# Errors go to stderr with a non-zero exit.
set +e
"$kiln" run "$dir" --input 'x=[[1,2]]' > "$work/out" 2> "$work/err"; rc=$?
[ $rc -eq 2 ] || fail "missing input: exit $rc"; expect "missing --input steps" "$work/err"
"$kiln" run "$dir" --input 'x=[[1,2],[3]]' --input steps=1 > "$work/out" 2> "$work/err"; rc=$?
[ $rc -eq 1 ] || fail "ragged input: exit $rc"; expect "ragged" "$work/err"
"$kiln" run "$dir" --input 'x=[1,2]' --input steps=1 > "$work/out" 2> "$work/err"; rc=$?
[ $rc -eq 1 ] || fail "wrong shape: exit $rc"; expect "Could not find matching function" "$work/err"
"$kiln" show "$work/nowhere" > "$work/out" 2> "$work/err"; rc=$?
[ $rc -eq 1 ] || fail "missing dir: exit $rc"; expect "NotFoundError" "$work/err"
[ ! -s "$work/out" ] || fail "errors must not go to stdout"
"$kiln" graph "$dir" --format png > "$work/out" 2> "$work/err"; rc=$?
[ $rc -eq 2 ] || fail "bad format: exit $rc"; expect "unknown format 'png'" "$work/err"
"$kiln" frobnicate > "$work/out" 2> "$work/err"; rc=$?
[ $rc -eq 2 ] || fail "bad command: exit $rc"
echo "cli tests passed"
