"""bench_timeline.py — `make bench-timeline`: is the timeline a run shows the run's? (issue 21)
One `streamlab serve` process runs the seeds' 38 points (2^22 and 2^25; sequential; async_v1/v2
x 1..256 streams) three ways, interleaved point by point:
  sampled  timing events, trace_ops sampled (the default): events around one share of the chunks
           per traced rep, a timeline composed from `shares` traced reps;
  all      timing events, trace_ops all: an event pair around every op of every traced rep;
  cupti    timing cupti, trace_ops sampled: its cross-check times one timeline both ways, so each op
           of the sampled timeline is held against CUPTI's record of the same op in the same rep.
Printed per point: the run's median total, each way's median-rep timeline span / median total
(the stretch; for sampled also / that rep's own total: a run whose host changed pace mid-run, or whose
reps drew two modes, has no rep at its median; `modes` is the slow group's share of the reps where
result.rep_modes finds two groups), the shares, the timelines composed, the shares whose closest rep stayed
off, the timelines whose farthest shares took their ops from one rep with every op traced (closer than theirs: `whole`; `one`: those of them whose every
share took it, each built as that one rep), the lead-in (the median rep's first op start after the rep's start event, in us: time the
GPU idles while the host issues the first call, inside the total but outside the span; with it,
`from 0` is that rep's last op end / median total), the host's first call of that rep (`call1`, its
duration in us, and `from call`: the last op end less that call's start, over the median total: the timeline
with its host-calls lane), the seconds each run took, and the cross-check's start and end differences (median
and largest over the ops, in us; timeline.json keeps the ops whose starts part the most, `worst_starts`).
A benchmark: it prints, it asserts nothing.
11 reps a run by default: issue 21 holds "the median repetition" against the run's median total, and
only an odd count has a median rep whose total is the median (of 10, the median is the mean of two reps,
which in a run whose reps fall in two groups no rep comes near; the API's default stays 10).

--points runs the listed points instead of the seeds' (e.g. a run's misses again: v1:22:8,v2:25:32).

usage: bench_timeline.py STREAMLAB_BIN [--reps N] [--backend cuda|sim] [--sizes 22,25 | --points v1:22:8,...]
                         [--out DIR]"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import has_gpu, parse_points, seed_points, served  # noqa: E402

WAYS = {"sampled": {"timing": "events", "trace_ops": "sampled"},
        "all": {"timing": "events", "trace_ops": "all"},
        "cupti": {"timing": "cupti", "trace_ops": "sampled"}}


def seconds(e):
    def t(s):
        return datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    return (t(e["finished_at"]) - t(e["started_at"])).total_seconds()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--out", default="build/bench")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--sizes", default="22,25", help="log2 sizes to run, e.g. 25")
    which.add_argument("--points", help="these points instead of the seeds' (VARIANT:LOG2SIZE:STREAMS, e.g. v1:22:8,seq:25:1)")
    a = ap.parse_args()
    points = parse_points(a.points, "bench-timeline") if a.points is not None else seed_points(a.sizes)
    if not points:
        print(f"bench-timeline: no points at sizes {a.sizes} (the seeds' are 22 and 25)")
        return 2
    os.makedirs(a.out, exist_ok=True)
    if a.backend == "cuda" and not has_gpu():
        print("bench-timeline: skipped (no GPU)")
        return 0
    with served(a.bin, "timeline", a.out) as (_, lab, health):
        if health.get("backend") != a.backend and a.backend == "cuda":
            print("bench-timeline: skipped (the server found no GPU)")
            return 0
        m = lab.call("GET", "/api/machines/" + health["machine_id"])
        gpu = (m.get("gpus") or [{}])[0]
        print(f"bench-timeline: {gpu.get('name')} ({gpu.get('uuid')}), "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; backend {a.backend}, {a.reps} reps a run")
        ids = []
        for v, lg, s in points:  # point by point, the three ways one after another
            for way, spec in WAYS.items():
                if a.backend != "cuda" and way == "cupti":
                    continue
                e = lab.call("POST", "/api/experiments", dict(spec, variant=v, size=1 << lg, streams=s, reps=a.reps,
                                                              warmup=2, backend=a.backend, label=f"timeline {way}"))
                ids.append(((v, lg, s), way, e["id"]))
        got = {}
        for p, way, i in ids:
            got[(p, way)] = lab.finished(i, f"{p} {way}", poll_s=0.1)
        print(f"\n{'point':<20} {'median ms':>9} {'sampled':>8} {'own rep':>7} {'modes':>5} {'shares':>6} {'redone':>6} {'tls':>5} {'off':>5} {'cut':>3} {'whole':>5} {'one':>3} {'lead':>5} {'from 0':>6} {'call1':>5} {'from call':>9} {'s':>5} {'all':>6} {'s':>5} "
              f"{'cupti xc':>8} {'start med/max us':>16} {'end med/max us':>15}")
        rows, within = [], 0
        for p in points:
            v, lg, s = p
            es, ea, ec = got[(p, "sampled")], got.get((p, "all")), got.get((p, "cupti"))
            ts = es["result"]["extra"].get("timing", {}) if es["result"].get("extra") else {}
            xc = ((ec or {}).get("result") or {}).get("extra", {}).get("timing", {}).get("cross_check", {})
            st = es["result"].get("timeline_stretch")
            span, mrep = es["result"].get("timeline_span_ms"), es["result"].get("median_rep")
            reps_ms = es["result"].get("reps_ms") or []
            st_rep = span / reps_ms[mrep] if span and isinstance(mrep, int) and mrep < len(reps_ms) else None
            within += st is not None and abs(st - 1) <= 0.05
            tlj = lab.call("GET", f"/api/experiments/{es['id']}/timeline")
            ops, calls = tlj.get("ops") or [], tlj.get("calls") or []
            lead_us = min(o["start_us"] for o in ops) if ops else None
            from0 = max(o["end_us"] for o in ops) / 1000.0 / es["result"]["total_ms"]["median"] if ops else None
            first = min(calls, key=lambda c: c["start_us"]) if calls else None
            call1 = first["end_us"] - first["start_us"] if first else None
            from_call = (max(o["end_us"] for o in ops) - first["start_us"]) / 1000.0 / es["result"]["total_ms"]["median"] \
                if first and ops else None
            modes = es["result"].get("rep_modes")
            row = {"variant": v, "size": 1 << lg, "streams": s, "median_ms": es["result"]["total_ms"]["median"],
                   "rep_modes": modes,
                   "stretch_sampled": st, "stretch_sampled_own_rep": st_rep, "lead_in_us": lead_us,
                   "stretch_from_origin": from0, "first_call_us": call1, "stretch_from_call": from_call,
                   "calls": len(calls), "shares": ts.get("shares"), "seconds_sampled": seconds(es),
                   "share_reps": ts.get("share_reps"), "clean_ms_all": ea["result"]["total_ms"]["median"] if ea else None,
                   "stretch_all": ea["result"].get("timeline_stretch") if ea else None,
                   "seconds_all": seconds(ea) if ea else None, "cross_check": {k: xc.get(k) for k in (
                       "shares", "start_diff_us_median", "start_diff_us_max", "end_diff_us_median",
                       "end_diff_us_max", "duration_diff_us_mean", "worst_starts")}}
            rows.append(row)

            def f(x, fmt):
                return format(x, fmt) if isinstance(x, (int, float)) else "-"
            slow = modes["slow_reps"] / (modes["slow_reps"] + modes["fast_reps"]) if modes else None
            sr = row["share_reps"] or {}  # the cuda backend's (the sim composes no shares)
            print(f"2^{lg} {v:<10} x{s:<4} {row['median_ms']:9.3f} {f(st, '8.3f')} {f(st_rep, '7.3f')} {f(slow, '5.0%')} {f(row['shares'], '6d')} {f(sr.get('redone'), '6d')} "
                  f"{f(sr.get('timelines'), '5d')} {f(sr.get('off'), '5d')} {f(sr.get('cut'), '3d')} {f(sr.get('whole'), '5d')} {f(sr.get('whole_one_rep'), '3d')} "
                  f"{f(lead_us, '5.1f')} {f(from0, '6.3f')} {f(call1, '5.1f')} {f(from_call, '9.3f')} {row['seconds_sampled']:5.1f} {f(row['stretch_all'], '6.3f')} {f(row['seconds_all'], '5.1f')} "
                  f"{f(xc.get('shares'), '8d')} "
                  f"{f(xc.get('start_diff_us_median'), '7.1f')}/{f(xc.get('start_diff_us_max'), '<8.1f')} "
                  f"{f(xc.get('end_diff_us_median'), '7.1f')}/{f(xc.get('end_diff_us_max'), '<7.1f')}")
        own = sum(1 for r in rows if r["stretch_sampled_own_rep"] is not None and abs(r["stretch_sampled_own_rep"] - 1) <= 0.05)
        zero = sum(1 for r in rows if r["stretch_from_origin"] is not None and abs(r["stretch_from_origin"] - 1) <= 0.05)
        fcall = sum(1 for r in rows if r["stretch_from_call"] is not None and abs(r["stretch_from_call"] - 1) <= 0.05)
        missed = [r for r in rows if r["stretch_sampled"] is None or abs(r["stretch_sampled"] - 1) > 0.05]
        print(f"\nsampled: median rep's span within 5% of the median total at {within} of {len(points)} points, "
              f"of that rep's own total at {own}; its extent from the rep's start (lead-in included) at {zero}; "
              f"from the host's first call (the host-calls lane included) at {fcall} "
              f"({sum(1 for r in rows if r['calls'])} timelines with calls)")
        print(f"of the {len(missed)} points outside 5%, {sum(1 for r in missed if r['rep_modes'])} are runs whose reps "
              f"fall in two groups (result.rep_modes; 'modes' is the slow group's share): no rep sits at their median")
        if any(r["share_reps"] for r in rows):  # the cuda backend's (the sim composes no shares)
            whole = [(r["share_reps"] or {}).get("whole") or 0 for r in rows]
            one = [(r["share_reps"] or {}).get("whole_one_rep") or 0 for r in rows]
            print(f"timelines that took a rep with every op traced ('whole'): {sum(whole)}, at "
                  f"{sum(1 for w in whole if w)} points; of them built as that one rep, every share having taken it "
                  f"('one'): {sum(one)}")
        for key in ("start_diff_us_median", "end_diff_us_median", "start_diff_us_max", "end_diff_us_max"):
            vals = [r["cross_check"][key] for r in rows if isinstance(r["cross_check"].get(key), (int, float))]
            if vals:
                print(f"cross-check {key}: median over points {statistics.median(vals):.1f}, largest {max(vals):.1f}")
        with open(os.path.join(a.out, "timeline.json"), "w") as fo:
            json.dump({"gpu": gpu, "points": rows}, fo, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
