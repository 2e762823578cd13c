"""bench_lane.py — `make bench-lane`: the host's calls, the sim's against the GPU's, call by call.
A timeline keeps, for each op, when the issuing thread began the call that handed it to CUDA and when
that call returned (`calls` beside `ops`). The sim draws the same lane from its host model. This
benchmark holds one against the other: on a GPU host it runs the seeds' points through one
`streamlab serve` (the default timing, 11 reps), and the same specs simulated from this machine's own
calibration (`sim_of` this machine) and from the shipped profile of its kind. Without a GPU, or with
--against FILE, it simulates the machine a kept run was measured on (bench/data/timeline/calls-*.json
and lane-*.json, the machine imported from the file), and the shipped profile of its kind, and holds
them against the file's calls.
Printed per point, each a median over the stored reps' timelines (the GPU's) or the median rep's (the
sim's, which is deterministic): when the first call began after the rep's start (`c0`), the first
call of each kind (H2D, launch, D2H), when the first call returned (`call1 end`), the later calls'
median by kind, and the lead (the first op's start). Then, per column, the median over the points of
sim - GPU and of |sim - GPU|.
How to read it. The GPU's lane is a traced rep's: before its first call the issuing thread records
that op's start event, and that record is the GPU's `c0` (3-11 us on the lent GPUs, more at 2^25, the
first calls after the array's memset running cold). A clean rep, and the sim, make no such call, so
the sim's first call stands for both: hold `call1 end` against the GPU's, not `c0` or `first h2d`
alone. The gaps between calls are not compared, for the same reason. A blocking copy (sequential)
starts no earlier than its asynchronous call returned, before the wait that makes it blocking; the lane
draws its call to the wait's end (docs/METHOD.md, "A blocking copy's hand-over").
A benchmark: it prints, it asserts nothing. Writes OUT/lane.json (the GPU's calls in the kept files'
form, each point's sim beside them); kept runs go to bench/data/timeline.

usage: bench_lane.py STREAMLAB_BIN [--reps N] [--sizes 22,25] [--out DIR] [--against FILE ...]"""
import argparse
import glob
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import has_gpu, seed_points, served  # noqa: E402

KINDS = ("h2d", "kernel", "d2h")
COLS = ["c0", "first h2d", "call1 end", "first kernel", "first d2h"] + [f"later {k}" for k in KINDS] + ["lead"]


def lane(calls, ops_start):
    """One rep's lane, calls as [op, device, stream, chunk, start_us, end_us] in issue order:
    {column: us}; a kind it has no later call of is left out."""
    if not calls:
        return {}
    row, later, seen = {"c0": calls[0][4], "call1 end": calls[0][5]}, {k: [] for k in KINDS}, set()
    for c in calls:
        kind, dur = c[0], c[5] - c[4]
        if kind not in KINDS:
            continue
        if kind in seen:
            later[kind].append(dur)
        else:
            row[f"first {kind}"] = dur
            seen.add(kind)
    for k in KINDS:
        if later[k]:
            row[f"later {k}"] = statistics.median(later[k])
    if ops_start is not None:
        row["lead"] = ops_start
    return row


def median_lane(rows):
    """The median over reps' lanes, column by column."""
    out = {}
    for col in COLS:
        vals = [r[col] for r in rows if col in r]
        if vals:
            out[col] = statistics.median(vals)
    return out


def rows_of(events):
    """A timeline's ops or calls as the kept files hold them: [op, device, stream, chunk,
    start_us, end_us], by start."""
    return [[e["op"], e.get("device", 0), e.get("stream", 0), e.get("chunk", 0), e["start_us"], e["end_us"]]
            for e in sorted(events or [], key=lambda e: e["start_us"])]


def compact(tl):
    """A timeline's calls and ops as the kept files hold them, and its first op's start."""
    ops = tl.get("ops") or []
    return rows_of(tl.get("calls")), rows_of(ops), (min(o["start_us"] for o in ops) if ops else None)


def timelines(lab, exp_id, reps):
    """Every stored rep's timeline of an experiment: {rep: (calls, ops, lead)}."""
    out = {}
    for k in range(reps):
        try:
            t = lab.call("GET", f"/api/experiments/{exp_id}/timeline?rep={k}")
        except Exception:  # noqa: BLE001 - a rep without a stored timeline answers 404
            continue
        if t.get("calls"):
            out[str(k)] = compact(t)
    return out


def sim_lane(lab, point, sim_of):
    """The sim's lane of a point, from machine sim_of: (row, calls, ops, lead, total ms)."""
    v, size, s = point
    e = lab.call("POST", "/api/experiments", {"variant": v, "size": size, "streams": s, "reps": 3, "warmup": 0,
                                              "sim_of": sim_of, "label": "lane sim"})
    e = lab.finished(e["id"], f"sim {point}", poll_s=0.05)
    t = lab.call("GET", f"/api/experiments/{e['id']}/timeline")
    calls, ops, lead = compact(t)
    return lane(calls, lead), calls, ops, lead, e["result"]["total_ms"]["median"]


def shipped_profile(lab, gpu_name):
    """The id of the shipped profile's machine for a GPU of this name (None where none fits)."""
    want = "lent-h200" if "H200" in (gpu_name or "") else "lent-h100"
    for m in lab.call("GET", "/api/machines").get("items", []):
        if (m.get("profile") or {}).get("name") == want:
            return m["id"], want
    return None, want


def fmt(x):
    return f"{x:6.1f}" if isinstance(x, (int, float)) else "     -"


