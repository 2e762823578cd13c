"""probe_first_run.py — issue 19: does a server's first run at a point measure like its later ones?
Fresh `streamlab serve` processes, each running a sequence of experiments through REST, the
plain reference (bench/ref_overlap --serve, on the worker's CPU) running the same point just
before each: per run streamlab's median, the reference's, their ratio, the reps, and which of the
server's threads used how much CPU over the run (/proc/PID/task: utime + stime, and the CPU each
last ran on). Servers A (the table's 2^25 order three times: sequential, async_v1 x1-x32, async_v2
x16), B (async_v1 x16 first, then x8, then async_v2 x16), C (async_v2 x16 first) and W (one run
at async_v1 x16 thrown away, then B's), each fresh; with --trace-all a fifth, D, runs B's first
point with trace_ops all. Per run also the GPU's conditions before and after its measured reps
(SM clock, PCIe link, power, clock-event reasons: result.extra.conditions). A probe: it prints,
it asserts nothing; the runs go to OUT/firstrun.json (kept in bench/data/probes).

--sequence V:LOG2:STREAMS,... runs one fresh server through that sequence instead (say
async_v1:22:256,async_v2:22:1,async_v2:22:1: does a point run slower right after a 256-stream one?).

usage: probe_first_run.py STREAMLAB_BIN REF_BIN [--servers ABCW | --sequence SEQ] [--settle S] [--trace-all]
                          [--out DIR]"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import REF_NAME, ask_ref, has_gpu, pin_to, served, settle  # noqa: E402

TABLE_25 = [("sequential", 25, 1)] + [("async_v1", 25, s) for s in (1, 2, 4, 8, 16, 32)] + [("async_v2", 25, 16)]
SERVERS = [("A", TABLE_25 * 3, {}),
           ("B", [("async_v1", 25, 16)] * 4 + [("async_v1", 25, 8)] * 4 + [("async_v2", 25, 16)] * 3, {}),
           ("C", [("async_v2", 25, 16)] * 3 + [("async_v1", 25, 8)] * 3, {}),
           ("W", [("async_v1", 25, 16)] * 5 + [("async_v1", 25, 8)] * 4 + [("async_v2", 25, 16)] * 3, {})]


def threads(pid):
    """{tid: (name, CPU ms so far, the CPU it last ran on)} of process pid's threads."""
    tick, out = os.sysconf("SC_CLK_TCK"), {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                st = f.read()
            fields = st[st.rindex(")") + 2:].split()
            out[tid] = (st[st.index("(") + 1:st.rindex(")")], (int(fields[11]) + int(fields[12])) * 1000 / tick,
                        int(fields[36]))
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended between the listing and the read
    return out


def conditions(res):
    """The first GPU's conditions before and after the measured reps: (SM MHz, PCIe gen x width,
    W, reasons) each, from result.extra.conditions; None where not recorded."""
    try:
        g = res["extra"]["conditions"]["gpus"][0]
    except (KeyError, IndexError, TypeError):
        return None
    def one(x):
        return None if not x else [x.get("sm_clock_mhz"), f"{x.get('pcie_gen')}x{x.get('pcie_width')}",
                                   x.get("power_w"), x.get("clock_event_reasons")]
    return [one(g.get("before")), one(g.get("after"))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("ref")
    ap.add_argument("--servers", default="ABCW", help="which of the servers to run, in this order")
    ap.add_argument("--sequence", help="one server through these points: variant:log2:streams,...")
    ap.add_argument("--settle", type=int, default=30)
    ap.add_argument("--trace-all", action="store_true")
    ap.add_argument("--out", default="build/bench")
    a = ap.parse_args()
    servers = [sv for k in a.servers for sv in SERVERS if sv[0] == k]
    if a.sequence:
        try:
            seq = [(v, int(lg), int(st)) for v, lg, st in (x.split(":") for x in a.sequence.split(","))]
        except ValueError:
            raise SystemExit(f"probe-first-run: --sequence: expected variant:log2:streams,..., got {a.sequence}")
        if any(v not in REF_NAME for v, _, _ in seq):
            raise SystemExit(f"probe-first-run: --sequence: variants are {', '.join(REF_NAME)}")
        servers = [("S", seq, {})]
    servers += [("D", [("async_v1", 25, 16)] * 4, {"trace_ops": "all"})] if a.trace_all else []
    if not has_gpu():
        print("probe-first-run: skipped (no GPU)")
        return 0
    os.makedirs(a.out, exist_ok=True)
    cpu = (os.cpu_count() or 1) - 1
    ref = subprocess.Popen([a.ref, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                           preexec_fn=pin_to(cpu))
    rows = []
    try:
        print("settled:", settle(ref, a.settle), flush=True)
        for name, seq, extra in servers:
            with served(a.bin, name, a.out, cpu=cpu) as (srv, lab, _):
                for i, (v, lg, s) in enumerate(seq):
                    ref_ms = ask_ref(ref, (v, lg, s), 10)
                    before, t0 = threads(srv.pid), time.time()
                    e = lab.call("POST", "/api/experiments", dict({"variant": v, "size": 1 << lg, "streams": s,
                                                                   "reps": 10, "warmup": 3, "backend": "cuda",
                                                                   "label": f"{name} {i}"}, **extra))
                    e = lab.finished(e["id"], f"{name} {i}")
                    wall, after = time.time() - t0, threads(srv.pid)
                    busy = sorted(((t[0], round(t[1] - before.get(k, (0, 0))[1]), t[2]) for k, t in after.items()),
                                  key=lambda x: -x[1])
                    res = e["result"]
                    row = {"server": name, "i": i, "point": [v, lg, s], "id": e["id"], "sl": res["total_ms"]["median"],
                           "ref": ref_ms, "reps_ms": res.get("reps_ms"), "rep_modes": res.get("rep_modes"),
                           "wall_s": round(wall, 2), "threads_ms": [b for b in busy if b[1] > 0][:8],
                           "conditions": conditions(res)}
                    rows.append(row)
                    print(f"{name} {i:2d} 2^{lg} {v} x{s:<4} streamlab {row['sl']:.3f} reference {ref_ms:.3f} "
                          f"ratio {row['sl'] / ref_ms:.3f} {'two groups' if row['rep_modes'] else ''}\n"
                          f"      reps {' '.join('%.2f' % x for x in row['reps_ms'] or [])}\n"
                          f"      GPU before -> after {row['conditions']}\n"
                          f"      threads (name, CPU ms, last CPU) {row['threads_ms']}", flush=True)
    finally:
        ref.stdin.close()
        ref.wait()
    with open(os.path.join(a.out, "firstrun.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
