"""profile_remeasure.py — the shipped profiles' pageable copy rates, host CPU rate and the price
of the array the host has just written, from the corrected calibration's measures of lent hosts of
their kind (bench/data/calibrations-*.json).

The shipped profiles were measured before 2026-11-27, when the calibration timed pageable copies by
events on their stream (which see only the DMA behind the driver's staging: 16.8 GB/s H2D on a lent
H100 where pipelines got 6.7) and did not measure the host's CPU rate (host_overlap's share, priced
at seed 000's 6.5 ns a blog element where lent hosts run it at about 1), and before it priced the
array the host has just written on its last MiB (2026-11-27 02:30: the last MiB pays 20-25 us on
lent hosts, where the older measure spread 38 us over 16 MiB). Their own GPUs cannot be
measured again, so each takes, for those fields only, the median over the corrected calibrations of
other lent hosts of its kind; the profile's metadata says so under "remeasured", with the values it
replaced. Idempotent.

Two more from the calibrations the kept tables carry (bench/data/KIND-GPU-*.json and
bench/data/wide/KIND-GPU-*.json, each streamlab's own calibration of a lent GPU):
- each copy direction's own set-up (copy_setup_h2d_us, copy_setup_d2h_us), which the calibration
  measures since 2026-11-26 late evening, after the shipped profiles: a D2H's is 0.3-0.8 us under an
  H2D's (median 0.6) on every lent GPU that measured both, one calibration that drew a spell aside,
  and the sim's D2Hs priced at the pooled set-up drained a breadth-first rep's last phase about
  0.5 us a copy slow;
- the host's cost to issue a copy and a launch (copy_submit_us, kernel_launch_us): a profile is one
  loan's host, and the loans' hosts differ by up to 1.8 times a chunk; the shipped profile stands in
  for the lent machines of its kind, so it takes their median host. The fits to the profile's own
  table (issue_reorder_us, the large array's extra) stay.
These medians move as tables are added. The shipped profiles took them from the 34 H100 and 21 H200
tables kept before 2026-11-27 10:54 UTC; the five fresh tables kept since (10:54-11:29) scored them,
so they were not run again after (with them the H200's copy_submit_us would be 1.78, not 1.85).

usage: python3 bench/profile_remeasure.py DATA KIND...   (e.g. bench/data/calibrations-2026-11-27.json h100 h200)"""
import glob
import json
import statistics
import sys

FIELDS = ("pageable_h2d_gbps", "pageable_d2h_gbps")
DIRTY = ("dirty_h2d_us_per_mib", "dirty_cache_mib")  # only rows measured since 02:30 have them
KERNELS = ("blog", "fill", "compute")
SETUPS = ("copy_setup_h2d_us", "copy_setup_d2h_us")  # rows that measured both
HOST = ("copy_submit_us", "kernel_launch_us")


def table_calibrations(kind):
    """(GPU UUID, calibration) of each kept table of this kind that measured the host's costs."""
    out = []
    for path in sorted(glob.glob(f"bench/data/{kind}-GPU-*.json") + glob.glob(f"bench/data/wide/{kind}-GPU-*.json")):
        gpu = json.load(open(path))["machine"]["gpus"][0]
        cal = gpu.get("calibration") or {}
        if all(cal.get(f, 0) > 0 for f in HOST):
            out.append((gpu["uuid"], cal))
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__.splitlines()[-1].strip(), file=sys.stderr)
        return 2
    data = json.load(open(sys.argv[1]))
    for kind in sys.argv[2:]:
        rows = [r for r in data["calibrations"] if r["kind"] == kind]
        hosts = [r for r in rows if r.get("host_used")]
        if not rows or not hosts:
            print(f"profile_remeasure: {kind}: no calibrations of its kind in {sys.argv[1]}", file=sys.stderr)
            return 1
        path = f"profiles/{kind}.json"
        p = json.load(open(path))
        cal = p["machine"]["gpus"][0]["calibration"]
        meta = p["profile"]
        dirty = [r for r in rows if all(f in r for f in DIRTY)]
        replaced = meta.get("remeasured", {}).get("replaced") or {
            **{f: cal.get(f, 0) for f in FIELDS}, "host_ns_per_elem": cal.get("host_ns_per_elem")}
        tables = table_calibrations(kind)
        both = [c for _, c in tables if all(c.get(f, 0) > 0 for f in SETUPS)]
        new = {f: statistics.median(r[f] for r in rows) for f in FIELDS}
        new["host_ns_per_elem"] = {k: statistics.median(r["host_ns_per_elem"][k] for r in hosts) for k in KERNELS}
        if dirty:
            new.update({f: statistics.median(r[f] for r in dirty) for f in DIRTY})
        if both:
            new.update({f: statistics.median(c[f] for c in both) for f in SETUPS})
        if tables:
            new.update({f: statistics.median(c[f] for _, c in tables) for f in HOST})
        for f in DIRTY + SETUPS + HOST:  # the values first replaced are kept, whatever runs since
            if f in new and f not in replaced:
                replaced[f] = cal.get(f, 0)
        for gpu in p["machine"]["gpus"]:
            gpu["calibration"].update(new)
        meta["remeasured"] = dict(new, **{
            "from": f"{sys.argv[1]}: the median of {len(rows)} corrected calibrations of lent {kind.upper()} hosts "
                    f"({len({r['gpu_uuid'] for r in rows})} GPUs, "
                    f"{min(r['measured_at'] for r in rows)[:10]}); the host's rate of the {len(hosts)} marked used"
                    + (f"; the just-written array's price of the {len(dirty)} that measure it on its last MiB"
                       if dirty else "")
                   + (f"; each copy direction's set-up: the median of the {len(both)} calibrations that measured "
                      f"both, of the kept tables' {len(tables)} (bench/data, {len({u for u, _ in tables})} GPUs); "
                      f"the host's cost to issue a copy and a launch: the median of those {len(tables)}"
                      if tables else ""),
            "why": "measured before the calibration timed pageable copies by the host's clock and the host's CPU "
                   "rate (2026-11-27)" + (", and priced the array the host has just written on its last MiB "
                                          "(2026-11-27 02:30)" if dirty else "")
                   + ("; each copy direction's own set-up was measured only after the profile (the sim priced "
                      "its D2Hs at the pooled set-up, 0.4 us a copy dear); and a profile is one loan's "
                      "host, where the shipped one stands in for every lent host of its kind" if tables else "")
                   + "; the profile's own GPU cannot be measured again",
            "replaced": replaced})
        with open(path, "w") as f:
            json.dump(p, f, indent=1)
        print(f"{path}: pageable {new['pageable_h2d_gbps']:.2f} / {new['pageable_d2h_gbps']:.2f} GB/s (was "
              f"{replaced['pageable_h2d_gbps']:.2f} / {replaced['pageable_d2h_gbps']:.2f}), host ns an element "
              + ", ".join(f"{k} {v:.3f}" for k, v in new["host_ns_per_elem"].items())
              + (f", just-written array {new['dirty_h2d_us_per_mib']:.2f} us a MiB over its last "
                 f"{new['dirty_cache_mib']:.2f} MiB (was {replaced['dirty_h2d_us_per_mib']:.2f} over "
                 f"{replaced['dirty_cache_mib']:.2f})" if dirty else "")
              + "".join(f", {f} {new[f]:.3f} (was {replaced[f]:.3f})" for f in SETUPS + HOST if f in new))
    return 0


if __name__ == "__main__":
    sys.exit(main())
