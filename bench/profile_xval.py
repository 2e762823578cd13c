#!/usr/bin/env python3
"""profile_xval.py — `make bench-profiles`: which measured profile best stands in for the
lent GPUs of its kind. Every profile of a kind (the shipped profiles/KIND.json and each
bench/data/KIND-GPU-….json, all of them streamlab's calibration of a lent GPU with the
plain program's seed table beside it) is simulated against the table of every other GPU of
that kind (tables of its own GPU left out: a loan is one host), as `bench_sim --against`
does. Profiles measured before the large-array fit are refitted first (`bench_sim
--refit`, on copies), so that all compete under today's model.

Per profile: the tables it was scored on, the points over 10% of all of them, the median
of the tables' median errors and of their largest, and the tables within issue 18's target
(median <= 3%, largest <= 10%). The shipped profile is kept unless another is better on
all four at once (fewer points over 10%, a lower median and largest, as many tables met or
more); such a profile is marked "better on all four".

Then, per kind, how close any prediction can come to these machines (the floor): the
shipped profile (not on its own GPU's tables) and each table's own profile (its host's
bench-sim, refitted as above), beside two predictions that are not a model at all, each
held to the same target:
  - the fleet's median: at each point, the median of the other lent GPUs' tables (that
    GPU's own tables left out), the best one fixed number per point does for a host it
    has not seen;
  - the machine again: the same GPU's second table, measured minutes later (two tables of
    one UUID, each the prediction of the other, and a profile's `reference_again`, which
    `bench_sim --measure --again` writes).
A target the machine again misses is below the lent machines' own repeatability.

usage: bench/profile_xval.py [--bench-sim PATH] KIND...   (KIND: h100, h200, h200x2)
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def gpu_of(path):
    with open(path) as f:
        return json.load(f)["profile"]["gpu_uuid"]


def score(bench_sim, profile, tables, scratch):
    """The profile against each table of another GPU (tables: {path: its GPU's UUID}):
    (tables, over 10%, points, medians, largest, met)."""
    mine = gpu_of(profile)
    out = os.path.join(scratch, "points.jsonl")
    medians, largest, over, points, met = [], [], 0, 0, 0
    for t, gpu in tables.items():
        if gpu == mine:
            continue
        subprocess.run([bench_sim, "--json", out, "--against", t, profile], check=True, capture_output=True)
        with open(out) as f:
            errs = [abs(r["error"]) * 100 for r in map(json.loads, f) if "error" in r]
        if not errs:
            continue
        medians.append(statistics.median(errs))
        largest.append(max(errs))
        over += sum(e > 10 for e in errs)
        points += len(errs)
        met += medians[-1] <= 3 and largest[-1] <= 10
    return len(medians), over, points, medians, largest, met


def table_of(reference):
    """{(size, variant, streams): median_ms} of a reference table."""
    return {(p["size"], p["variant"], p["streams"]): p["median_ms"] for p in reference["points"]}


def errors(pred, meas):
    """|pred - meas| / meas in %, at the points both hold."""
    return [abs(pred[k] / meas[k] - 1) * 100 for k in meas if k in pred and meas[k] > 0]


def head(first):
    """The column heads of a table of predictions, its first column named FIRST."""
    return f"  {first:48s} {'tables':>6s} {'over 10%':>14s} {'median':>7s} {'largest':>8s} {'met':>4s}"


def line(label, n, over, points, med, lg, met):
    """One row under head(): tables, points over 10%, median of medians, median of largest, met."""
    return f"  {label:48s} {n:6d} {over:5d} ({100 * over / points:4.1f}%) {med:6.2f}% {lg:7.1f}% {met:4d}"


def row(label, errs_by_table):
    """One floor row: tables, over 10% (of points), median of medians, median of largest, met."""
    errs_by_table = [e for e in errs_by_table if e]
    if not errs_by_table:
        return f"  {label:48s}      - (none)"
    med = [statistics.median(e) for e in errs_by_table]
    lg = [max(e) for e in errs_by_table]
    over = sum(x > 10 for e in errs_by_table for x in e)
    points = sum(len(e) for e in errs_by_table)
    met = sum(m <= 3 and g <= 10 for m, g in zip(med, lg))
    return line(label, len(med), over, points, statistics.median(med), statistics.median(lg), met)


def floor(bench_sim, kind, paths, scratch):
    """The floor rows of one kind (see the module's doc)."""
    docs = {t: json.load(open(t)) for t in paths}
    tables = {t: table_of(d["reference"]) for t, d in docs.items()}
    gpu = {t: d["profile"]["gpu_uuid"] for t, d in docs.items()}
    out = os.path.join(scratch, "floor.jsonl")

    def sim(against, profile):
        args = ["--against", against] if against else []
        subprocess.run([bench_sim, "--json", out, *args, profile], check=True, capture_output=True)
        with open(out) as f:
            rows = [json.loads(x) for x in f]
        # a profile with a second table is also scored against that one: those rows are left out
        return [abs(r["error"]) * 100 for r in rows if r.get("table") != "reference_again"]

    shipped_profile = f"profiles/{kind}.json"
    # as score() does: the shipped profile is not scored on its own GPU's tables
    shipped_gpu = gpu_of(shipped_profile)
    shipped = [sim(t, shipped_profile) for t in paths if gpu[t] != shipped_gpu]
    own = []
    for t in paths:  # refitted copies, as main() scores them
        copy = os.path.join(scratch, "own-" + os.path.basename(t))
        shutil.copyfile(t, copy)
        subprocess.run([bench_sim, "--refit", copy], check=True, capture_output=True)
        own.append(sim(None, copy))
    fleet = []
    for t in paths:
        others = [tables[o] for o in paths if gpu[o] != gpu[t]]
        pred = {}
        for k in tables[t]:
            vals = [o[k] for o in others if k in o]
            if vals:
                pred[k] = statistics.median(vals)
        fleet.append(errors(pred, tables[t]))
    again = []
    for t in paths:
        for o in paths:
            if o != t and gpu[o] == gpu[t]:
                again.append(errors(tables[o], tables[t]))
        if "reference_again" in docs[t]:
            second = table_of(docs[t]["reference_again"])
            again += [errors(second, tables[t]), errors(tables[t], second)]
    print(f"{kind}: the floor, each prediction held to issue 18's target over the {len(paths)} tables")
    print(head("prediction"))
    print(row(f"the shipped {shipped_profile} (not its own GPU)", shipped))
    print(row("each table's own profile (refitted)", own))
    print(row("the fleet's median, that GPU's tables left out", fleet))
    print(row("the machine again, minutes later (both ways)", again))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench-sim", default="build/bench/bench_sim")
    ap.add_argument("kinds", nargs="+")
    a = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="profile-xval-")
    try:
        for kind in a.kinds:
            shipped = f"profiles/{kind}.json"
            tables = {t: gpu_of(t) for t in sorted(glob.glob(f"bench/data/{kind}-GPU-*.json"))}
            if not os.path.exists(shipped) or not tables:
                print(f"{kind}: no shipped profile or no tables of other loans")
                continue
            rows = []
            for p in [shipped, *tables]:
                copy = os.path.join(scratch, os.path.basename(p))
                shutil.copyfile(p, copy)
                subprocess.run([a.bench_sim, "--refit", copy], check=True, capture_output=True)
                n, over, points, med, lg, met = score(a.bench_sim, copy, tables, scratch)
                if n:
                    rows.append((p, n, over, points, statistics.median(med), statistics.median(lg), met))
            base = rows[0]
            print(f"{kind}: each profile against the tables of the other lent {kind.upper()} GPUs "
                  f"(bench/data), |sim - measured| / measured")
            print(head("profile"))
            for p, n, over, points, med, lg, met in sorted(rows, key=lambda r: (r[2] / r[3], r[4])):
                better = (p != base[0] and over / points < base[2] / base[3] and med < base[4] and lg < base[5]
                          and met >= base[6])
                print(line(p, n, over, points, med, lg, met) + ("  better on all four than the shipped" if better else ""))
            floor(a.bench_sim, kind, list(tables), scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
