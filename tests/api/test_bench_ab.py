"""make bench-ab's tool (bench/ab_rounds.py) on the simulator: real servers of the binary under
test, run round by round. The sim is deterministic, so two servers of one binary must agree
exactly in every round; a run cut short keeps what it ran."""

from conftest import BIN, check, run_bench_tool


def ab(tmp_path, *args):
    return run_bench_tool("ab_rounds.py", ["--backend", "sim", "--cpu", "-1", "--reps", "3", "--out", str(tmp_path)]
                          + list(args), tmp_path, "ab_rounds.json")


def test_two_servers_of_one_binary_agree_round_by_round(tmp_path):
    p, kept = ab(tmp_path, "--arm", f"a=sl:{BIN}", "--arm", f"b=sl:{BIN}", "--about", "b=the same binary",
                 "--points", "v1:20:2,v2:20:4", "--rounds", "4", "--poll", "b=0.2")
    check(p.returncode == 0, "exit 0", p.returncode, f"ab_rounds\n{p.stdout[-1500:]}\n{p.stderr[-1500:]}")
    check("4 of 4 rounds run" in p.stdout, "4 of 4 rounds run", p.stdout[-800:], "ab_rounds stdout")
    check(kept is not None and kept["rounds"] == 4 and kept["arms_are"] == {"b": "the same binary"},
          "the file: 4 rounds, --about kept", kept and {k: kept[k] for k in ("rounds", "arms_are")}, "ab_rounds.json")
    check([a.get("poll_s") for a in kept["arms"]] == [None, 0.2], "b's poll kept", kept["arms"], "ab_rounds.json")
    check([r["point"] for r in kept["points"]] == [["async_v1", 20, 2], ["async_v2", 20, 4]], "both points",
          [r["point"] for r in kept["points"]], "ab_rounds.json points")
    for row in kept["points"]:
        check(len(row["ms"]["a"]) == 4 and row["ms"]["a"] == row["ms"]["b"], "4 equal runs a point",
              row["ms"], f"point {row['point']}")
        check(row["ratio_median"]["b"] == 1.0, "b/a exactly 1", row["ratio_median"], f"point {row['point']}")
        for field in ("least_ms", "between_us", "check_us", "issue_us"):  # the sim gives least and issue
            check(set(row.get(field, {})) == {"a", "b"} and len(row[field]["a"]) == 4, f"{field}: a run's of each arm",
                  row.get(field), f"point {row['point']}")
        check(all(x > 0 for x in row["least_ms"]["a"] + row["issue_us"]["a"]), "the sim's least rep and issue time",
              row["least_ms"], f"point {row['point']}")
        check(len(set(row["ids"]["a"] + row["ids"]["b"])) == 8, "8 experiments, each its own id", row["ids"],
              f"point {row['point']}")


def test_a_run_cut_short_keeps_what_it_ran(tmp_path):
    # 2,000 streams are more than a spec may ask (1..1024): the servers refuse the second point
    p, kept = ab(tmp_path, "--arm", f"a=sl:{BIN}", "--arm", f"b=sl:{BIN}", "--points", "v1:20:2,v1:20:2000",
                 "--rounds", "3")
    check(p.returncode != 0, "a failed run", p.returncode, f"ab_rounds\n{p.stdout[-800:]}")
    check("0 of 3 rounds run" in p.stdout, "0 of 3 rounds run", p.stdout[-800:], "ab_rounds stdout")
    check(kept is not None and kept["rounds"] == 0, "the file kept, 0 whole rounds", kept, "ab_rounds.json")
    check([r["point"] for r in kept["points"]] == [["async_v1", 20, 2]] and kept["points"][0]["ms"]["a"] ==
          kept["points"][0]["ms"]["b"], "the first point's run of each arm", kept["points"], "ab_rounds.json")


def test_bad_arms_and_points_are_refused_before_anything_runs(tmp_path):
    for args, says in ((["--arm", f"a=sl:{BIN}"], "two or more arms"),
                       (["--arm", f"a=sl:{BIN}", "--arm", f"a=sl:{BIN}"], "each its own name"),
                       (["--arm", f"a=sl:{BIN}", "--arm", "b=gpu:x"], "bad --arm"),
                       (["--arm", f"a=sl:{BIN}", "--arm", f"b=sl:{BIN}", "--points", "v1:22"], "bad point"),
                       (["--arm", f"a=sl:{BIN}", "--arm", f"b=sl:{BIN}", "--about", "c=x"], "bad --about"),
                       (["--arm", f"a=sl:{BIN}", "--arm", f"b=sl:{BIN}", "--poll", "c=1"], "bad --poll"),
                       (["--arm", f"a=sl:{BIN}", "--arm", f"b=sl:{BIN}", "--poll", "b=0"], "bad --poll"),
                       (["--arm", f"a=sl:{BIN}", "--arm", f"b=sl:{BIN}", "--poll", "b=x"], "bad --poll")):
        p, kept = ab(tmp_path, *args)
        check(p.returncode != 0 and says in p.stderr, f"refused: {says}", (p.returncode, p.stderr[-300:]),
              " ".join(args))
        check(kept is None, "no file written", kept, " ".join(args))
