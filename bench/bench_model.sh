#!/bin/sh
# bench_model.sh BIN — `make bench-model`: the overlap model's accuracy on this machine.
# Blog kernel, block 256, sizes 2^22 and 2^25, async_v1 and async_v2, N = 2..64 streams
# of one chunk each: every point runs with "predict": true, i.e. its 1-stream N-chunk
# basis is measured first and the N-stream run is predicted from that trace, then
# measured (median of REPS). Prints predicted, measured, error, the spread of the
# measured reps, and the textbook closed-form estimate (fill + steady state + drain)
# for comparison. Not a test: numbers to read (and to paste into a note).
# KERNEL=compute COPY_RATIO=R: the held-out kernel-bound check instead of the blog
# kernel: kernel_iters chosen from this machine's calibration so that the compute
# kernel takes R times the H2D copy of the same data (R = 1 and 3 in issue 5).
set -eu
BIN=${1:-build/streamlab}
REPS=${REPS:-7}
OUT=${BENCH_OUT:-build/bench}
mkdir -p "$OUT"
port=$(python3 "$(dirname "$0")/lab.py")
label="bench-model-$$"
db="$OUT/model.db"
rm -f "$db" "$db-wal" "$db-shm"
"$BIN" serve --listen 127.0.0.1:$port --db "$db" --machine-label "$label" >"$OUT/model-server.log" 2>&1 &
pid=$!
# wait for the server to close its store: $OUT/model.db is then whole (its WAL folded in),
# ready to copy off the machine and replay (the predictions keep their basis traces)
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
PYTHONPATH="$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}" \
/usr/bin/env python3 - "$port" "$REPS" "$OUT" "${KERNEL:-blog}" "${COPY_RATIO:-1}" "$label" <<'PY'
import json, sys, time, statistics
from lab import Lab
port, reps, out, kernel, ratio = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
lab = Lab(port)
call = lab.call
health = lab.wait_health(sys.argv[6])
spec_base = {"kernel": kernel, "block_size": 256, "reps": reps, "warmup": 2, "predict": True}
label = kernel
if kernel == "compute":
    cal = call("GET", "/api/machines")["items"][0]["gpus"][0]["calibration"]
    per_iter, base_ns = cal["kernel_ns_per_elem"]["compute"], cal.get("compute_base_ns_per_elem") or 0.0
    spec_base["kernel_iters"] = max(1, round((ratio * (4.0 / cal["h2d_gbps"]) - base_ns) / per_iter))
    label = f"compute x{spec_base['kernel_iters']} (kernel ~{ratio:g}x the H2D copy)"
sweep = call("POST", "/api/sweeps", {"base": spec_base,
                                     "axes": {"size": ["2^22", "2^25"], "variant": ["async_v1", "async_v2"],
                                              "streams": [2, 4, 8, 16, 32, 64]}})
deadline = time.time() + 1800
while True:
    s = call("GET", f"/api/sweeps/{sweep['id']}")
    if s["counts"]["queued"] + s["counts"]["running"] == 0: break
    if time.time() > deadline: sys.exit("bench-model: the sweep did not finish")
    time.sleep(1)
machine = call("GET", "/api/machines")["items"][0]
gpu = machine["gpus"][0]["name"] if machine["gpus"] else "?"
def cal_gbps(key):
    c = machine["gpus"][0].get("calibration") if machine["gpus"] else None
    return (c or {}).get(key) or 1.0
print(f"bench-model on {gpu} ({health['backend']}), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {label} kernel, median of {reps} reps")
print(f"{'size':>5} {'variant':>9} {'N':>3} {'predicted':>10} {'measured':>10} {'error':>7} {'spread':>7} {'closed-form':>11} {'cf err':>7}")
errors, cf_errors, rows = [], [], []
for e in s["experiments"]:
    sp, r = e["spec"], e["result"]
    if e["status"] != "done":
        print(f"{sp['size']:>9} {sp['variant']} {sp['streams']}: {e['status']} {e.get('error')}"); continue
    meas, pred = r["total_ms"]["median"], r["predicted_ms"]
    spread = (r["total_ms"]["max"] - r["total_ms"]["min"]) / meas
    err = abs(pred - meas) / meas
    # textbook pipeline: fill (first H2D + kernel) + steady state (N x the slowest stage) + drain (last kernel + D2H)
    d = r["extra"]["prediction"]["derived"]
    n = sp["streams"]; chunk_bytes = sp["size"] * 4 / n
    # (the trace's rates, else the calibration's where a trace gave none)
    h2d = d["h2d_gbps"] or cal_gbps("h2d_gbps"); d2h = d["d2h_gbps"] or cal_gbps("d2h_gbps")
    h = 2.0 + chunk_bytes / (h2d * 1e3); dd = 2.0 + chunk_bytes / (d2h * 1e3)
    k = r["kernel_ms"] * 1e3 / n
    cf = (h + k + dd + (n - 1) * max(h, k, dd)) / 1e3
    cf_err = abs(cf - meas) / meas
    errors.append(err); cf_errors.append(cf_err)
    size = "2^%d" % (sp["size"].bit_length() - 1)
    rows.append({"size": size, "variant": sp["variant"], "streams": n, "predicted_ms": pred, "measured_ms": meas,
                 "error": err, "spread": spread, "closed_form_ms": cf, "closed_form_error": cf_err})
    print(f"{size:>5} {sp['variant']:>9} {n:>3} {pred:>10.4f} {meas:>10.4f} {100*err:>6.1f}% {100*spread:>6.1f}% {cf:>11.4f} {100*cf_err:>6.1f}%")
if errors:
    print(f"model:       median error {100*statistics.median(errors):.1f}%, max {100*max(errors):.1f}%")
    print(f"closed form: median error {100*statistics.median(cf_errors):.1f}%, max {100*max(cf_errors):.1f}%")
json.dump(rows, open(f"{out}/model-{kernel}.json", "w"), indent=1)
PY
