#!/usr/bin/env python3
"""ab_rounds.py — A/B of builds and settings in one sitting, round by round (a GPU host).

Several arms run the same points in turn, each round once per arm and point, who goes first
turning from round to round: reference processes (bench/ref_overlap --serve, each with its own
environment) and streamlab servers (each its own binary and environment, the GPU worker on the
same CPU as the references). Lent machines move a few per cent between minutes, more than the
1-2% such a change is worth, so an arm is read against the first arm of the same round: per
point the median of the rounds' ratios and in how many rounds it was the slower, and the
arms' medians.

usage: ab_rounds.py --arm NAME=ref:BIN[:VAR=VAL,...] --arm NAME=sl:BIN[:VAR=VAL,...] ...
                    [--about NAME=TEXT ...] [--points v1:22:8,v2:22:2,seq:25:1] [--rounds 12]
                    [--reps 20] [--cpu N] [--out DIR] [--backend cuda|sim] [--poll NAME=SECONDS ...]
--poll: how often the client asks server arm NAME whether its run is done (default 0.05 s).
Beside each point's times the table gives each arm's median host time between reps (the GPU
idle while the host checks a rep's output and refills the input: the reference's GAP_US,
streamlab's extra.timing.between_reps.median_us) and host time issuing a rep (the reference's
ISSUE_US, streamlab's extra.timing.issue_us_clean), and streamlab's check of a rep's output alone
(extra.timing.between_reps.check_median_us), medians of the runs; the file each run's.
--backend sim runs the servers' arms on the simulator (no GPU needed): a check of the tool.
The first arm is the baseline. Who goes first turns with the round, and every other cycle of
rounds runs the arms in the reverse order, so that no arm always follows the same one; rounds
a multiple of twice the arms give each arm each place alike. DIR/ab_rounds.json (every run,
and --about's words on each arm) is written after every round, so a run cut short keeps its
rounds, and the table of the rounds run is printed however the run ends."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import contextlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import _nvidia_smi_list, ask_ref_answer, has_gpu, host_times, parse_points, pin_to, served  # noqa: E402


def parse_arm(text):
    """NAME=KIND:BIN[:VAR=VAL,...] -> (name, kind, bin, env)"""
    name, sep, rest = text.partition("=")
    parts = rest.split(":", 2)
    if not sep or not name or len(parts) < 2 or parts[0] not in ("ref", "sl") or not parts[1]:
        raise SystemExit(f"ab_rounds: bad --arm {text!r} (NAME=ref:BIN[:VAR=VAL,...] or NAME=sl:BIN[:...])")
    env = {}
    for kv in (parts[2].split(",") if len(parts) == 3 and parts[2] else []):
        k, eq, v = kv.partition("=")
        if not eq or not k:
            raise SystemExit(f"ab_rounds: bad environment {kv!r} in --arm {text!r}")
        env[k] = v
    return name, parts[0], parts[1], env


def order_of(names, r):
    """Round r's order: rotated by r, reversed on every other cycle of len(names) rounds."""
    k = r % len(names)
    order = names[k:] + names[:k]
    return order[::-1] if (r // len(names)) % 2 else order


# what each run gives beside its median ms (None where it does not say), and the table's columns of them
RUN_FIELDS = ("least_ms", "between_us", "check_us", "issue_us", "id")
TABLE_TIMES = (("least_ms", "least ms", "{:.4f}"), ("between_us", "between reps µs", "{:.0f}"),
               ("check_us", "check µs", "{:.0f}"), ("issue_us", "issue µs", "{:.0f}"))


def rows_of(names, points, runs):
    """Per point with a run of every arm (runs[n][p]: dicts with "ms" and RUN_FIELDS): the arms'
    runs (as many of each as all have), the median of each arm's ratio to the first arm's run
    of the same round, and the table's cells: medians of each arm's ms, the ratios, and each
    arm's medians of TABLE_TIMES over the runs that gave them ("-" where none did)."""
    rows = []
    for p in points:
        got = min(len(runs[n][p]) for n in names)
        if not got:
            continue
        ms = {n: [x["ms"] for x in runs[n][p][:got]] for n in names}
        cells = [f"2^{p[1]} {p[0]} x{p[2]}"] + [f"{statistics.median(ms[n]):.4f}" for n in names]
        row = {"point": list(p), "ms": ms, "ratio_median": {}}
        for field in RUN_FIELDS:
            row[field + "s" if field == "id" else field] = {n: [x[field] for x in runs[n][p][:got]] for n in names}
        for n in names[1:]:
            ratios = [x / y for x, y in zip(ms[n], ms[names[0]])]
            cells.append(f"{statistics.median(ratios):.3f} ({sum(x > 1 for x in ratios)} of {len(ratios)})")
            row["ratio_median"][n] = statistics.median(ratios)
        for field, _, fmt in TABLE_TIMES:
            for n in names:
                known = [x[field] for x in runs[n][p][:got] if x[field] is not None and x[field] >= 0]
                cells.append(fmt.format(statistics.median(known)) if known else "-")
        rows.append((row, cells))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arm", action="append", required=True)
    ap.add_argument("--about", action="append", default=[], help="NAME=TEXT: what arm NAME is, kept in the JSON")
    ap.add_argument("--points", default="seq:22:1,v1:22:1,v1:22:8,v1:22:32,v2:22:2,v2:22:4")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)),
                    help="the CPU every arm issues from (default the last this process may use; -1: unpinned)")
    ap.add_argument("--out", default="build/bench/ab")
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"),
                    help="the servers' experiments' backend (sim: no GPU needed, a check of the tool)")
    ap.add_argument("--poll", action="append", default=[],
                    help="NAME=SECONDS: how often the client asks server arm NAME if its run is done (0.05)")
    a = ap.parse_args()
    arms = [parse_arm(t) for t in a.arm]
    if len({n for n, *_ in arms}) != len(arms) or len(arms) < 2:
        raise SystemExit("ab_rounds: two or more arms, each its own name")
    poll = {}
    for t in a.poll:
        n, eq, sec = t.partition("=")
        try:
            poll[n] = float(sec)
        except ValueError:
            poll[n] = -1.0
        if not eq or n not in {m for m, k, *_ in arms if k == "sl"} or not 0 < poll[n] <= 60:
            raise SystemExit(f"ab_rounds: bad --poll {t!r} (NAME=SECONDS, NAME a server arm's, 0 < SECONDS <= 60)")
    about = {}
    for t in a.about:
        n, eq, text = t.partition("=")
        if not eq or n not in {m for m, *_ in arms}:
            raise SystemExit(f"ab_rounds: bad --about {t!r} (NAME=TEXT, NAME an arm's)")
        about[n] = text
    points = parse_points(a.points, "ab_rounds")
    if a.rounds < 1 or a.reps < 1:
        raise SystemExit("ab_rounds: --rounds and --reps must be at least 1")
    if not has_gpu() and (a.backend == "cuda" or any(k == "ref" for _, k, _, _ in arms)):
        print("ab_rounds: skipped (no GPU)")
        return 0
    os.makedirs(a.out, exist_ok=True)
    cpu = a.cpu if a.cpu >= 0 else None
    with contextlib.ExitStack() as stack:
        runners = {}
        for name, kind, binary, env in arms:
            if kind == "ref":
                proc = subprocess.Popen([binary, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        bufsize=1, preexec_fn=pin_to(cpu), env=dict(os.environ, **env))
                stack.callback(proc.kill)

                runners[name] = lambda p, proc=proc: dict(ask_ref_answer(proc, p, a.reps), check_us=None, id=None)
            else:
                _, lab, health = stack.enter_context(served(binary, f"ab-{name}", a.out, cpu=cpu, env=env))
                if a.backend == "cuda" and health.get("backend") != "cuda":
                    print(f"ab_rounds: skipped ({name} found no GPU)")
                    return 0

                def run_sl(p, lab=lab, name=name):
                    v, lg, s = p
                    e = lab.call("POST", "/api/experiments", {"variant": v, "size": 1 << lg, "streams": s,
                                                              "reps": a.reps, "warmup": 3, "backend": a.backend})
                    e = lab.finished(e["id"], f"{name} {p}", poll_s=poll.get(name, 0.05))
                    return dict(host_times(e["result"]), ms=e["result"]["total_ms"]["median"],
                                least_ms=e["result"]["total_ms"]["min"], id=e["id"])
                runners[name] = run_sl
        names = [n for n, *_ in arms]
        gpus = _nvidia_smi_list()[1].splitlines()
        print(f"ab_rounds: {'; '.join(gpus) or 'no GPU'}")
        print(f"ab_rounds: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {a.rounds} rounds x {len(points)} "
              f"points, {a.reps} reps a run, arms {', '.join(names)} (baseline {names[0]}), CPU {cpu}", flush=True)
        runs = {n: {p: [] for p in points} for n in names}
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

        def keep(rounds_run):
            """The rounds run so far into DIR/ab_rounds.json; the table's rows."""
            rows = rows_of(names, points, runs)
            with open(os.path.join(a.out, "ab_rounds.json"), "w") as f:
                json.dump({"date": started, "gpus": gpus, "rounds": rounds_run, "rounds_asked": a.rounds,
                           "reps": a.reps, "cpu": cpu,
                           "arms": [{"name": n, "kind": k, "bin": b, "env": e, "poll_s": poll.get(n)}
                                    for n, k, b, e in arms],
                           "arms_are": about, "points": [row for row, _ in rows]}, f, indent=1)
            return rows

        done = 0
        try:
            for r in range(a.rounds):
                for p in points:
                    for n in order_of(names, r):
                        runs[n][p].append(runners[n](p))
                done = r + 1
                print(f"  round {done} done", flush=True)
                if done < a.rounds:
                    keep(done)
        finally:
            print(f"ab_rounds: {done} of {a.rounds} rounds run")
            head = (["point"] + [f"{n} ms" for n in names] + [f"{n}/{names[0]} (slower in)" for n in names[1:]]
                    + [f"{n} {title}" for _, title, _ in TABLE_TIMES for n in names])
            print("| " + " | ".join(head) + " |\n|" + " --- |" * len(head))
            for _, cells in keep(done):
                print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
