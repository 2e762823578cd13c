#!/bin/sh
# tests/gpu/run.sh — the GPU suite (`make test-gpu`): builds and runs tests/gpu/test_cuda
# (every variant x option verified, overlap, pageable, events vs CUPTI, conditions), then
# runs the real binary once ($STREAMLAB_BIN run SPEC.json) on the GPU. Where there is no
# GPU it prints "gpu: skipped (no GPU)" and exits 0. Last line: "gpu: N passed, M failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
# The build folder: $BUILD, else the one $STREAMLAB_BIN was built in, else build/.
if [ -z "${BUILD:-}" ]; then
    if [ -n "${STREAMLAB_BIN:-}" ]; then BUILD=$(dirname "$STREAMLAB_BIN"); else BUILD=build; fi
fi
MAKE=${MAKE:-make}

if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu: skipped (no GPU)"
    exit 0
fi

# The Makefile includes tests/gpu/gpu.mk; until it does, name it here.
mkfiles=""
grep -q 'tests/gpu/gpu.mk' Makefile || mkfiles="-f Makefile -f tests/gpu/gpu.mk"
# shellcheck disable=SC2086
if ! $MAKE --no-print-directory -s $mkfiles BUILD="$BUILD" "$BUILD/tests/gpu/test_cuda"; then
    echo "gpu: 0 passed, 1 failed (test_cuda did not build)"
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BUILD/tests/gpu/test_cuda" 2>&1 | tee "$tmp/log" | sed '/^gpu: [0-9]* passed, [0-9]* failed$/d'
summary=$(tail -n 1 "$tmp/log")
case "$summary" in
"gpu: skipped"*) exit 0 ;;
esac
passed=$(printf '%s\n' "$summary" | sed -n 's/^gpu: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
failed=$(printf '%s\n' "$summary" | sed -n 's/^gpu: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
if [ -z "$passed" ]; then
    echo "  FAIL test_cuda ended without its summary line (crashed?): $summary"
    passed=0
    failed=1
fi

# The real binary, end to end: one experiment through `streamlab run` on the GPU.
if [ -n "${STREAMLAB_BIN:-}" ] && [ -x "$STREAMLAB_BIN" ]; then
    printf '%s\n' '{"variant":"async_v1","size":"2^22","streams":4,"reps":3,"warmup":1,"backend":"cuda","label":"test-gpu"}' >"$tmp/spec.json"
    if "$STREAMLAB_BIN" run "$tmp/spec.json" >"$tmp/out.json" 2>"$tmp/err.txt" &&
        tr -d ' \n' <"$tmp/out.json" | grep -q '"backend":"cuda"' &&
        tr -d ' \n' <"$tmp/out.json" | grep -q '"verified":true'; then
        echo "  streamlab run (async_v1 2^22 x4 on the GPU): ok"
        passed=$((passed + 1))
    else
        echo "  FAIL streamlab run: expected a done cuda experiment with verified true; got:"
        head -c 2000 "$tmp/out.json" "$tmp/err.txt"
        echo
        failed=$((failed + 1))
    fi
fi
echo "gpu: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
