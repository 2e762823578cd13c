#!/bin/sh
# replay_model.sh BIN DB [OVERRIDES] — `make replay-model DB=... [OVERRIDES=...]`: every
# prediction recorded in a streamlab database (say a bench-model run's model.db, copied off
# the GPU machine) replayed through POST /api/predict on this machine, no GPU needed.
# Each replay sends what the run's prediction used: its basis trace, the recorded host
# costs, queued-copy saving, both-ways copy cost and kernel time per element, the hardware
# channels it modelled (recorded since 2026-11-26; older predictions ran 32 queues of stream %
# 32) and the measuring machine's device (its GPU's SMs, grid limits, copy engines, calibrated
# bidirectional derate). OVERRIDES, a JSON object, is merged into every request to try the
# model otherwise, e.g. '{"device": {"connections": 8, "channel_pools": true}}' (an older
# database under today's model), '{"kernel_ns_per_elem": 0}'
# Prints recorded, replayed and measured totals per experiment; the last line says how
# many replays gave the recorded prediction (within 1e-6) and the replayed model's error.
# DB may also be a .json file of a database's predictions, as REPLAY_EXPORT=FILE.json writes
# them instead of replaying (the machines' GPUs and, per prediction, its spec, what it used,
# predicted and measured: a fifth of the database; bench/data/model keeps the lent GPUs').
set -eu
BIN=${1:?usage: replay_model.sh BIN DB [OVERRIDES]}
DB=${2:?usage: replay_model.sh BIN DB [OVERRIDES]}
OVERRIDES=${3:-"{}"}
EXPORT=${REPLAY_EXPORT:-}
[ -f "$DB" ] || { echo "replay-model: no database $DB" >&2; exit 2; }
tmp=$(mktemp -d)
port=$(python3 "$(dirname "$0")/lab.py")
label="replay-model-$$"
"$BIN" serve --listen 127.0.0.1:$port --db "$tmp/replay.db" --backend sim --machine-label "$label" >"$tmp/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
PYTHONPATH="$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}" \
/usr/bin/env python3 - "$port" "$DB" "$OVERRIDES" "$label" "$EXPORT" <<'PY'
import json, os, sqlite3, statistics, sys, urllib.error
from lab import Lab
port, db, overrides, export = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[5]
if not isinstance(overrides, dict):
    sys.exit("replay-model: OVERRIDES must be a JSON object")
lab = Lab(port, timeout=120)
lab.wait_health(sys.argv[4], 60)

def merge(a, b):
    out = dict(a)
    for k, v in b.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out

if db.endswith(".json"):  # a database's predictions as REPLAY_EXPORT=FILE.json wrote them (bench/data/model)
    kept = json.load(open(db))
    gpus = {mid: {g.get("index", i): g for i, g in enumerate(gs)} for mid, gs in kept["machines"].items()}
    rows = [(r["machine_id"], json.dumps(r["spec"]), json.dumps({"prediction": r["prediction"]}), r["measured_ms"],
             r["predicted_ms"]) for r in kept["predictions"]]
else:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    gpus = {}
    for mid, info in con.execute("select id, info from machines"):
        gpus[mid] = {g.get("index", i): g for i, g in enumerate(json.loads(info).get("gpus") or [])}
    rows = con.execute("select e.machine_id, e.spec, r.extra, r.total_median_ms, r.predicted_ms from experiments e "
                       "join results r on r.experiment_id = e.id where r.predicted_ms is not null "
                       "order by e.seq").fetchall()
if export:
    keep = [{"machine_id": mid, "spec": json.loads(spec), "measured_ms": measured, "predicted_ms": recorded,
             "prediction": (json.loads(extra or "{}") or {}).get("prediction")} for mid, spec, extra, measured, recorded
            in rows]
    used = {r["machine_id"] for r in keep}
    json.dump({"from": os.path.basename(db), "machines": {mid: list(g.values()) for mid, g in gpus.items() if mid in used},
               "predictions": keep}, open(export, "w"))
    print(f"replay-model: {len(keep)} predictions of {db} written to {export}")
    sys.exit(0)
same, errors = 0, []
print(f"{'size':>5} {'variant':>14} {'N':>3} {'recorded':>9} {'replayed':>9} {'measured':>9} {'error':>7}")
for mid, spec, extra, measured, recorded in rows:
    spec, p = json.loads(spec), (json.loads(extra or "{}") or {}).get("prediction") or {}
    if "basis_trace" not in p:
        continue
    dev = {"copy_overlap_us": p["device"]["copy_overlap_us"],
           "bidir_copy_us": p["device"].get("bidir_copy_us", 0),  # absent before it was measured
           "copy_switch_us": p["device"].get("copy_switch_us", 0),
           # the hardware channels it modelled; recorded since 2026-11-26, before which the
           # model ran 32 queues of stream % 32
           "connections": p["device"].get("connections", 32),
           "channel_pools": p["device"].get("channel_pools", False),
           # the D2H's share of the both-ways loss: recorded since 2026-11-27, before which
           # the model split it evenly
           "bidirectional_d2h_share": p["device"].get("bidirectional_d2h_share", 0.5)}
    host = dict(p["host"])
    g = gpus.get(mid, {}).get((spec.get("devices") or [0])[0])
    if g:  # the measuring GPU, as the run's prediction saw it (else this machine's)
        dev.update(sm_count=g["sm_count"], max_threads_per_sm=g["max_threads_per_sm"],
                   max_blocks_per_sm=g["max_blocks_per_sm"], copy_engines=min(16, max(1, g["copy_engines"] or 2)))
        cal = g.get("calibration") or {}
        if cal.get("h2d_gbps") and cal.get("bidir_gbps"):
            dev["bidirectional_derate"] = min(1.0, cal["bidir_gbps"] / cal["h2d_gbps"])
        # a breadth-first call's extra (recorded since 2026-11-27; before, the measuring GPU's own)
        host.setdefault("reorder_us", cal.get("issue_reorder_us") or 0)
    body = {"trace": p["basis_trace"], "variant": spec["variant"], "streams": [spec["streams"]],
            "chunks": spec["chunks"], "host": host, "device": dev,
            "kernel_ns_per_elem": p.get("kernel_ns_per_elem", 0)}
    try:
        replayed = lab.call("POST", "/api/predict", merge(body, overrides))["predictions"][0]["total_ms"]
    except urllib.error.HTTPError as e:
        sys.exit(f"replay-model: POST /api/predict answered {e.code}: {e.read().decode()[:400]}")
    same += abs(replayed - recorded) <= 1e-6 * recorded
    errors.append(abs(replayed - measured) / measured)
    size = "2^%d" % (spec["size"].bit_length() - 1) if spec["size"] & (spec["size"] - 1) == 0 else str(spec["size"])
    print(f"{size:>5} {spec['variant']:>14} {spec['streams']:>3} {recorded:>9.4f} {replayed:>9.4f} {measured:>9.4f} "
          f"{100 * errors[-1]:>6.1f}%")
if not errors:
    sys.exit(f"replay-model: no recorded predictions in {db}")
print(f"replay-model: {len(errors)} predictions, {same} replayed as recorded; model median error "
      f"{100 * statistics.median(errors):.1f}%, max {100 * max(errors):.1f}%")
PY
