#!/usr/bin/env python3
"""fleet.py — every lent GPU's table, kept in the shipped profile: what the machines a profile
stands for measured at each point, so that a simulated point is read beside them.

A shipped profile (profiles/KIND.json) is one loan. The lent GPUs of its kind do not repeat
one another, nor themselves, within issue 18's 10% at the host-bound and two-mode points
(docs/METHOD.md, "The floor"). So each profile carries `fleet`: per point of the seeds' table,
the plain program's median on every lent GPU of that kind whose table is kept in bench/data
(bench/data/KIND-GPU-….json, each written by `bench_sim --measure`), sorted, with its
quartiles. The sim's result says where its own total falls among them (result.extra.fleet,
gpu/sim.c); the Run view draws it. Where a point's tables fall in two groups (groups_of; on the
lent H100s: 2^22 points at the host's pace, 2^25 points that run in one of two modes), the point
carries `groups`, the two groups low then high, so that a reader knows one loan's number is one
of them and not a spread about one value.

usage: bench/fleet.py [--check] [KIND...]   (default: every profiles/KIND.json with tables)
  --check: write nothing; exit 1 where a profile's fleet is not what bench/data holds now
"""
import argparse
import glob
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def quartiles(v):
    """(p25, median, p75) of a sorted list, the inclusive method (the values themselves at
    one or two tables)."""
    if len(v) == 1:
        return v[0], v[0], v[0]
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], q[1], q[2]


# groups_of: the two groups are parted by a gap between neighbouring tables of at least
# GROUP_GAP (the next over the last, less 1), their medians are at least GROUP_APART apart, and
# each holds at least GROUP_SHARE of the tables, and at least GROUP_MIN.
GROUP_GAP, GROUP_APART, GROUP_SHARE, GROUP_MIN = 0.025, 0.08, 0.15, 3


def groups_of(v):
    """A point's sorted tables in two groups, [low, high], each {tables, min_ms, median_ms,
    max_ms}; None where they are not. The split is the widest gap between neighbouring tables
    that leaves enough on each side (GROUP_*)."""
    need = max(GROUP_MIN, GROUP_SHARE * len(v))
    best = None
    for i in range(len(v) - 1):
        if i + 1 < need or len(v) - i - 1 < need:
            continue
        gap = v[i + 1] / v[i] - 1
        if best is None or gap > best[0]:
            best = (gap, i)
    if best is None or best[0] < GROUP_GAP:
        return None
    low, high = v[:best[1] + 1], v[best[1] + 1:]
    if statistics.median(high) / statistics.median(low) - 1 < GROUP_APART:
        return None
    return [{"tables": len(g), "min_ms": g[0], "median_ms": round(statistics.median(g), 6), "max_ms": g[-1]}
            for g in (low, high)]


def fleet_of(kind):
    """The fleet of KIND from bench/data, or None where it keeps no table of that kind."""
    paths = sorted(glob.glob(os.path.join(ROOT, "bench", "data", f"{kind}-GPU-*.json")))
    if not paths:
        return None
    by_point, gpus, dates = {}, set(), []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        gpus.add(doc["profile"]["gpu_uuid"])
        dates.append(doc["profile"]["measured_at"][:10])
        seen = set()
        for p in doc["reference"]["points"]:
            key = (p["variant"], p["size"], p["streams"])
            ms = p.get("median_ms")
            if not isinstance(ms, (int, float)) or not ms > 0 or key in seen:
                raise SystemExit(f"fleet.py: {os.path.relpath(path, ROOT)}: point {key} has no median_ms > 0 or "
                                 f"comes twice")
            seen.add(key)
            by_point.setdefault(key, []).append(round(ms, 6))
    points = []
    for (variant, size, streams), v in sorted(by_point.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        v.sort()
        p25, med, p75 = quartiles(v)
        point = {"variant": variant, "size": size, "streams": streams, "tables": len(v),
                 "min_ms": v[0], "p25_ms": round(p25, 6), "median_ms": round(med, 6), "p75_ms": round(p75, 6),
                 "max_ms": v[-1], "ms": v}
        groups = groups_of(v)
        if groups:
            point["groups"] = groups
        points.append(point)
    return {"what": f"the plain program's seed table (bench/ref_overlap) on every lent {kind.upper()} GPU kept in "
                    f"bench/data, each table's median per point; written by bench/fleet.py",
            "tables": len(paths), "gpus": len(gpus), "from": min(dates), "to": max(dates), "points": points}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("kinds", nargs="*")
    a = ap.parse_args()
    kinds = a.kinds or sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(ROOT, "profiles", "*.json")))
    stale = 0
    for kind in kinds:
        path = os.path.join(ROOT, "profiles", f"{kind}.json")
        if not os.path.exists(path):
            print(f"fleet.py: no profiles/{kind}.json", file=sys.stderr)
            return 2
        with open(path) as f:
            doc = json.load(f)
        fleet = fleet_of(kind)
        if a.check:
            if doc.get("fleet") != fleet:
                print(f"fleet.py: profiles/{kind}.json's fleet is not bench/data's "
                      f"{fleet['tables'] if fleet else 'no'} {kind} tables: run bench/fleet.py", file=sys.stderr)
                stale += 1
            continue
        if fleet is None:  # no table of that kind kept: no fleet
            if doc.pop("fleet", None) is not None:
                with open(path, "w") as f:
                    f.write(json.dumps(doc, indent=1, ensure_ascii=False))
            continue
        doc["fleet"] = fleet
        with open(path, "w") as f:
            f.write(json.dumps(doc, indent=1, ensure_ascii=False))
        print(f"profiles/{kind}.json: fleet of {fleet['tables']} tables, {fleet['gpus']} GPUs, "
              f"{fleet['from']} to {fleet['to']}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
