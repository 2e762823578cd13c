#!/bin/sh
# run.sh — the crash-safety suite (tests/crash: kill -9 at random moments, SIGTERM), pytest
# over real HTTP against the real binary with the API suite's harness. Kept out of
# tests/run_api.sh because it takes about a minute. Needs STREAMLAB_BIN (the absolute
# path of build/streamlab); CRASH_SEED and CRASH_KILLS choose the kills (default 8, 30).
# Prints one final line: "${SUITE_PREFIX}crash: N passed, N failed"; exits non-zero on failure.
set -u
PY=/usr/bin/python3
PREFIX="${SUITE_PREFIX:-}"
HERE=$(cd "$(dirname "$0")" && pwd)

summary() { echo "${PREFIX}crash: $1 passed, $2 failed"; }

if [ -z "${STREAMLAB_BIN:-}" ] || [ ! -x "$STREAMLAB_BIN" ]; then
    echo "crash/run.sh: STREAMLAB_BIN must be the built binary (got '${STREAMLAB_BIN:-}')" >&2
    summary 0 1
    exit 1
fi
if ! $PY -c 'import pytest, requests' 2>/dev/null; then
    echo "crash/run.sh: missing Debian packages python3-pytest and/or python3-requests" >&2
    summary 0 1
    exit 1
fi
if [ "$PREFIX" = "asan-" ]; then
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
fi

COUNTS=$(mktemp)
trap 'rm -f "$COUNTS"' EXIT INT TERM
export STREAMLAB_BIN SUITE_PREFIX="$PREFIX" STREAMLAB_API_COUNTS="$COUNTS"

cd "$HERE" || exit 1
$PY -m pytest -q -rfE -s -p no:cacheprovider "$@" .
rc=$?

passed=0; failed=0
if [ -s "$COUNTS" ]; then
    read -r passed failed _skipped < "$COUNTS"
fi
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1
fi
summary "$passed" "$failed"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
