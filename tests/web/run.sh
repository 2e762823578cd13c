#!/bin/sh
# tests/web/run.sh — the browser suite (`make test-web`): headless Debian chromium, driven by
# puppeteer-core, against the real streamlab binary ($STREAMLAB_BIN) with the sim backend and
# a temporary database. Starts servers on free ports: one open with 2 simulated GPUs and
# no example bundles; one that requires a bearer token and only queues (--workers 0); and
# one whose --examples folder holds two bundles that make-examples.mjs exported from a
# fourth, short-lived server (stopped once they are written). Waits for /api/health with a
# deadline, runs tests/web/dashboard.test.mjs, stops the servers and ends with one line:
# `web: N passed, N failed` (non-zero exit on any failure). Screenshots land in
# tests/web/artifacts/.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/streamlab-web.XXXXXX")
pids=""

summary() {
    echo "web: $1 passed, $2 failed"
}
cleanup() {
    for p in $pids; do
        kill "$p" 2>/dev/null
    done
    for p in $pids; do
        wait "$p" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail_setup() {
    echo "web: setup failed: $1" >&2
    summary 0 1
    exit 1
}

[ -n "${STREAMLAB_BIN:-}" ] && [ -x "$STREAMLAB_BIN" ] || fail_setup "STREAMLAB_BIN must name the built binary (make test-web sets it)"
command -v node >/dev/null 2>&1 || fail_setup "node is not installed (Debian: apt-get install nodejs npm)"

# Chromium from Debian
if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "web: installing chromium (apt-get)"
        apt-get install -y chromium >"$tmp/apt.log" 2>&1 || { apt-get update >>"$tmp/apt.log" 2>&1 && apt-get install -y chromium >>"$tmp/apt.log" 2>&1; } ||
            { tail -n 20 "$tmp/apt.log" >&2; fail_setup "apt-get install chromium failed"; }
    else
        fail_setup "/usr/bin/chromium is missing: apt-get install chromium (as root)"
    fi
fi

# node modules (puppeteer-core), from the lock file. The registry has stalled an install for
# over 15 minutes with its sockets open (2026-11-26): each try gets 5 minutes, three tries.
if [ ! -d "$here/node_modules/puppeteer-core" ]; then
    tries=0
    until (cd "$here" && timeout 300 npm ci --no-audit --no-fund --silent) >>"$tmp/npm.log" 2>&1; do
        tries=$((tries + 1))
        if [ "$tries" -ge 3 ]; then
            tail -n 20 "$tmp/npm.log" >&2
            fail_setup "npm ci in tests/web failed (3 tries)"
        fi
        echo "web: npm ci in tests/web failed or stalled; trying again" >&2
        rm -rf "$here/node_modules"
    done
fi

# the dashboard needs Chart.js in web/vendor (make web-vendor)
[ -f "$repo/web/vendor/chart.umd.min.js" ] || fail_setup "web/vendor/chart.umd.min.js is missing: run make web-vendor"

free_port() {
    node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# start_server NAME EXTRA_ARGS...: sets $url once /api/health answers (deadline 30 s)
start_server() {
    name=$1
    shift
    port=$(free_port) || return 1
    "$STREAMLAB_BIN" serve --listen "127.0.0.1:$port" --db "$tmp/$name.db" --web "$repo/web" \
        --backend sim "$@" >"$tmp/$name.log" 2>&1 &
    pids="$pids $!"
    url="http://127.0.0.1:$port"
    if node -e "
        const deadline = Date.now() + 30000;
        (async () => {
          for (;;) {
            try { const r = await fetch('$url/api/health'); if (r.ok) process.exit(0); } catch {}
            if (Date.now() > deadline) process.exit(1);
            await new Promise((res) => setTimeout(res, 100));
          }
        })();"; then
        return 0
    fi
    echo "web: $name server did not answer /api/health within 30 s:" >&2
    tail -n 30 "$tmp/$name.log" >&2
    return 1
}

# example bundles: runs of a short-lived server, exported, in $tmp/examples
mkdir -p "$tmp/examples" "$tmp/no-examples"
start_server examples-source --examples "$tmp/no-examples" || fail_setup "the server that makes the example bundles did not start"
source_pid=${pids##* }
node "$here/make-examples.mjs" "$url" "$tmp/examples" >"$tmp/make-examples.log" 2>&1 ||
    { cat "$tmp/make-examples.log" >&2; fail_setup "make-examples.mjs could not make the example bundles"; }
kill "$source_pid" 2>/dev/null
wait "$source_pid" 2>/dev/null
pids=${pids% *}

token="web-test-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$token" >"$tmp/token"
start_server token --token-file "$tmp/token" --workers 0 --examples "$tmp/examples" || fail_setup "the server with a token did not start"
token_url=$url
start_server examples --examples "$tmp/examples" || fail_setup "the server with example bundles did not start"
examples_url=$url
start_server main --sim-devices 2 --examples "$tmp/no-examples" || fail_setup "the server did not start"

mkdir -p "$here/artifacts"
STREAMLAB_URL="$url" STREAMLAB_TOKEN_URL="$token_url" STREAMLAB_TOKEN="$token" \
    STREAMLAB_EXAMPLES_URL="$examples_url" STREAMLAB_EXAMPLES_DIR="$tmp/examples" \
    ARTIFACTS="$here/artifacts" RESULT_FILE="$tmp/result" \
    node "$here/dashboard.test.mjs"
rc=$?

passed=0
failed=1
if [ -f "$tmp/result" ]; then
    read -r passed failed <"$tmp/result"
fi
if [ "$rc" != 0 ] || [ "$failed" != 0 ]; then
    echo "--- server log (last 30 lines) ---"
    tail -n 30 "$tmp/main.log"
    [ "$failed" = 0 ] && failed=1
fi
summary "$passed" "$failed"
[ "$failed" = 0 ]
