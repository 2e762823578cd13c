"""bench_soak.py — `make bench-soak`: does a long-running server measure like a fresh plain CUDA
program, run after run? (issue 19) One `streamlab serve` process; the same experiment through the
REST API RUNS times (default 20) at each soak point, interleaved with bench/ref_overlap (the seeds'
steps, a plain CUDA program answering over a pipe): round i runs every point once in each program,
who runs a point first turning from one round to the next.
Printed per point: streamlab's and the reference's medians of runs 1-5 and of the last 5, their
ratio, the slope (ms per run, least squares), streamlab / reference over all runs, and that ratio
taken round by round, its last 5 over its first 5 (the drift of streamlab's process with the
machine's own drift, which moves both programs, taken out); and after
each round what the server process holds: threads, open files, RSS, locked and pinned memory
(VmLck, VmPin), its GPU memory (nvidia-smi) and the CUDA objects it says it holds (/metrics).
--table: the seeds' 38 points instead (2^22 and 2^25; sequential; async_v1/v2 x 1..256), RUNS
rounds (default 3), the same interleaving in the same long-lived server: per point the median of
each program's run medians, streamlab / reference, and at the end how many points are within 5%
and at how many streamlab is the slower (issue 19's table: at least 36 of 38, at most 24 slower).
--table --self-check: a second reference process (its own context, the same program) runs every
point too, in its turn, and is scored against the first exactly as streamlab is: what
the same plain CUDA program gets against itself on this machine in the same minutes, the floor
under streamlab's count.
Before the server starts, the reference settles the machine (--settle, up to 120 s): a lent VM runs
the host-bound points slow and noisy for its first minute, both programs alike, which would read as
drift or as a first run unlike the tenth. The server's own first run is still its first.
A benchmark: it prints, it asserts nothing.

usage: bench_soak.py STREAMLAB_BIN REF_BIN [--table [--sizes 22,25] [--self-check]] [--runs N] [--reps N]
                     [--trace-ops sampled|all] [--cpu N] [--settle S] [--out DIR]"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import ask_ref_answer, has_gpu, host_times, pin_to, seed_points, served, settle  # noqa: E402

POINTS = [  # (variant, log2 size, streams): issue 19's host-bound and two-mode points
    ("async_v2", 22, 256), ("async_v2", 22, 32), ("async_v1", 22, 128), ("async_v1", 25, 64), ("sequential", 25, 1)]


def proc_counts(pid):
    """What the process holds now: threads, open files, RSS / VmLck / VmPin (MiB), GPU MiB."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Threads",):
                    out["threads"] = int(rest.split()[0])
                elif key in ("VmRSS", "VmLck", "VmPin"):
                    out[key] = round(int(rest.split()[0]) / 1024, 1)
        out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        pass
    try:
        smi = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout
        out["gpu_mib"] = sum(int(l.split(",")[1]) for l in smi.splitlines() if l.split(",")[0].strip() == str(pid))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        out["gpu_mib"] = None
    return out


def server_counts(lab):
    """What the server says it holds (/metrics): under "cuda" its CUDA objects
    (streamlab_cuda_objects), {kind: n}; under "cache_mib" the finished experiments' JSON it keeps
    to answer reads (streamlab_cache_bytes, bounded), the part of its RSS that grows with the
    experiments it has answered for; under "heap_in_use_mib" / "heap_free_mib" what the C
    allocator holds (streamlab_heap_bytes)."""
    out = {"cuda": {}}
    try:
        req = urllib.request.urlopen(lab.base + "/metrics", timeout=30)
        for line in req.read().decode().splitlines():
            if line.startswith("streamlab_cuda_objects{"):
                kind = line.split('kind="')[1].split('"')[0]
                out["cuda"][kind] = int(float(line.rsplit(" ", 1)[1]))
            elif line.startswith("streamlab_cache_bytes "):
                out["cache_mib"] = round(float(line.split()[1]) / (1 << 20), 1)
            elif line.startswith("streamlab_heap_bytes{"):
                state = line.split('state="')[1].split('"')[0]
                out["heap_" + state + "_mib"] = round(float(line.rsplit(" ", 1)[1]) / (1 << 20), 1)
    except (OSError, ValueError, IndexError):
        pass
    return out


