"""`make bench-plain-ops` (issue 18): the plain reference's own ops under CUPTI (bench/trace_acts.c injected),
its host array memset before every rep as the seeds do and kept (REF_KEEP_ARRAY=1), beside what a streamlab server
on the same GPU simulates from its own calibration and measures through its CUDA backend. Per op (kind, stream):
the median start and duration over the reps. Where does the sim's total differ from the hardware's, op by op: how a
copy slows beside the other direction's, where the array's tail is paid, the gaps between dependent ops.
usage: bench_plain_ops.py BIN REF TRACE_LIB [--out DIR] [--reps N]; writes DIR/plain-ops.json, prints a line a point"""
import argparse, json, os, statistics, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import served, trace_reps  # noqa: E402

PTS = [("v1", 20, 1), ("v1", 20, 2), ("v1", 20, 4), ("v2", 20, 4), ("v1", 21, 4), ("v1", 22, 1), ("v1", 22, 2),
       ("v1", 22, 4), ("v1", 22, 8), ("v1", 22, 16), ("v2", 22, 4), ("v2", 22, 16), ("v1", 23, 4), ("v1", 24, 4),
       ("v1", 25, 4), ("v1", 25, 16), ("seq", 22, 1)]
VAR = {"v1": "async_v1", "v2": "async_v2", "seq": "sequential"}


def per_op(reps):
    """(kind, stream index from 0) -> the median start and duration over the reps, ordered by start"""
    acc = {}
    for rp in reps:
        t0 = rp[0][0]
        sids = sorted({o[3] for o in rp})
        for o in rp:
            acc.setdefault((o[2], sids.index(o[3])), []).append(((o[0] - t0) / 1e3, (o[1] - o[0]) / 1e3))
    rows = [(statistics.median(x[0] for x in a), statistics.median(x[1] for x in a), k) for k, a in acc.items()]
    return [(k[0], k[1], round(st, 2), round(du, 2)) for st, du, k in sorted(rows)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin"), ap.add_argument("ref"), ap.add_argument("lib")
    ap.add_argument("--out", default="build/bench"), ap.add_argument("--reps", type=int, default=31)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    out = {"points": []}
    with served(a.bin, "plain-ops", a.out) as (_, lab, health):
        out["machine"] = lab.call("GET", "/api/machines/" + health["machine_id"])
        for v, lg, s in PTS:
            row = {"variant": v, "size": lg, "streams": s}
            for key, extra in (("sim", {"backend": "sim", "reps": 5}), ("cuda", {"backend": "cuda", "reps": 21})):
                spec = dict({"variant": VAR[v], "size": 1 << lg, "streams": s}, **extra)
                e = lab.call("POST", "/api/experiments", spec)
                e = lab.finished(e["id"], f"{v} {lg} {s}")
                tl = lab.call("GET", f"/api/experiments/{e['id']}/timeline")
                row[key] = {"total_ms": e["result"]["total_ms"]["median"], "lead_us": tl.get("lead_us"),
                            "ops": [(o["op"], o["stream"], o["chunk"], round(o["start_us"], 2), round(o["end_us"], 2))
                                    for o in tl.get("ops") or []]}
            out["points"].append(row)
    for row in out["points"]:
        v, lg, s = row["variant"], row["size"], row["streams"]
        args = [a.ref, v, str(1 << lg), str(s), str(a.reps), "3"]
        row["plain"] = subprocess.run(args, capture_output=True, text=True).stdout.strip()
        row["plain_kept"] = subprocess.run(args, capture_output=True, text=True,
                                           env=dict(os.environ, REF_KEEP_ARRAY="1")).stdout.strip()
        for key, keep in (("dirty", "0"), ("kept", "1")):
            trace = os.path.join(a.out, f"plain-ops-{key}-{v}-{lg}-{s}.txt")
            env = dict(os.environ, CUDA_INJECTION64_PATH=os.path.abspath(a.lib), TRACE_ACTS_OUT=trace,
                       REF_KEEP_ARRAY=keep)
            traced = subprocess.run(args, capture_output=True, text=True, env=env).stdout.strip()
            reps = trace_reps(trace, a.reps, 200_000)
            spans = [(max(o[1] for o in rp) - rp[0][0]) / 1e3 for rp in reps]
            row[key] = {"traced": traced, "nreps": len(reps), "span_us": statistics.median(spans) if spans else 0,
                        "ops": per_op(reps)}
        ms = lambda line: float(line.split()[1]) if line.startswith("ok") else float("nan")  # noqa: E731
        print(f"{v} 2^{lg} x{s}: plain {ms(row['plain']):.4f} ms (array kept {ms(row['plain_kept']):.4f}), "
              f"streamlab {row['cuda']['total_ms']:.4f}, sim {row['sim']['total_ms']:.4f}; CUPTI spans "
              f"{row['dirty']['span_us']:.1f} / {row['kept']['span_us']:.1f} us", flush=True)
    json.dump(out, open(os.path.join(a.out, "plain-ops.json"), "w"))
    print(f"wrote {os.path.join(a.out, 'plain-ops.json')} and the traces beside it")


if __name__ == "__main__":
    main()
