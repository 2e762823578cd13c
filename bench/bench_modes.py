"""bench_modes.py — `make bench-modes` (issue 18): why some many-stream points run in two modes.
Plain CUDA only (bench/probe_modes.cu, the seeds' v1/v2 steps as bench/ref_overlap.cu runs them),
nothing of streamlab's. Per point, TRIALS fresh set-ups of REPS reps each:
  modes     every rep's total, split at the widest gap of the sorted totals (a tenth of the reps,
            and at least 2, on each side) where it passes 5% of the fastest, else one mode; reps
            past 1.5x the median set aside as outliers (a result's rep_modes, server/API.md): each
            mode's median and the slow one's share,
            with the default hardware queues (CUDA_DEVICE_MAX_CONNECTIONS unset) and with 32;
  channels  one more trial under CUPTI's activity records (bench/trace_acts.c, which slow every
            call): how many hardware channels each kind of op ran from, how often a kernel took
            the channel its kind had used least recently (a rotation; "+1 turn": one in which each
            rep's start takes a turn, as if the legacy stream's start event took a kernel channel),
            and, per rep, the kernels that waited more than 100 us past their own H2D (head-of-line
            blocking behind a kernel of another stream in the same channel), in fast and slow reps.
A benchmark: it prints, it asserts nothing.

usage: bench_modes.py PROBE TRACE_LIB [--points v1:64,v2:32] [--reps 20] [--trials 3] [--out DIR]"""
import argparse
import math
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import has_gpu, trace_reps  # noqa: E402

SIZE = 1 << 25
WAITED_NS = 100_000


def run_probe(probe, variant, streams, reps, trials, env=None, stamps=False):
    args = [probe, variant, str(SIZE), str(streams), str(reps), str(trials), "keep"] + (["stamps"] if stamps else [])
    out = subprocess.run(args, env={**os.environ, **(env or {})}, check=True, capture_output=True, text=True).stdout
    times = []
    for line in out.splitlines():
        if line.startswith("trial "):
            times += [float(x) for x in line.split(" reps ")[1].split()]
    return times, out


def modes(times):
    """(fast median, slow median or None, slow share, outliers), by the rule of a result's
    rep_modes (gpu/core.c, stats_rep_modes): reps past 1.5x the median are outliers (a hiccup
    of the host, not a mode); the rest split at their widest gap that leaves a tenth of them,
    and at least 2, on each side, where it passes 5% of the fastest"""
    med = statistics.median(times)
    t = sorted(x for x in times if x <= 1.5 * med)
    outliers = len(times) - len(t)
    if len(times) < 6:
        return statistics.median(t), None, 0.0, outliers
    least = max(2, math.ceil(len(t) / 10))
    gaps = [(t[i + 1] - t[i], i) for i in range(least - 1, len(t) - least)]
    gap, i = max(gaps) if gaps else (0, 0)
    if gap <= 0.05 * t[0]:
        return statistics.median(t), None, 0.0, outliers
    return statistics.median(t[:i + 1]), statistics.median(t[i + 1:]), (len(t) - i - 1) / len(t), outliers


def channels(reps):
    """channels per kind; the share of kernels (in launch = stream order) on their kind's least
    recently used channel, as a plain rotation and as one in which each rep's start takes a turn
    (as if the legacy stream's start event took a kernel channel); per rep: (span us, kernels
    that waited past their H2D)"""
    per_kind = {k: sorted({o[4] for r in reps for o in r if o[2] == k}) for k in "HKD"}
    hits, kernels, per_rep = [0, 0], 0, []
    last_use = [{}, {}]
    tick = 0
    for r in reps:
        h2d_end = {o[3]: o[1] for o in r if o[2] == "H"}
        tick += 1
        turn = min(per_kind["K"], key=lambda c: last_use[1].get(c, -1))
        last_use[1][turn] = tick
        for o in sorted((o for o in r if o[2] == "K"), key=lambda o: o[3]):
            tick += 1
            kernels += 1
            for k in (0, 1):
                lru = min(per_kind["K"], key=lambda c: last_use[k].get(c, -1))
                hits[k] += o[4] == lru
                last_use[k][o[4]] = tick
        waited = sum(1 for o in r if o[2] == "K" and o[0] - h2d_end.get(o[3], o[0]) > WAITED_NS)
        per_rep.append(((max(o[1] for o in r) - r[0][0]) / 1e3, waited))
    return per_kind, [h / max(kernels, 1) for h in hits], per_rep


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("probe")
    ap.add_argument("lib")
    ap.add_argument("--points", default="v1:32,v1:64,v1:128,v2:16,v2:32,v2:64,v2:128")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--out", default="build/bench")
    a = ap.parse_args()
    if not has_gpu():
        print("bench-modes: skipped (no GPU)")
        return 0
    os.makedirs(a.out, exist_ok=True)
    print(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.strip())
    print(f"2^25, {a.trials} set-ups x {a.reps} reps a point; ms")
    print(f"{'point':<10} {'conns':>5} {'fast':>7} {'slow':>7} {'slow share':>10} {'median':>7} {'outliers':>8}")
    points = [(p.split(":")[0], int(p.split(":")[1])) for p in a.points.split(",")]
    for variant, streams in points:
        for conns in (None, "32"):
            times, _ = run_probe(a.probe, variant, streams, a.reps, a.trials,
                                 {"CUDA_DEVICE_MAX_CONNECTIONS": conns} if conns else None)
            fast, slow, share, outliers = modes(times)
            print(f"{variant} x{streams:<5} {conns or 'dflt':>5} {fast:7.3f} {slow if slow else float('nan'):7.3f} "
                  f"{share:10.2f} {statistics.median(times):7.3f} {outliers:8d}")
    print("\nunder CUPTI (one set-up; its records slow every call), default queues:")
    print(f"{'point':<10} {'H2D ch':>6} {'K ch':>5} {'D2H ch':>6} {'K on LRU':>8} {'+1 turn':>7} "
          f"{'fast reps: ms, kernels waited':>30} {'slow reps: ms, kernels waited':>30}")
    for variant, streams in points:
        trace = os.path.join(a.out, f"modes-{variant}x{streams}.acts")
        times, _ = run_probe(a.probe, variant, streams, a.reps, 1,
                             {"CUDA_INJECTION64_PATH": os.path.abspath(a.lib), "TRACE_ACTS_OUT": trace})
        reps = trace_reps(trace, a.reps)
        if not reps:
            print(f"{variant} x{streams}: no whole reps in the records")
            continue
        per_kind, lru, per_rep = channels(reps)
        fast, slow, _, _ = modes([s / 1e3 for s, _ in per_rep])
        cut = (fast + slow) / 2 if slow else float("inf")
        f = [w for s, w in per_rep if s / 1e3 < cut]
        sl = [w for s, w in per_rep if s / 1e3 >= cut]
        fs = f"{fast:.3f}, {statistics.median(f):.0f} ({len(f)} reps)"
        ss = f"{slow:.3f}, {statistics.median(sl):.0f} ({len(sl)} reps)" if sl else "-"
        print(f"{variant} x{streams:<5} {len(per_kind['H']):6d} {len(per_kind['K']):5d} {len(per_kind['D']):6d} "
              f"{lru[0]:8.2f} {lru[1]:7.2f} {fs:>30} {ss:>30}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
