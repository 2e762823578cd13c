"""bench_multi_gpu.py — `make bench-multi-gpu`: streamlab's multi_gpu experiment on two real GPUs,
through the REST API of one `streamlab serve`, against bench/ref_overlap's plain CUDA `mgpu` case
(the same split, issued the same way, timed on one device's clock) and against one GPU alone
(async_v1 on device 0, streamlab and the reference), interleaved point by point over ROUNDS rounds.
Beside them, the simulator's answer for the same spec on this machine's own calibration (sim_of this
machine): what the model says two of these GPUs do. Then the peer copies: streamlab's extra.peer
(cudaMemcpyPeerAsync device 0 -> 1, without and with peer access, best of 5) against the
reference's `peer` case (the same copy, its own code).
Printed per point: each program's median of its run medians, streamlab / reference, the speed-up of
two GPUs over one for each, the sim's total and its error against streamlab's measurement, and the
floor streamlab reports. A benchmark: it prints, it asserts nothing. Skips where fewer than two GPUs.

--export FILE: the last round's runs and the CUPTI run as a bundle (GET /api/export, ops=median), the
server's machine labelled --label: how examples/h100x2-lent.json was made.

usage: bench_multi_gpu.py STREAMLAB_BIN REF_BIN [--rounds N] [--reps N] [--sizes 24,26]
                          [--streams 1,4,16] [--out DIR] [--export FILE [--label TEXT]]"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import gpu_count, ref_median_ms, served  # noqa: E402

PEER_BYTES = 64 << 20  # streamlab's PEER_BYTES (gpu/cuda_peer.cu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("ref")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--sizes", default="24,26", help="log2 sizes, e.g. 24,26")
    ap.add_argument("--streams", default="1,4,16", help="streams per device, e.g. 1,4,16")
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--export", help="write the last round's runs as a bundle here")
    ap.add_argument("--label", help="the server's machine label (default bench-multi-gpu-PID)")
    a = ap.parse_args()
    n = gpu_count()
    if n < 2:
        print(f"bench-multi-gpu: skipped ({n} GPU{'' if n == 1 else 's'} here; it needs 2)")
        return 0
    os.makedirs(a.out, exist_ok=True)
    points = [(lg, s) for lg in (int(x) for x in a.sizes.split(",")) for s in (int(x) for x in a.streams.split(","))]
    with served(a.bin, "multi-gpu", a.out, a.label) as (_, lab, health):
        ref = subprocess.Popen([a.ref, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

        def ask_ref(line):
            ref.stdin.write(line + "\n")
            ref.stdin.flush()
            return ref.stdout.readline().strip()

        try:
            if health.get("backend") != "cuda":
                print("bench-multi-gpu: skipped (the server found no GPU)")
                return 0
            mid = health["machine_id"]
            m = lab.call("GET", "/api/machines/" + mid)
            gpus = m.get("gpus") or []
            if len(gpus) < 2:
                print(f"bench-multi-gpu: skipped (the server sees {len(gpus)} GPU)")
                return 0
            names = ", ".join(f"{g.get('name')} ({g.get('uuid')})" for g in gpus[:2])
            print(f"bench-multi-gpu: {names}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
                  f"{a.rounds} rounds, {a.reps} reps a run")
            runs = {}  # (lg, s, who) -> [medians]
            peers = []
            multi_ids, last_round = {}, []
            for rnd in range(a.rounds):
                for lg, s in points:
                    base = {"size": 1 << lg, "streams": s, "reps": a.reps, "warmup": 2, "label": f"multi-gpu r{rnd}"}
                    one = lab.finished(lab.call("POST", "/api/experiments", dict(base, variant="async_v1", devices=[0]))["id"],
                                       f"2^{lg} x{s} one GPU")
                    runs.setdefault((lg, s, "sl1"), []).append(one["result"]["total_ms"]["median"])
                    runs.setdefault((lg, s, "ref1"), []).append(ref_median_ms(ask_ref(f"v1 {1 << lg} {s} {a.reps} 2"), f"v1 2^{lg} x{s}"))
                    two = lab.finished(lab.call("POST", "/api/experiments", dict(base, variant="multi_gpu", devices=[0, 1]))["id"],
                                       f"2^{lg} x{s} two GPUs")
                    runs.setdefault((lg, s, "sl2"), []).append(two["result"]["total_ms"]["median"])
                    if rnd == a.rounds - 1:
                        last_round += [one["id"], two["id"]]
                    runs.setdefault((lg, s, "floor2"), []).append(two["result"].get("floor_ms"))
                    multi_ids[(lg, s)] = two["id"]
                    peer = (two["result"].get("extra") or {}).get("peer")
                    if peer:
                        peers.append(peer)
                    runs.setdefault((lg, s, "ref2"), []).append(ref_median_ms(ask_ref(f"mgpu {1 << lg} {s} {a.reps} 2"), f"mgpu 2^{lg} x{s}"))
                    if rnd == 0:
                        for variant, key in (("async_v1", "sim1"), ("multi_gpu", "sim2")):
                            sim = lab.finished(lab.call("POST", "/api/experiments", dict(
                                base, variant=variant, devices=[0] if key == "sim1" else [0, 1], sim_of=mid, reps=3,
                                warmup=0))["id"], f"2^{lg} x{s} sim {variant}")
                            runs[(lg, s, key)] = [sim["result"]["total_ms"]["median"]]
            ref_peer = ask_ref(f"peer {PEER_BYTES} 0 5 1").split()
            # one multi_gpu run timed by CUPTI too: its cross-check holds the events' timeline (device 1's
            # clock aligned to device 0's through the host) against CUPTI's records (one clock for both)
            xlg, xs = points[-1]
            xc_run = lab.finished(lab.call("POST", "/api/experiments", {
                "variant": "multi_gpu", "size": 1 << xlg, "streams": xs, "devices": [0, 1], "reps": a.reps, "warmup": 2,
                "timing": "cupti", "label": "multi-gpu cupti"})["id"], f"2^{xlg} x{xs} two GPUs, cupti")
            xc = ((xc_run["result"].get("extra") or {}).get("timing") or {})

            def med(key):
                v = [x for x in runs.get(key, []) if isinstance(x, (int, float))]
                return statistics.median(v) if v else float("nan")

            print(f"\n{'point':<12} {'1 GPU sl':>8} {'ref':>7} {'sl/ref':>6} | {'2 GPUs sl':>9} {'ref':>7} {'sl/ref':>6} | "
                  f"{'speed-up sl':>11} {'ref':>5} | {'sim 1':>7} {'sim 2':>7} {'sim2/sl2':>8} | {'floor 2':>7}")
            rows = []
            for lg, s in points:
                r = {k: med((lg, s, k)) for k in ("sl1", "ref1", "sl2", "ref2", "sim1", "sim2", "floor2")}
                rows.append(dict(r, size=1 << lg, streams=s, runs={k: runs.get((lg, s, k)) for k in ("sl1", "ref1", "sl2", "ref2")},
                                 multi_gpu_id=multi_ids.get((lg, s))))
                print(f"2^{lg} x{s:<5} {r['sl1']:8.3f} {r['ref1']:7.3f} {r['sl1'] / r['ref1']:6.3f} | {r['sl2']:9.3f} {r['ref2']:7.3f} "
                      f"{r['sl2'] / r['ref2']:6.3f} | {r['sl1'] / r['sl2']:11.2f} {r['ref1'] / r['ref2']:5.2f} | {r['sim1']:7.3f} "
                      f"{r['sim2']:7.3f} {r['sim2'] / r['sl2'] - 1:+8.1%} | {r['floor2']:7.3f}")
            print("\npeer copies, device 0 -> 1, 64 MiB (GB/s; best of 5)")
            if peers:
                can = peers[0].get("can_access_peer")
                wo = [p["without_peer_access_gbps"] for p in peers if isinstance(p.get("without_peer_access_gbps"), (int, float))]
                wi = [p["with_peer_access_gbps"] for p in peers if isinstance(p.get("with_peer_access_gbps"), (int, float))]
                print(f"  streamlab (extra.peer of {len(peers)} multi_gpu runs, median of their bests): can_access_peer {can}, "
                      f"without {statistics.median(wo) if wo else float('nan'):.1f}, with {statistics.median(wi) if wi else float('nan'):.1f}")
            else:
                print("  streamlab: no extra.peer in the multi_gpu runs")
            if ref_peer and ref_peer[0] == "ok":
                print(f"  reference: without {float(ref_peer[1]):.1f} (median {float(ref_peer[3]):.1f}), "
                      f"with {float(ref_peer[2]):.1f} (median {float(ref_peer[4]):.1f})")
            else:
                print(f"  reference: {' '.join(ref_peer)}")
            cc = xc.get("cross_check") or {}
            print(f"\ncupti run 2^{xlg} x{xs} two GPUs: median {xc_run['result']['total_ms']['median']:.3f} ms "
                  f"(without CUPTI {(xc.get('without_cupti') or {}).get('median_ms')}); events against CUPTI per op: start "
                  f"median/max {cc.get('start_diff_us_median')}/{cc.get('start_diff_us_max')} us, end "
                  f"{cc.get('end_diff_us_median')}/{cc.get('end_diff_us_max')} us")
            with open(os.path.join(a.out, "multi_gpu_timeline.json"), "w") as fo:
                json.dump({"cupti_run": xc_run, "timeline": lab.call("GET", f"/api/experiments/{xc_run['id']}/timeline")}, fo)
            if a.export:
                ids = "&".join(f"experiment={i}" for i in last_round + [xc_run["id"]])
                with open(a.export, "w") as fo:
                    json.dump(lab.call("GET", f"/api/export?{ids}&ops=median"), fo)
                print(f"bundle: {len(last_round) + 1} experiments in {a.export}")
            with open(os.path.join(a.out, "multi_gpu.json"), "w") as fo:
                json.dump({"gpus": gpus[:2], "machine": m, "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
                           "points": rows, "peer_streamlab": peers, "peer_reference": ref_peer}, fo, indent=1)
        finally:
            ref.stdin.close()
            ref.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
