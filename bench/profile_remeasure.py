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

usage: python3 bench/profile_remeasure.py DATA KIND...   (e.g. bench/data/calibrations-2026-11-27.json h100 h200)"""
import json
import statistics
import sys

FIELDS = ("pageable_h2d_gbps", "pageable_d2h_gbps")
DIRTY = ("dirty_h2d_us_per_mib", "dirty_cache_mib")  # only rows measured since 02:30 have them
KERNELS = ("blog", "fill", "compute")


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
        for f in DIRTY:  # the values first replaced are kept, whatever runs since
            if dirty and f not in replaced:
                replaced[f] = cal.get(f, 0)
        new = {f: statistics.median(r[f] for r in rows) for f in FIELDS}
        new["host_ns_per_elem"] = {k: statistics.median(r["host_ns_per_elem"][k] for r in hosts) for k in KERNELS}
        if dirty:
            new.update({f: statistics.median(r[f] for r in dirty) for f in DIRTY})
        for gpu in p["machine"]["gpus"]:
            gpu["calibration"].update(new)
        meta["remeasured"] = dict(new, **{
            "from": f"{sys.argv[1]}: the median of {len(rows)} corrected calibrations of lent {kind.upper()} hosts "
                    f"({len({r['gpu_uuid'] for r in rows})} GPUs, "
                    f"{min(r['measured_at'] for r in rows)[:10]}); the host's rate of the {len(hosts)} marked used"
                    + (f"; the just-written array's price of the {len(dirty)} that measure it on its last MiB"
                       if dirty else ""),
            "why": "measured before the calibration timed pageable copies by the host's clock and the host's CPU "
                   "rate (2026-11-27)" + (", and priced the array the host has just written on its last MiB "
                                          "(2026-11-27 02:30)" if dirty else "")
                   + "; the profile's own GPU cannot be measured again",
            "replaced": replaced})
        with open(path, "w") as f:
            json.dump(p, f, indent=1)
        print(f"{path}: pageable {new['pageable_h2d_gbps']:.2f} / {new['pageable_d2h_gbps']:.2f} GB/s (was "
              f"{replaced['pageable_h2d_gbps']:.2f} / {replaced['pageable_d2h_gbps']:.2f}), host ns an element "
              + ", ".join(f"{k} {v:.3f}" for k, v in new["host_ns_per_elem"].items())
              + (f", just-written array {new['dirty_h2d_us_per_mib']:.2f} us a MiB over its last "
                 f"{new['dirty_cache_mib']:.2f} MiB (was {replaced['dirty_h2d_us_per_mib']:.2f} over "
                 f"{replaced['dirty_cache_mib']:.2f})" if dirty else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
