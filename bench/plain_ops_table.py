"""plain_ops_table.py IN.json OUT.json — a `make bench-plain-ops` file as a table bench_sim scores: the plain
program's totals (bench/ref_overlap without CUPTI, its array memset before every rep, the seeds' way) at the
file's 17 points, with the measuring GPU's own calibration as the profile. Then
  build/bench/bench_sim --against OUT.json OUT.json            # from that GPU's calibration
  build/bench/bench_sim --against OUT.json profiles/h100.json  # from a shipped profile
print each point's error (2^20-2^25 at 1-16 streams: where the seeds' table has no small arrays)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_plain_ops import VAR  # noqa: E402  the file's short variant names


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src = json.load(open(sys.argv[1]))
    m = src["machine"]
    g = m["gpus"][0]
    points = []
    for p in src["points"]:
        f = p["plain"].split()  # ref_overlap's line: ok median min max issue_us
        if f[0] != "ok":
            continue
        points.append({"variant": VAR[p["variant"]], "size": 1 << p["size"], "streams": p["streams"],
                       "median_ms": float(f[1]), "rounds_ms": [float(f[1])], "issue_us": float(f[4])})
    kind = "lent-h200" if "H200" in g["name"] else "lent-h100"
    out = {"profile": {"name": kind, "measured_at": m["first_seen"], "gpu_name": g["name"], "gpu_uuid": g["uuid"],
                       "driver_version": m.get("driver_version"), "cuda_runtime": m.get("cuda_runtime"),
                       "by": "streamlab's calibration (gpu/cuda_calibrate.cu), in make bench-plain-ops"},
           "machine": m,
           "reference": {"program": "bench/ref_overlap (plain CUDA, the seeds' steps)", "reps": 31, "warmup": 3,
                         "rounds": 1, "points": points}}
    json.dump(out, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