def report(title, rows):
    """rows: [(point, gpu lane, {sim name: sim lane})]; prints the table and the summary."""
    sims = list(rows[0][2]) if rows else []
    print(f"\n{title}\n{'point':<20} {'who':<10} " + " ".join(f"{c:>14}" for c in COLS))
    diffs = {name: {c: [] for c in COLS} for name in sims}
    for (v, size, s), g, by in rows:
        p = f"2^{size.bit_length() - 1} {v:<10} x{s:<4}"
        print(f"{p:<20} {'GPU':<10} " + " ".join(f"{fmt(g.get(c)):>14}" for c in COLS))
        for name, sl in by.items():
            cells = []
            for c in COLS:
                if c in sl and c in g:
                    diffs[name][c].append(sl[c] - g[c])
                    cells.append(f"{fmt(sl[c])} ({sl[c] - g[c]:+5.1f})")
                else:
                    cells.append(f"{fmt(sl.get(c)):>14}")
            print(f"{'':<20} {name:<10} " + " ".join(f"{x:>14}" for x in cells))
    for name in sims:
        print(f"\nsim {name} - GPU, over the points: median (median of |diff|), us")
        print("  " + "  ".join(f"{c}: {statistics.median(d):+.1f} ({statistics.median(abs(x) for x in d):.1f})"
                              for c, d in diffs[name].items() if d))


def against(lab, path, sizes):
    """Simulate the machine of a kept calls file and hold it against the file's calls."""
    d = json.load(open(path))
    m = d["machine"]
    lab.import_machine(m)
    gpu = (m.get("gpus") or [{}])[0]
    shipped, shipped_name = shipped_profile(lab, gpu.get("name"))
    rows = []
    want = {1 << lg for lg in sizes}
    for p in d["points"]:
        if p["size"] not in want:
            continue
        reps = [lane(c, p.get("lead_us", {}).get(k)) for k, c in p["calls"].items()]
        point = (p["variant"], p["size"], p["streams"])
        by = {"own": sim_lane(lab, point, m["id"])[0]}
        if shipped:
            by[shipped_name] = sim_lane(lab, point, shipped)[0]
        rows.append((point, median_lane(reps), by))
    report(f"{os.path.basename(path)}: {gpu.get('name')} ({gpu.get('uuid')}), measured {d.get('at')}; the sims: "
           f"own (that machine's calibration, as kept), {shipped_name} (shipped)", rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--sizes", default="22,25", help="log2 sizes to run, e.g. 25")
    ap.add_argument("--against", nargs="*", help="kept calls files to simulate (the default without a GPU: "
                                                 "bench/data/timeline/calls-*.json and lane-*.json)")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",") if x.strip()]
    os.makedirs(a.out, exist_ok=True)
    kept = a.against
    if kept is None and not has_gpu():
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "timeline")
        kept = sorted(glob.glob(os.path.join(here, "calls-*.json")) + glob.glob(os.path.join(here, "lane-*.json")))
        print("bench-lane: no GPU here; the kept runs' machines, simulated")
    if kept is not None:
        with served(a.bin, "lane", a.out) as (_, lab, _):
            for path in kept:
                against(lab, path, sizes)
        return 0
    with served(a.bin, "lane", a.out) as (_, lab, health):
        if health.get("backend") != "cuda":
            print("bench-lane: skipped (the server found no GPU)")
            return 0
        m = lab.call("GET", "/api/machines/" + health["machine_id"])
        gpu = (m.get("gpus") or [{}])[0]
        at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        shipped, shipped_name = shipped_profile(lab, gpu.get("name"))
        print(f"bench-lane: {gpu.get('name')} ({gpu.get('uuid')}), {at}; {a.reps} reps a point; "
              f"the sims: own (this machine's calibration), {shipped_name} (shipped)")
        points = [(v, 1 << lg, s) for v, lg, s in seed_points(a.sizes)]
        ids = []
        for v, size, s in points:
            e = lab.call("POST", "/api/experiments", {"variant": v, "size": size, "streams": s, "reps": a.reps,
                                                      "warmup": 2, "label": "lane"})
            ids.append(((v, size, s), e["id"]))
        rows, kept_points = [], []
        for point, i in ids:
            e = lab.finished(i, str(point), poll_s=0.1)
            tls = timelines(lab, i, e["result"]["reps"])
            g = median_lane([lane(c, lead) for c, _, lead in tls.values()])
            by, sims = {}, {}
            for name, mid in (("own", m["id"]), (shipped_name, shipped)):
                if mid:
                    row, calls, ops, lead, ms = sim_lane(lab, point, mid)
                    by[name] = row
                    sims[name] = {"total_ms": ms, "calls": calls, "ops": ops, "lead_us": lead}
            rows.append((point, g, by))
            kept_points.append({"variant": point[0], "size": point[1], "streams": point[2],
                                "total_ms": e["result"]["total_ms"], "median_rep": e["result"].get("median_rep"),
                                "calls": {k: c for k, (c, _, _) in tls.items()},
                                "ops": {k: o for k, (_, o, _) in tls.items()},
                                "lead_us": {k: lead for k, (_, _, lead) in tls.items()}, "sim": sims})
        report(f"{gpu.get('name')} ({gpu.get('uuid')}), {at}", rows)
        with open(os.path.join(a.out, "lane.json"), "w") as fo:
            json.dump({"what": "streamlab's timelines on a GPU with each op's host call (make bench-lane): per point, "
                               "every stored rep's calls and ops as [op, device, stream, chunk, start_us, end_us] "
                               "by start, on the rep's clock, and the sims' (own calibration, shipped profile) beside "
                               "them; the machine as GET /api/machines/{id} gave it",
                       "at": at, "machine": m, "points": kept_points}, fo)
        print(f"\nbench-lane: {os.path.join(a.out, 'lane.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
