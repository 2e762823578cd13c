"""make bench-timeline's tool (bench/bench_timeline.py) on the simulator: a real server of the
binary under test. On the lent GPUs the tool is what reads issue 21's target, and a run there costs
device time, so its reading of the API (the result's stretch, the stored timeline's ops and calls) is
held here: the points asked for, in order, and what it derives from them consistent with each other."""

from conftest import BIN, check, run_bench_tool

POINTS = [("async_v1", 20, 4), ("sequential", 20, 1), ("async_v2", 22, 8)]


def timeline(tmp_path, *args):
    return run_bench_tool("bench_timeline.py", [BIN, "--backend", "sim", "--reps", "5", "--out", str(tmp_path)]
                          + list(args), tmp_path, "timeline.json")


def test_the_points_asked_for_and_what_it_derives_from_them(tmp_path):
    p, kept = timeline(tmp_path, "--points", "v1:20:4,seq:20:1,v2:22:8")
    check(p.returncode == 0, "exit 0", p.returncode, f"bench_timeline\n{p.stdout[-1500:]}\n{p.stderr[-1500:]}")
    check(kept is not None, "timeline.json written", None, str(tmp_path))
    got = [(r["variant"], r["size"].bit_length() - 1, r["streams"]) for r in kept["points"]]
    check(got == POINTS, "the three points asked for, in order", got, "timeline.json")
    rows = [line for line in p.stdout.splitlines() if line.startswith("2^")]
    check(len(rows) == 3 and rows[0].startswith("2^20 async_v1") and rows[2].startswith("2^22 async_v2"),
          "a printed row a point, in order", rows, "stdout")
    check(str(kept["gpu"].get("uuid")).startswith("SIM-"), "the sim's device", kept["gpu"].get("uuid"), "timeline.json")
    for r in kept["points"]:
        what = f"{r['variant']} 2^{r['size'].bit_length() - 1} x{r['streams']}"
        st, from0, lead = r["stretch_sampled"], r["stretch_from_origin"], r["lead_in_us"]
        check(isinstance(st, float) and 0.5 < st < 1.5, "a stretch read from the result", st, what)
        check(isinstance(lead, float) and lead > 0 and from0 > st,
              "a lead-in before the first op, so the extent from the rep's start is the longer", (lead, st, from0), what)
        check(abs((from0 - st) * r["median_ms"] * 1000.0 - lead) < 1e-6 * max(1.0, lead),
              "the extent from 0 less the span is the lead-in", (from0, st, r["median_ms"], lead), what)
        check(r["calls"] > 0 and r["first_call_us"] > 0, "the host-calls lane read", (r["calls"], r["first_call_us"]),
              what)
    print_within = [line for line in p.stdout.splitlines() if line.startswith("sampled: ")]
    within = sum(1 for r in kept["points"] if abs(r["stretch_sampled"] - 1) <= 0.05)
    check(len(print_within) == 1 and f"at {within} of 3 points" in print_within[0],
          "the count printed is the rows' count", (print_within, within), "stdout")


def test_a_bad_point_is_refused_before_any_server(tmp_path):
    for bad, named in (("v1:22:8,v3:22:8", "'v3:22:8'"), ("", "''")):
        p, kept = timeline(tmp_path, "--points", bad)
        check(p.returncode != 0 and f"bench-timeline: bad point {named}" in (p.stdout + p.stderr),
              "refused, naming the point", (p.returncode, p.stdout[-300:], p.stderr[-300:]), f"--points {bad!r}")
        check(kept is None and not list(tmp_path.glob("*-server.log")), "no server started, nothing written",
              [x.name for x in tmp_path.iterdir()], f"--points {bad!r}")


def test_points_and_sizes_are_one_or_the_other(tmp_path):
    p, kept = timeline(tmp_path, "--points", "v1:20:4", "--sizes", "25")
    check(p.returncode == 2 and "not allowed with argument" in p.stderr, "argparse refuses both",
          (p.returncode, p.stderr[-300:]), "bench_timeline")
    check(kept is None, "nothing written", kept, str(tmp_path))