def slope(ys):
    n = len(ys)
    if n < 2:
        return 0.0
    mx, my = (n - 1) / 2, statistics.fmean(ys)
    return sum((i - mx) * (y - my) for i, y in enumerate(ys)) / sum((i - mx) ** 2 for i in range(n))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("ref")
    ap.add_argument("--table", action="store_true", help="the seeds' 38 points, default 3 rounds")
    ap.add_argument("--sizes", default="22,25", help="--table: the log2 sizes, e.g. 22")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--trace-ops", default="sampled", choices=("sampled", "all"),
                    help="the experiments' trace_ops (sampled, the default, costs seconds a run at 64-256 streams)")
    ap.add_argument("--self-check", action="store_true",
                    help="--table: a second reference process, scored against the first as streamlab is")
    ap.add_argument("--cpu", type=int, default=(os.cpu_count() or 1) - 1,
                    help="the CPU both programs issue from, one at a time (default the last, as bench_sim pins the "
                         "reference; -1: unpinned): the reference pinned there, the server's GPU worker too "
                         "(--worker-cpu; its other threads run elsewhere). The host-bound points follow the host's "
                         "pace, and an unpinned process's moves between CPUs move it")
    ap.add_argument("--settle", type=int, default=120,
                    help="before the server starts, the reference settles the machine for up to this many seconds, "
                         "until its host-bound points are steady (0: not): a lent VM's first minute is slow and noisy "
                         "for any program, which would read as drift")
    ap.add_argument("--out", default="build/bench")
    a = ap.parse_args()
    cpu = a.cpu if a.cpu >= 0 else None
    points = seed_points(a.sizes) if a.table else POINTS
    if a.runs is None:
        a.runs = 3 if a.table else 20
    os.makedirs(a.out, exist_ok=True)
    if not has_gpu():
        print("bench-soak: skipped (no GPU)")
        return 0
    refs = [subprocess.Popen([a.ref, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                             preexec_fn=pin_to(cpu))
            for _ in range(2 if a.table and a.self_check else 1)]
    settled = settle(refs[0], a.settle)
    try:
        with served(a.bin, "soak", a.out, cpu=cpu) as (srv, lab, health):
            if health.get("backend") != "cuda":
                print("bench-soak: skipped (the server found no GPU)")
                return 0
            gpu = lab.call("GET", "/api/machines/" + health["machine_id"])["gpus"][0]
            print(f"bench-soak: {gpu['name']} ({gpu['uuid']}), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
                  f"{a.runs} rounds, each point once per round in each program (who goes first turning round by "
                  f"round), {a.reps} reps a run, "
                  f"trace_ops {a.trace_ops}, " +
                  (f"the reference and streamlab's worker on CPU {cpu}" if cpu is not None else "unpinned"))
            if a.settle > 0:
                print(f"settled the machine first for {settled[0]:.0f} s ("
                      f"{'steady' if settled[1] else 'not steady by then'}): the reference's 2^22 async_v1 x128 "
                      f"{settled[2]:.3f} ms in its first 5 s, {settled[3]:.3f} in its last; then the server started")
            sl = {p: [] for p in points}
            two = {p: 0 for p in points}  # streamlab's runs whose reps fell in two groups (result.rep_modes)
            runs = {p: [] for p in points}  # streamlab's runs, for the JSON: id, reps_ms, rep_modes, host times
            ref_runs = [{p: [] for p in points} for _ in refs]  # each reference's answers (lab.ask_ref_answer)
            rf = {p: [] for p in points}
            rf2 = {p: [] for p in points} if len(refs) > 1 else None  # --self-check: the second reference's runs
            counts = [("start", dict(proc_counts(srv.pid), **server_counts(lab)))]
            def run_sl(p, r):
                v, lg, s = p
                e = lab.call("POST", "/api/experiments", {"variant": v, "size": 1 << lg, "streams": s, "reps": a.reps,
                                                          "warmup": 3, "backend": "cuda", "trace_ops": a.trace_ops,
                                                          "label": f"soak {r + 1}"})
                e = lab.finished(e["id"], f"streamlab {p}")
                sl[p].append(e["result"]["total_ms"]["median"])
                two[p] += bool(e["result"].get("rep_modes"))
                runs[p].append(dict({"id": e["id"], "reps_ms": e["result"].get("reps_ms"),
                                     "rep_modes": e["result"].get("rep_modes")}, **host_times(e["result"])))

            def run_ref(k, into):
                def turn(p, r):
                    answer = ask_ref_answer(refs[k], p, a.reps)
                    into[p].append(answer["ms"])
                    ref_runs[k][p].append(answer)
                return turn

            # Who runs a point first turns round by round (a Latin square over the rounds): a
            # fixed order, the reference always first, gave the same plain program run second a
            # bias of its own (on a lent H200, 2026-11-26, GPU-30796668: the second reference
            # process the slower at 28 of 38 points, every 2^25 point 1.000-1.009).
            turns = [run_ref(0, rf), run_sl]
            if rf2 is not None:
                turns.append(run_ref(1, rf2))
            for r in range(a.runs):
                order = turns[r % len(turns):] + turns[:r % len(turns)]
                for p in points:
                    for turn in order:
                        turn(p, r)
                counts.append((f"after round {r + 1}", dict(proc_counts(srv.pid), **server_counts(lab))))
            if a.table:
                return print_table(points, sl, rf, rf2, a.out, gpu, counts, two, settle_json(a.settle, settled), runs,
                                   ref_runs)
            print(f"\n{'point':<22} {'sl 1-5':>8} {'sl last5':>9} {'last/first':>10} {'slope ms/run':>12} "
                  f"{'ref 1-5':>8} {'ref last5':>9} {'last/first':>10} {'sl/ref':>7} {'sl/ref last/first':>17}")
            rows = []
            for p in points:
                v, lg, s = p
                f5, l5 = statistics.median(sl[p][:5]), statistics.median(sl[p][-5:])
                rf5, rl5 = statistics.median(rf[p][:5]), statistics.median(rf[p][-5:])
                ratio = statistics.median(sl[p]) / statistics.median(rf[p])
                # each round's streamlab / reference, minutes apart at most: the machine's own drift
                # cancels, what streamlab's process adds does not
                per = [x / y for x, y in zip(sl[p], rf[p])]
                rdrift = statistics.median(per[-5:]) / statistics.median(per[:5])
                print(f"2^{lg} {v} x{s:<8} {f5:8.3f} {l5:9.3f} {l5 / f5:10.3f} {slope(sl[p]):12.4f} {rf5:8.3f} {rl5:9.3f} "
                      f"{rl5 / rf5:10.3f} {ratio:7.3f} {rdrift:17.3f}")
                rows.append({"variant": v, "size": 1 << lg, "streams": s, "streamlab_ms": sl[p], "ref_ms": rf[p],
                             "streamlab_runs": runs[p], "ref_runs": ref_runs[0][p]})
            print_counts(counts)
            with open(os.path.join(a.out, "soak.json"), "w") as f:
                json.dump({"gpu": gpu, "settle": settle_json(a.settle, settled), "points": rows, "process": counts}, f,
                          indent=1)
    finally:
        for ref in refs:
            ref.stdin.close()
            ref.wait()
    return 0


def print_counts(counts):
    """What the server process held after each round."""
    print(f"\n{'process':<16} {'threads':>7} {'fds':>5} {'RSS MiB':>8} {'cache':>6} {'RSS-cache':>9} "
          f"{'heap used/free':>14} {'VmLck':>7} {'VmPin':>7} {'GPU MiB':>8} "
          f"{'CUDA streams/events/graphs/execs/pinned/device allocs':>54}")
    for when, c in counts:
        cu = c.get("cuda", {})
        objs = "/".join(str(cu.get(k, "-")) for k in ("stream", "event", "graph", "graph_exec", "host_alloc",
                                                      "device_alloc"))
        cache = c.get("cache_mib")
        rest = round(c["VmRSS"] - cache, 1) if cache is not None and "VmRSS" in c else "-"
        heap = f"{c.get('heap_in_use_mib', '-')}/{c.get('heap_free_mib', '-')}"
        print(f"{when:<16} {c.get('threads', '-'):>7} {c.get('fds', '-'):>5} {c.get('VmRSS', '-'):>8} "
              f"{'-' if cache is None else cache:>6} {rest:>9} {heap:>14} {c.get('VmLck', '-'):>7} "
              f"{c.get('VmPin', '-'):>7} {str(c.get('gpu_mib', '-')):>8} {objs:>54}")


def score(mine, ref):
    """mine against ref, per point the medians of their run medians: (ratio, within 5%, slower)."""
    a, b = statistics.median(mine), statistics.median(ref)
    return a / b, abs(a / b - 1) <= 0.05, a > b


def settle_json(max_s, settled):
    """What the settle before the server did, for the JSON; None where it was off."""
    if max_s <= 0:
        return None
    return {"max_s": max_s, "seconds": settled[0], "steady": settled[1], "first_v1x128_ms": settled[2],
            "last_v1x128_ms": settled[3]}


def print_table(points, sl, rf, rf2, out, gpu, counts, two, settled, runs, ref_runs):
    """--table: per point the median of each program's run medians and their ratio, and the
    reference's own spread (its slowest run over its fastest): a miss where that spread is
    over 5% too is marked as within the machine's noise (it still counts). `2g`: how many of
    streamlab's runs had their reps in two groups (result.rep_modes), a point whose median
    is a coin the two programs draw apart. The points within 5% and those where streamlab is
    the slower. With rf2 (--self-check), the second reference against the first, counted the
    same way. table.json keeps each streamlab run's id, reps, rep_modes and host times (issue,
    between reps, check: `streamlab_runs`), so a run that stands out can be looked up in the
    server's store and its reps read, and each reference's answers (`ref_runs`, `ref2_runs`:
    median, least, issue and between-reps times)."""
    print(f"\n{'point':<22} {'streamlab runs (ms)':<36} {'reference runs (ms)':<36} {'sl/ref':>7} {'ref spread':>10}"
          f" {'2g':>2}" + (f" {'ref2/ref':>8}" if rf2 else ""))
    rows, within, slower, noisy, within2, slower2, coin = [], 0, 0, 0, 0, 0, 0
    for p in points:
        v, lg, s = p
        ratio, ok, slow = score(sl[p], rf[p])
        spread = max(rf[p]) / min(rf[p]) - 1
        within += ok
        slower += slow
        noisy += not ok and spread > 0.05
        coin += not ok and two[p] > 0
        self_col = ""
        if rf2:
            ratio2, ok2, slow2 = score(rf2[p], rf[p])
            within2 += ok2
            slower2 += slow2
            self_col = f" {ratio2:8.3f}"
        mark = "" if ok else "  * (the reference's own runs spread more)" if spread > 0.05 else "  *"
        print(f"2^{lg} {v} x{s:<8} {' / '.join(f'{x:.3f}' for x in sl[p]):<36} "
              f"{' / '.join(f'{x:.3f}' for x in rf[p]):<36} {ratio:7.3f} {100 * spread:9.1f}% {two[p]:2d}{self_col}{mark}")
        row = {"variant": v, "size": 1 << lg, "streams": s, "streamlab_ms": sl[p], "ref_ms": rf[p],
               "streamlab_runs_in_two_groups": two[p], "streamlab_runs": runs[p], "ref_runs": ref_runs[0][p]}
        if rf2:
            row["ref2_ms"] = rf2[p]
            row["ref2_runs"] = ref_runs[1][p]
        rows.append(row)
    print(f"\nwithin 5%: {within} of {len(points)} ({noisy} of the misses where the reference spread more than 5% "
          f"itself, {coin} where a streamlab run's reps fell in two groups); streamlab the slower at {slower} of "
          f"{len(points)}")
    if rf2:
        print(f"the reference against itself (a second process, same rounds): within 5% at {within2} of "
              f"{len(points)}; the second the slower at {slower2} of {len(points)}")
    # the few-stream residual, per size: the median over points of up to 32 streams of each
    # program's ratio to the reference (the host-bound points, 64-256 streams, left out)
    for lg in sorted({p[1] for p in points}):
        few = [p for p in points if p[1] == lg and p[2] <= 32]
        if not few:
            continue
        mine = statistics.median(score(sl[p], rf[p])[0] for p in few)
        again = f", the second reference {statistics.median(score(rf2[p], rf[p])[0] for p in few):.3f}" if rf2 else ""
        print(f"median ratio at 2^{lg} up to 32 streams: streamlab {mine:.3f}{again}")
    print_counts(counts)
    with open(os.path.join(out, "table.json"), "w") as f:
        json.dump({"gpu": gpu, "settle": settled, "points": rows, "process": counts}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
