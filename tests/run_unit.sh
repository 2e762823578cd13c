#!/bin/sh
# run_unit.sh BIN... — runs each C unit-test binary, then prints one summary line for
# all of them ("${SUITE_PREFIX}unit: N passed, N failed") and fails if any failed.
passed=0; failed=0; status=0
for t in "$@"; do
    out=$("$t" 2>&1); rc=$?
    printf '%s\n' "$out" | grep -v '^unit-' >&2 || true
    line=$(printf '%s\n' "$out" | grep -E '^[a-z_-]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/'); f=$(echo "$line" | sed -E 's/.*, ([0-9]+) failed/\1/')
    [ -n "$line" ] || { echo "$(basename "$t"): crashed or printed no summary (exit $rc)" >&2; f=1; p=0; }
    echo "  $(basename "$t"): $p passed, $f failed" >&2
    passed=$((passed + p)); failed=$((failed + f))
    [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] || status=1
done
echo "${SUITE_PREFIX:-}unit: $passed passed, $failed failed"
exit $status
