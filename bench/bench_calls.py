"""bench_calls.py — `make bench-calls`: the CUDA calls one repetition makes, by kind, in streamlab and
in bench/ref_overlap (a plain CUDA program doing the seeds' steps), counted by CUPTI's callback API
(bench/count_calls.c, injected with CUDA_INJECTION64_PATH). Each program runs each point at 10 and at
30 reps; the difference over 20 is one rep's calls, whatever a run makes once (context, calibration,
allocation) falling out. streamlab runs twice: trace_ops all (each measured rep is a clean rep and a
traced rep with an event pair around every op: exact) and sampled, the default (its clean reps make
the same calls, and its composed timelines' traced reps, a share's events each and retried where off,
are spread over the run: per rep, an average). A benchmark: it prints; it asserts nothing.

usage: bench_calls.py STREAMLAB_BIN REF_BIN LIBCOUNT [--out DIR]"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import has_gpu  # noqa: E402

POINTS = [("async_v2", "v2", 1 << 22, 256), ("async_v1", "v1", 1 << 22, 128), ("sequential", "seq", 1 << 25, 1)]


def parse(path):
    blocks, cur = {}, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("== "):
                cur = blocks.setdefault(line[3:], collections.Counter())
            elif cur is not None and line.count(" ") == 2:
                dom, name, n = line.split(" ")
                cur[(dom, re.sub(r"_v\d+$", "", name))] += int(n)
    return blocks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("ref")
    ap.add_argument("lib")
    ap.add_argument("--out", default="build/bench")
    a = ap.parse_args()
    if not has_gpu():
        print("bench-calls: skipped (no GPU)")
        return 0
    os.makedirs(a.out, exist_ok=True)
    out = os.path.join(a.out, "calls.txt")
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, CUDA_INJECTION64_PATH=os.path.abspath(a.lib), COUNT_CALLS_OUT=os.path.abspath(out))
    tmp = tempfile.mkdtemp(prefix="calls.")
    for variant, ref_name, size, streams in POINTS:
        for reps in (10, 30):
            tag = f"{ref_name} {size} {streams} reps {reps}"
            subprocess.run([a.ref, ref_name, str(size), str(streams), str(reps), "3"], env=dict(env, COUNT_CALLS_TAG="ref " + tag),
                           check=True, stdout=subprocess.DEVNULL)
            for mode in ("all", "sampled"):
                spec = os.path.join(tmp, "spec.json")
                with open(spec, "w") as f:
                    json.dump({"variant": variant, "size": size, "streams": streams, "reps": reps, "warmup": 3,
                               "backend": "cuda", "trace_ops": mode}, f)
                subprocess.run([a.bin, "run", spec], env=dict(env, COUNT_CALLS_TAG=f"sl-{mode} " + tag), check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    blocks = parse(out)
    for variant, ref_name, size, streams in POINTS:
        per = {}
        for prog in ("ref", "sl-all", "sl-sampled"):
            lo = blocks.get(f"{prog} {ref_name} {size} {streams} reps 10", collections.Counter())
            hi = blocks.get(f"{prog} {ref_name} {size} {streams} reps 30", collections.Counter())
            per[prog] = {k: (hi[k] - lo[k]) / 20 for k in set(lo) | set(hi) if hi[k] != lo[k]}
        print(f"\n{variant} 2^{size.bit_length() - 1} x{streams}: calls per rep")
        print(f"{'':4}{'call':<32} {'reference':>10} {'sl, all':>10} {'sl, sampled':>12}")
        for k in sorted(set(per["ref"]) | set(per["sl-all"]) | set(per["sl-sampled"])):
            r, s, t = per["ref"].get(k, 0), per["sl-all"].get(k, 0), per["sl-sampled"].get(k, 0)
            if k[0] == "rt" or r != s or r != t:
                print(f"{k[0]:<4}{k[1]:<32} {r:10.2f} {s:10.2f} {t:12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
