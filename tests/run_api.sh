#!/bin/sh
# run_api.sh — the API suite (tests/api, pytest over real HTTP against the real binary).
# Called by `make test-api` (and `make test-san` with SUITE_PREFIX=asan-) with
# STREAMLAB_BIN = the absolute path of build/streamlab. Uses Debian's /usr/bin/python3 with
# python3-pytest and python3-requests (installed here when missing and run as root).
# Prints one final line: "${SUITE_PREFIX}api: N passed, N failed"; exits non-zero on failure.
set -u
PY=/usr/bin/python3
PREFIX="${SUITE_PREFIX:-}"
HERE=$(cd "$(dirname "$0")" && pwd)

summary() { echo "${PREFIX}api: $1 passed, $2 failed"; }

if [ -z "${STREAMLAB_BIN:-}" ] || [ ! -x "$STREAMLAB_BIN" ]; then
    echo "run_api.sh: STREAMLAB_BIN must be the built binary (got '${STREAMLAB_BIN:-}')" >&2
    summary 0 1
    exit 1
fi

if ! $PY -c 'import pytest, requests' 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "run_api.sh: installing python3-pytest python3-requests" >&2
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
              python3-pytest python3-requests; } >&2
    fi
    if ! $PY -c 'import pytest, requests' 2>/dev/null; then
        echo "run_api.sh: missing Debian packages python3-pytest and/or python3-requests" \
             "(apt-get install python3-pytest python3-requests)" >&2
        summary 0 1
        exit 1
    fi
fi

if [ "$PREFIX" = "asan-" ]; then
    # The conftest fails a test whose server printed a sanitizer report.
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
fi

COUNTS=$(mktemp)
trap 'rm -f "$COUNTS"' EXIT INT TERM
export STREAMLAB_BIN SUITE_PREFIX="$PREFIX" STREAMLAB_API_COUNTS="$COUNTS"

cd "$HERE/api" || exit 1
$PY -m pytest -q -rfE -p no:cacheprovider "$@" .
rc=$?

passed=0; failed=0
if [ -s "$COUNTS" ]; then
    read -r passed failed _skipped < "$COUNTS"
fi
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1   # pytest itself failed (collection error, crash): count it
fi
summary "$passed" "$failed"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
