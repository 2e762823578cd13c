"""bench_order.py — `make bench-order`: in which order do the engines serve a pipeline's ops, under
each CUDA_DEVICE_MAX_CONNECTIONS, and what does recording that order cost? The plain reference
(bench/ref_overlap, the seeds' steps) runs each point twice back to back, alone and with CUPTI's
activity records (bench/trace_acts.c, injected with CUDA_INJECTION64_PATH). Per point: both medians
and their ratio (what the recording costs the run), then from the records of the median-span rep the
H2D engine's order (stream indices in creation order) and the kernels that started more than 100 us
after their own H2D ended (behind the host's issue or other streams' work, not their data). A benchmark: it
prints; it asserts nothing. METHOD.md ("the queues behind the copy order") has a run of it.

usage: bench_order.py REF_BIN LIBTRACE [--points v2:32,v1:64] [--size N] [--connections 8,32] [--reps N]
                      [--out DIR]"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import has_gpu, ref_median_ms, trace_reps  # noqa: E402

REP_GAP_NS = 1_000_000  # reps are apart by their memset and check: milliseconds
WAITED_US = 100


def run_ref(ref, variant, size, streams, reps, env):
    out = subprocess.run([ref, variant, str(size), str(streams), str(reps), "3"], env=env, check=True,
                         capture_output=True, text=True).stdout
    return ref_median_ms(out, f"{variant} {size} {streams}")


def order_of(rep):
    """(span us, H2D order as stream indices, kernels that waited past their H2D by WAITED_US)."""
    index = {s: i for i, s in enumerate(sorted({o[3] for o in rep}))}
    h2d_end = {o[3]: o[1] for o in rep if o[2] == "H"}
    order = [index[o[3]] for o in rep if o[2] == "H"]
    waited = [index[o[3]] for o in rep if o[2] == "K" and o[3] in h2d_end and o[0] - h2d_end[o[3]] > WAITED_US * 1000]
    return (max(o[1] for o in rep) - rep[0][0]) / 1000.0, order, waited


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("lib")
    ap.add_argument("--points", default="v2:32,v1:64,v2:16,v2:64,v1:16,v1:128")
    ap.add_argument("--size", type=int, default=1 << 25)
    ap.add_argument("--connections", default="8,32")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", default="build/bench")
    a = ap.parse_args()
    if not has_gpu():
        print("bench-order: skipped (no GPU)")
        return 0
    os.makedirs(a.out, exist_ok=True)
    points = [(p.split(":")[0], int(p.split(":")[1])) for p in a.points.split(",")]
    print(f"bench-order: the plain reference at 2^{a.size.bit_length() - 1}, {a.reps} reps a run, alone and under "
          f"CUPTI's activity records")
    print(f"\n{'connections':>11} {'point':<9} {'plain ms':>9} {'CUPTI ms':>9} {'ratio':>6} {'span us':>8} "
          f"{'waited':>6}  H2D order (median rep), kernels that waited")
    ratios = []
    for conn in a.connections.split(","):
        env = dict(os.environ, CUDA_DEVICE_MAX_CONNECTIONS=conn)
        for variant, streams in points:
            trace = os.path.join(a.out, f"order_{variant}_{streams}_c{conn}.txt")
            plain = run_ref(a.ref, variant, a.size, streams, a.reps, env)
            traced = run_ref(a.ref, variant, a.size, streams, a.reps,
                             dict(env, CUDA_INJECTION64_PATH=os.path.abspath(a.lib), TRACE_ACTS_OUT=trace))
            ratios.append(traced / plain)
            reps = sorted((order_of(r) for r in trace_reps(trace, a.reps, REP_GAP_NS)), key=lambda x: x[0])
            if not reps:
                print(f"{conn:>11} {variant} x{streams:<5} {plain:9.3f} {traced:9.3f}: no records in {trace}")
                continue
            span, order, waited = reps[len(reps) // 2]
            n_waited = statistics.median(len(r[2]) for r in reps)
            print(f"{conn:>11} {variant} x{streams:<5} {plain:9.3f} {traced:9.3f} {traced / plain:6.2f} {span:8.0f} "
                  f"{n_waited:6.1f}  {' '.join(map(str, order[:32]))}{' …' if len(order) > 32 else ''}"
                  f"{'; waited: ' + ' '.join(map(str, waited)) if waited else ''}")
    print(f"\nunder CUPTI / alone: median {statistics.median(ratios):.3f}, {min(ratios):.3f} to {max(ratios):.3f} "
          f"over {len(ratios)} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
