#!/bin/sh
# bench_http.sh BIN — `make bench-http`: streamlab's JSON reads under load, beside nginx.
#
# wrk (Debian) with 64 connections for 10 s on loopback against GET /api/health,
# GET /api/experiments?limit=20 and GET /api/experiments/{id}/timeline of a 64-stream run,
# each while a 100-experiment sim sweep runs (a new sweep per endpoint). nginx (Debian),
# in the foreground on a free loopback port with bench/http/nginx.conf (its pid, logs and
# temp files under the run's folder), serves a file of the same bytes as each JSON answer,
# measured right after streamlab under the same sweep, as the reference. Prints a table:
# endpoint, streamlab req/s, p99 latency, errors, nginx req/s, ratio; then checks that each
# loaded sweep's results are identical to the same sweep run on the idle server.
# Not a test: numbers to read. Installs wrk and nginx with apt-get when missing (as root).
#   BENCH_SECONDS (10)  BENCH_CONNECTIONS (64)  BENCH_THREADS (CPUs, at most 8)  BENCH_OUT (build/bench)
set -eu
BIN=${1:-build/streamlab}
OUT=${BENCH_OUT:-build/bench}
HERE=$(cd "$(dirname "$0")" && pwd)

need=""
command -v wrk >/dev/null 2>&1 || need="$need wrk"
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need="$need nginx-light"
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "bench-http: installing$need" >&2
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need; } >&2
    else
        echo "bench-http: needs the Debian packages$need" >&2
        exit 1
    fi
fi
[ -x "$BIN" ] || { echo "bench-http: no binary $BIN (make first)" >&2; exit 1; }
mkdir -p "$OUT"
RUN=$(mktemp -d "$OUT/http.XXXXXX")
RUN=$(cd "$RUN" && pwd)
chmod 755 "$RUN" # nginx started as root reads the files as its worker user (nobody)
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

exec /usr/bin/python3 - "$BIN" "$RUN" "$HERE/http/nginx.conf" <<'PY'
import json, os, re, shutil, signal, socket, subprocess, sys, time, urllib.request

