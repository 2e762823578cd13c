"""rep_phases.py — issue 18: where a many-stream rep's time goes, untraced on the GPU against the sim of
the same machine. Reads `probe_modes ... stamps` runs made with PROBE_EDGES=1 (each rep: its kernels'
starts and ends on the GPU's global timer, and a one-thread kernel's stamp at the rep's start and at
its end, on the legacy stream), e.g.
  PROBE_EDGES=1 taskset -c 15 build/bench/probe_modes v2 33554432 64 30 1 keep stamps > edges-v2x64-25.txt
as files named edges-v1xS-L*.txt / edges-v2xS-L*.txt (L the log2 size), or one gzip of them each
headed "# edges-...txt" (bench/data/probes/GPU-*-edges-*.txt.gz). Runs the same points on the sim of
PROFILE (a bench_sim --measure output, or any profile: its machine is imported into a fresh sim
server and simulated with `sim_of`, every op traced) and prints per point the medians of
  A  the rep's start to its first kernel's start (the host issues, the H2D engine fills)
  B  the first kernel's start to the last kernel's end
  C  the last kernel's end to the rep's end (the D2H tail)
  L  when the last kernel starts, from the rep's start
for the GPU, the sim and their difference. The edge stamps are kernels of their own: the start
one runs right after the start event, so A is the GPU's lead less a few us. A probe: it prints,
it asserts nothing.

usage: rep_phases.py STREAMLAB_BIN PROFILE STAMPS [STAMPS...]"""
import gzip
import json
import os
import re
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import served  # noqa: E402

NAME = re.compile(r"edges-(v[12])x(\d+)-(\d+)")


def read_stamps(paths):
    """{(variant, log2 size, streams): [(total_us, A, B, C, L)]} from edge-stamped rep lines."""
    out = {}
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        point = None
        with opener(path, "rt") as f:
            for line in f:
                if line.startswith("#"):
                    m = NAME.search(line)
                    point = m and (m.group(1), int(m.group(3)), int(m.group(2)))
                    continue
                if point is None:
                    m = NAME.search(os.path.basename(path))
                    point = m and (m.group(1), int(m.group(3)), int(m.group(2)))
                w = line.split()
                if not point or not w or w[0] != "rep" or "edges" not in w:
                    continue
                at = w.index("edges")
                v = [float(x) for x in w[4:at]]
                start, end = float(w[at + 1]), float(w[at + 2])
                ks = [(v[2 * i] - start, v[2 * i + 1] - start) for i in range(point[2])]
                first = min(a for a, _ in ks)
                last_end = max(b for _, b in ks)
                out.setdefault(point, []).append((1000 * float(w[3]), first, last_end - first, end - start - last_end,
                                                  max(a for a, _ in ks)))
    return out


def sim_phases(lab, machine_id, point):
    """The sim's (total_us, A, B, C, L) of one point, every op traced, from its median rep."""
    variant, lg, streams = point
    e = lab.call("POST", "/api/experiments", {"variant": "async_" + variant, "size": 1 << lg, "streams": streams,
                                               "reps": 3, "trace_ops": "all", "sim_of": machine_id})
    done = lab.finished(e["id"], f"sim of {point}")
    ops = lab.call("GET", f"/api/experiments/{e['id']}/timeline")["ops"]
    ks = [(o["start_us"], o["end_us"]) for o in ops if o["op"] == "kernel"]
    total = done["result"]["total_ms"]["median"] * 1000
    first = min(a for a, _ in ks)
    last_end = max(b for _, b in ks)
    return total, first, last_end - first, total - last_end, max(a for a, _ in ks)


def main():
    if len(sys.argv) < 4:
        print(__doc__.rsplit("usage: ", 1)[1].strip(), file=sys.stderr)
        return 2
    binary, profile_path, stamps = sys.argv[1], sys.argv[2], sys.argv[3:]
    gpu = read_stamps(stamps)
    if not gpu:
        print("rep_phases: no edge-stamped reps in " + " ".join(stamps), file=sys.stderr)
        return 2
    profile = json.load(open(profile_path))
    machine = profile["machine"]
    os.environ["STREAMLAB_BACKEND"] = "sim"
    out_dir = tempfile.mkdtemp(prefix="rep_phases.")
    with served(binary, "phases", out_dir) as (_, lab, _):
        lab.import_machine(machine)
        gpu_name = machine["gpus"][0].get("uuid", "?")[:12]
        print(f"GPU reps (untraced, edges stamped) against the sim of {profile_path} ({gpu_name}); medians, us")
        print(f"{'point':14s} {'reps':>4s} | {'total':>7s} {'A':>6s} {'B':>7s} {'C':>7s} {'L':>7s} | "
              f"{'sim':>7s} {'A':>6s} {'B':>7s} {'C':>7s} {'L':>7s} | {'d total':>7s} {'dA':>6s} {'dB':>6s} {'dC':>6s} "
              f"{'dL':>6s}")
        for point in sorted(gpu, key=lambda p: (p[1], p[0], p[2])):
            g = [statistics.median(r[i] for r in gpu[point]) for i in range(5)]
            s = sim_phases(lab, machine["id"], point)
            d = [a - b for a, b in zip(g, s)]
            print(f"2^{point[1]} {point[0]} x{point[2]:<4d} {len(gpu[point]):4d} | {g[0]:7.1f} {g[1]:6.1f} {g[2]:7.1f} "
                  f"{g[3]:7.1f} {g[4]:7.1f} | {s[0]:7.1f} {s[1]:6.1f} {s[2]:7.1f} {s[3]:7.1f} {s[4]:7.1f} | "
                  f"{d[0]:+7.1f} {d[1]:+6.1f} {d[2]:+6.1f} {d[3]:+6.1f} {d[4]:+6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
