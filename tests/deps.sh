#!/bin/sh
# deps.sh — what `make run` and `make test` need on a fresh Debian machine. Installs what
# is missing when run as root (apt-get), and otherwise says exactly what to install.
set -u
# what the build needs (the Dockerfile's build stage installs the same), then what the tests add
build_need="gcc make pkg-config libmicrohttpd-dev libjansson-dev libsqlite3-dev nodejs npm"
test_need="python3 python3-pytest python3-requests chromium clang libclang-rt-dev"
need="$build_need $test_need"
missing=""
for p in $need; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# npm may come from elsewhere (nodesource, nvm): a working npm is enough.
case " $missing " in *" npm "*) command -v npm >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ npm//');; esac
case " $missing " in *" nodejs "*) command -v node >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ nodejs//');; esac
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null && apt-get install -y -qq $missing >/dev/null || {
        echo "deps: apt-get install$missing failed" >&2; exit 1; }
    exit 0
fi
echo "deps: missing Debian packages:$missing" >&2
echo "deps: install them with: sudo apt-get install$missing" >&2
exit 1