BIN, RUN, CONF = sys.argv[1], sys.argv[2], sys.argv[3]
SECONDS = int(os.environ.get("BENCH_SECONDS", "10"))
CONNS = int(os.environ.get("BENCH_CONNECTIONS", "64"))
THREADS = int(os.environ.get("BENCH_THREADS", str(min(8, os.cpu_count() or 1))))
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
procs = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_all():
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def call(base, method, path, body=None, raw=False):
    req = urllib.request.Request(base + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        data = r.read()
    return data if raw else json.loads(data)


def wait_up(url, what, proc):
    end = time.time() + 60
    while time.time() < end:
        if proc.poll() is not None:
            sys.exit(f"bench-http: {what} exited at start (code {proc.returncode}); see {RUN}")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except Exception:
            time.sleep(0.05)
    sys.exit(f"bench-http: {what} did not answer {url}")


def wait_sweep(base, sid, deadline_s=1800):
    end = time.time() + deadline_s
    while time.time() < end:
        s = call(base, "GET", f"/api/sweeps/{sid}")
        if s["counts"]["queued"] + s["counts"]["running"] == 0:
            return s
        time.sleep(0.2)
    sys.exit(f"bench-http: sweep {sid} did not finish in {deadline_s}s")


def sweep_running(base, sid):
    c = call(base, "GET", f"/api/sweeps/{sid}")["counts"]
    return c["queued"] + c["running"] > 0


UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


def wrk(url):
    p = subprocess.run(["wrk", f"-t{THREADS}", f"-c{CONNS}", f"-d{SECONDS}s", "--latency", url],
                       capture_output=True, text=True, timeout=SECONDS * 10 + 60)
    out = p.stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.M)
    p99 = float(m.group(1)) * UNITS[m.group(2)] if m else float("nan")
    errors = 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        errors += sum(int(x) for x in m.groups())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if m:
        errors += int(m.group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    return {"rps": rps, "p99_ms": p99, "errors": errors, "requests": total, "raw": out}


def result_key(e):
    r = e.get("result") or {}
    return {k: r.get(k) for k in ("total_ms", "reps_ms", "h2d_ms", "kernel_ms", "d2h_ms", "host_ms", "overlap",
                                  "verified")} | {"status": e["status"]}


try:
    # ---- streamlab, and what the reads will read
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = os.path.join(os.path.dirname(BIN), "..", "web")
    web = web if os.path.exists(os.path.join(web, "index.html")) else RUN
    log = open(os.path.join(RUN, "streamlab.log"), "wb")
    sl = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{port}", "--db", os.path.join(RUN, "bench.db"),
                           "--web", web, "--backend", "sim"], stdout=log, stderr=subprocess.STDOUT)
    procs.append(sl)
    wait_up(base + "/api/health", "streamlab", sl)
    wide = call(base, "POST", "/api/experiments",
                {"variant": "async_v1", "size": "2^24", "streams": 64, "chunks": 64, "reps": 3, "warmup": 1})
    end = time.time() + 600
    while call(base, "GET", f"/api/experiments/{wide['id']}")["status"] not in ("done", "failed"):
        if time.time() > end:
            sys.exit("bench-http: the 64-stream run did not finish")
        time.sleep(0.1)
    sweep_req = {"base": {"size": "2^22", "chunks": 1024, "reps": 15, "warmup": 0, "backend": "sim"},
                 "axes": {"kernel": ["blog", "fill"],
                          "variant": ["sequential", "async_v1", "async_v2", "round_robin", "engine_streams"],
                          "streams": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]}}
    t0 = time.time()
    idle = wait_sweep(base, call(base, "POST", "/api/sweeps", sweep_req)["id"])
    idle_s = time.time() - t0
    assert len(idle["experiments"]) == 100, len(idle["experiments"])
    endpoints = [("GET /api/health", "/api/health", "health.json"),
                 ("GET /api/experiments?limit=20", "/api/experiments?limit=20", "list.json"),
                 ("GET /api/experiments/{id}/timeline (64 streams)", f"/api/experiments/{wide['id']}/timeline",
                  "timeline.json")]
    # ---- nginx with files of the same bytes
    root = os.path.join(RUN, "www")
    os.makedirs(root, exist_ok=True)
    for _, path, name in endpoints:
        with open(os.path.join(root, name), "wb") as f:
            f.write(call(base, "GET", path, raw=True))
    nport = free_port()
    conf = open(CONF).read().replace("@PORT@", str(nport)).replace("@ROOT@", root).replace("@TMP@", RUN)
    with open(os.path.join(RUN, "nginx.conf"), "w") as f:
        f.write(conf)
    ng = subprocess.Popen([NGINX, "-p", RUN, "-c", os.path.join(RUN, "nginx.conf"), "-e", os.path.join(RUN, "nginx-error.log")],
                          stdout=open(os.path.join(RUN, "nginx.out"), "wb"), stderr=subprocess.STDOUT)
    procs.append(ng)
    nbase = f"http://127.0.0.1:{nport}"
    wait_up(nbase + "/health.json", "nginx", ng)
    # ---- under load: a new sweep per endpoint; streamlab, then nginx, while it runs
    rows, sweeps = [], []
    for label, path, name in endpoints:
        size = len(open(os.path.join(root, name), "rb").read())
        sid = call(base, "POST", "/api/sweeps", sweep_req)["id"]
        s = wrk(base + path)
        s_during = sweep_running(base, sid)
        n = wrk(nbase + "/" + name)
        n_during = sweep_running(base, sid)
        loaded = wait_sweep(base, sid)
        sweeps.append((label, loaded, s_during, n_during))
        rows.append((label, size, s, n))
        with open(os.path.join(RUN, f"wrk-{name}.txt"), "w") as f:
            f.write(s["raw"] + "\n---- nginx\n" + n["raw"])
    # ---- the table
    cpus = os.cpu_count()
    load = open("/proc/loadavg").read().split()[0]
    print(f"bench-http: wrk -t{THREADS} -c{CONNS} -d{SECONDS}s on 127.0.0.1, {cpus} CPUs (load {load} at the end), "
          f"{time.strftime('%Y-%m-%d')}; a 100-experiment sim sweep runs during each line "
          f"(alone it takes {idle_s:.1f} s)")
    print(f"{'endpoint':<48} {'bytes':>7} {'streamlab req/s':>15} {'p99 ms':>8} {'errors':>7} {'nginx req/s':>12} "
          f"{'nginx p99':>9} {'ratio':>6}")
    for label, size, s, n in rows:
        print(f"{label:<48} {size:>7} {s['rps']:>15.0f} {s['p99_ms']:>8.2f} {s['errors']:>7} {n['rps']:>12.0f} "
              f"{n['p99_ms']:>9.2f} {s['rps'] / n['rps']:>6.2f}")
    # ---- the sweeps' results against the idle run
    base_results = {e["sweep_index"]: result_key(e) for e in idle["experiments"]}
    ok_all = True
    for label, loaded, s_during, n_during in sweeps:
        diff = [e["sweep_index"] for e in loaded["experiments"] if result_key(e) != base_results.get(e["sweep_index"])]
        done = sum(1 for e in loaded["experiments"] if e["status"] == "done")
        ok_all &= not diff
        print(f"sweep under {label}: {done}/100 done, {100 - len(diff)}/100 results identical to the idle run"
              f"{'' if not diff else f' (differ: sweep index {diff[:10]})'}; still running after streamlab's wrk: "
              f"{'yes' if s_during else 'no'}, after nginx's: {'yes' if n_during else 'no'}")
    summary = {"rows": [{"endpoint": l, "bytes": b, "streamlab": {k: v for k, v in s.items() if k != "raw"},
                         "nginx": {k: v for k, v in n.items() if k != "raw"}} for l, b, s, n in rows],
               "idle_sweep_s": idle_s, "sweeps_identical": ok_all}
    with open(os.path.join(RUN, "bench_http.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"bench-http: wrk output, logs and bench_http.json in {RUN}")
finally:
    stop_all()
    for suffix in ("", "-wal", "-shm"):  # the store of the loaded sweeps: over a GB, read nothing from it
        try:
            os.remove(os.path.join(RUN, "bench.db" + suffix))
        except OSError:
            pass
PY
