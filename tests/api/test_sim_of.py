"""sim_of: simulating a machine the store knows. Every store knows the machines of the embedded profiles
(measured on a lent H100, a lent H200 and a lent host of two H200s) and any machine an import or a push brought; a spec's "sim_of"
names one, and the sim runs the spec on that machine's calibration. A machine the model cannot stand in for
(no GPUs, no calibration), an unknown id, a bad id, or a backend other than sim/auto is 422 before anything
is stored. No timing numbers are asserted: simulated totals are only compared with each other."""

import copy
import json
import sqlite3

from conftest import check, expect_error, expect_status, run_cli, small

PROFILE_NAMES = ("lent-h100", "lent-h200", "lent-h200x2")


# ---------------------------------------------------------------- helpers

def machines_by_profile(srv):
    """{profile name: machine} of the embedded profiles' machines, as GET /api/machines lists them."""
    return {m["profile"]["name"]: m for m in srv.machines() if isinstance(m.get("profile"), dict)}


def profile_machine(srv, name):
    ms = machines_by_profile(srv)
    check(name in ms, f"a machine of profile {name}", sorted(ms), "GET /api/machines")
    return ms[name]


def experiment_count(srv):
    return len(srv.list_all())


def import_machines(srv, machines):
    """Bring machines into the store the way another store would: a bundle of machines alone."""
    bundle = {"format": "streamlab-bundle", "version": 1, "machines": machines, "sweeps": [], "experiments": [],
              "timelines": {}}
    body = expect_status(srv.post("/api/import", bundle), 200)
    check(body.get("machines") == len(machines), len(machines), body, "import of machines alone")


def copy_of(machine, new_id, label, gpus=None):
    """Another machine with the same GPUs (or gpus), as GET /api/machines shows one."""
    m = {k: copy.deepcopy(v) for k, v in machine.items()
         if k not in ("first_seen", "last_seen", "simulatable", "profile")}
    m["id"], m["label"] = new_id, label
    if gpus is not None:
        m["gpus"] = gpus
    return m


def device_of(exp):
    return ((exp.get("result") or {}).get("extra") or {}).get("device", "")


# ---------------------------------------------------------------- the machines

def test_a_fresh_store_knows_the_profile_machines_as_simulatable(server):
    ms = machines_by_profile(server)
    check(sorted(ms) == sorted(PROFILE_NAMES), sorted(PROFILE_NAMES), sorted(ms),
          "the embedded profiles' machines in a fresh store")
    for name, m in ms.items():
        meta = m["profile"]
        check(m.get("simulatable") is True, "simulatable: true", m.get("simulatable"), f"machine of {name}")
        check(isinstance(meta.get("gpu_uuid"), str) and meta["gpu_uuid"].startswith("GPU-"),
              "profile.gpu_uuid a GPU's uuid (GPU-...)", meta.get("gpu_uuid"), f"profile {name}")
        for f in ("measured_at", "gpu_name", "driver_version"):
            check(isinstance(meta.get(f), str) and meta[f], f"profile.{f} a non-empty string", meta.get(f),
                  f"profile {name}")
        check(m.get("label") == name and len(m.get("gpus", [])) >= 1, f"label {name} and its GPUs",
              {"label": m.get("label"), "gpus": len(m.get("gpus", []))}, f"machine of {name}")
        one = expect_status(server.get(f"/api/machines/{m['id']}"), 200)
        check(one == m, "GET /api/machines/{id} as listed", one, f"machine of {name}")
    check("H200" in ms["lent-h200"]["profile"]["gpu_name"], "an H200", ms["lent-h200"]["profile"]["gpu_name"],
          "profile lent-h200's GPU")
    this = server.health_machine()
    check(this.get("simulatable") is True and "profile" not in this,
          "this (sim) machine simulatable, with no profile", {k: this.get(k) for k in ("simulatable", "profile")},
          "this machine")


def test_a_restart_keeps_one_machine_per_profile(make_server):
    srv = make_server()
    before = sorted(m["id"] for m in srv.machines())
    srv.stop()
    srv.start()
    after = sorted(m["id"] for m in srv.machines())
    check(after == before, before, after, "the machines after a restart on the same store")


# ---------------------------------------------------------------- runs

def test_sim_of_the_h200_runs_on_its_calibration(server):
    h200 = profile_machine(server, "lent-h200")
    spec = small(streams=4)
    plain = server.create(spec)
    sim = server.create(dict(spec, sim_of=h200["id"]))
    check(sim["spec"].get("sim_of") == h200["id"], h200["id"], sim["spec"].get("sim_of"), "the stored spec's sim_of")
    check("sim_of" not in plain["spec"], "no sim_of in a spec without one", plain["spec"], "the stored spec")
    plain, sim = server.wait_done(plain["id"]), server.wait_done(sim["id"])
    res = sim["result"]
    check(res["backend"] == "sim", "result.backend sim", res["backend"], "sim_of result")
    check("H200" in device_of(sim) and "H100" not in device_of(sim), "a device named after the H200",
          device_of(sim), "result.extra.device")
    check(sim["machine_id"] == server.health_machine()["id"], "machine_id: this server, which ran it",
          sim["machine_id"], "sim_of experiment")
    check(res["total_ms"]["median"] != plain["result"]["total_ms"]["median"],
          "a total other than the default (H100) sim's", (res["total_ms"]["median"],
                                                           plain["result"]["total_ms"]["median"]),
          "sim_of H200 against the same spec without sim_of")
    tl = expect_status(server.get(f"/api/experiments/{sim['id']}/timeline"), 200)
    check(len(tl["ops"]) > 0, "a timeline", tl, "sim_of experiment's timeline")
    listed = {e["id"]: e for e in server.list_all()}
    check(listed[sim["id"]]["spec"].get("sim_of") == h200["id"], h200["id"], listed[sim["id"]]["spec"],
          "the listing's spec.sim_of")


def profile_point(name, variant, size, streams):
    """The row of profiles/NAME.json's reference table (measured by bench/ref_overlap on its GPU)."""
    import pathlib
    prof = json.loads((pathlib.Path(__file__).resolve().parents[2] / "profiles" / f"{name}.json").read_text())
    rows = [p for p in prof["reference"]["points"]
            if p["variant"] == variant and p["size"] == size and p["streams"] == streams]
    check(len(rows) == 1, f"one {variant} 2^{size.bit_length() - 1} x{streams} row in profiles/{name}.json",
          len(rows), "the profile's reference table")
    return prof, rows[0]


def test_a_point_of_the_seeds_table_says_what_its_gpu_measured(server):
    """A simulated point of the profile's reference table carries the plain program's measurement there."""
    h200 = profile_machine(server, "lent-h200")
    cases = [("lent-h100", "h100", None, "async_v1", 4), ("lent-h200", "h200", h200["id"], "async_v2", 8)]
    for name, fname, sim_of, variant, streams in cases:
        spec = {"variant": variant, "size": "2^22", "streams": streams, "reps": 3}
        if sim_of:
            spec["sim_of"] = sim_of
        exp = server.wait_done(server.create(spec)["id"])
        ref = exp["result"]["extra"].get("reference")
        prof, row = profile_point(fname, variant, 1 << 22, streams)
        what = f"{name} {variant} 2^22 x{streams}: result.extra.reference"
        check(isinstance(ref, dict) and ref.get("profile") == name and ref.get("median_ms") == row["median_ms"]
              and ref.get("rounds_ms") == row["rounds_ms"] and ref.get("gpu_uuid") == prof["profile"]["gpu_uuid"]
              and ref.get("measured_at") == prof["profile"]["measured_at"]
              and ref.get("program") == prof["reference"]["program"],
              f"the plain program's {row['median_ms']} ms and rounds on {prof['profile']['gpu_uuid']}", ref, what)
        sim_ms = exp["result"]["total_ms"]["median"]
        check(abs(ref["sim_error_pct"] - 100 * (sim_ms / row["median_ms"] - 1)) < 1e-9,
              f"100 x ({sim_ms} / {row['median_ms']} - 1)", ref["sim_error_pct"], what + ".sim_error_pct")
    # not a point of the table as the plain program runs it: none
    for over in ({"kernel": "compute"}, {"chunks": 8}, {"size": "2^20"}, {"host_memory": "pageable"}):
        spec = dict({"variant": "async_v1", "size": "2^22", "streams": 4, "reps": 3}, **over)
        exp = server.wait_done(server.create(spec)["id"])
        check("reference" not in exp["result"]["extra"], "no extra.reference", exp["result"]["extra"].get("reference"),
              f"a spec off the seeds' table ({over})")


def test_a_point_of_the_seeds_table_says_where_it_falls_in_the_fleet(server):
    """result.extra.fleet: the point on every lent GPU of the profile's kind (the profile's fleet, from
    bench/data by bench/fleet.py), and the share of those tables quicker than the sim."""
    h200 = profile_machine(server, "lent-h200")
    cases = [("lent-h100", "h100", None, "async_v1", 128, "2^25"), ("lent-h200", "h200", h200["id"], "async_v2", 256,
                                                                      "2^22"),
             ("lent-h100", "h100", None, "sequential", 1, "2^22")]
    for name, fname, sim_of, variant, streams, size in cases:
        spec = {"variant": variant, "size": size, "streams": streams, "reps": 3}
        if sim_of:
            spec["sim_of"] = sim_of
        exp = server.wait_done(server.create(spec)["id"])
        fleet = exp["result"]["extra"].get("fleet")
        prof, _ = profile_point(fname, variant, 1 << int(size[2:]), streams)
        rows = [p for p in prof["fleet"]["points"]
                if p["variant"] == variant and p["size"] == 1 << int(size[2:]) and p["streams"] == streams]
        check(len(rows) == 1, f"one row in profiles/{fname}.json's fleet", len(rows), "the profile's fleet")
        row, what = rows[0], f"{name} {variant} {size} x{streams}: result.extra.fleet"
        check(isinstance(fleet, dict) and fleet.get("profile") == name and fleet.get("tables") == len(row["ms"]) > 1
              and fleet.get("gpus") == prof["fleet"]["gpus"] and fleet.get("from") == prof["fleet"]["from"]
              and fleet.get("to") == prof["fleet"]["to"]
              and all(fleet.get(k) == row[k] for k in ("min_ms", "p25_ms", "median_ms", "p75_ms", "max_ms")),
              f"the {len(row['ms'])} lent tables' band at the point, as profiles/{fname}.json keeps it", fleet, what)
        check(row["ms"] == sorted(row["ms"]) and row["min_ms"] == row["ms"][0] and row["max_ms"] == row["ms"][-1]
              and row["min_ms"] <= row["p25_ms"] <= row["median_ms"] <= row["p75_ms"] <= row["max_ms"],
              "sorted tables, min <= p25 <= median <= p75 <= max", row, f"profiles/{fname}.json's fleet row")
        sim_ms = exp["result"]["total_ms"]["median"]
        rank = 100 * sum(1 if v < sim_ms else 0.5 if v == sim_ms else 0 for v in row["ms"]) / len(row["ms"])
        check(abs(fleet["sim_rank_pct"] - rank) < 1e-9, f"{rank}: the tables quicker than the sim's {sim_ms} ms",
              fleet["sim_rank_pct"], what + ".sim_rank_pct")
        check(fleet.get("groups") == row.get("groups"), "the point's two groups as the profile keeps them, or none",
              row.get("groups"), what + ".groups")
    # off the seeds' table: none
    for over in ({"kernel": "compute"}, {"size": "2^20"}):
        spec = dict({"variant": "async_v1", "size": "2^22", "streams": 4, "reps": 3}, **over)
        exp = server.wait_done(server.create(spec)["id"])
        check("fleet" not in exp["result"]["extra"], "no extra.fleet", exp["result"]["extra"].get("fleet"),
              f"a spec off the seeds' table ({over})")


def test_a_point_whose_lent_tables_fall_in_two_groups_says_so(server):
    """result.extra.fleet.groups: at a point where the lent GPUs' tables part in two (2^25 async_v1 x64 runs in
    one of two modes on the lent H100s), both groups, the quicker first, every table in one of them; the split
    is the widest gap that leaves 3 tables and 15% on each side, 2.5% or more, the medians 8% or more apart. A
    point whose tables are one group (2^25 async_v1 x8) has none."""
    exp = server.wait_done(server.create({"variant": "async_v1", "size": "2^25", "streams": 64, "reps": 3})["id"])
    fleet, what = exp["result"]["extra"].get("fleet") or {}, "lent-h100 async_v1 2^25 x64: result.extra.fleet"
    groups = fleet.get("groups")
    check(isinstance(groups, list) and len(groups) == 2, "two groups", groups, what + ".groups")
    prof, _ = profile_point("h100", "async_v1", 1 << 25, 64)
    ms = [p for p in prof["fleet"]["points"] if p["variant"] == "async_v1" and p["size"] == 1 << 25
          and p["streams"] == 64][0]["ms"]
    low, high = groups
    need = max(3, 0.15 * len(ms))
    gaps = [(ms[i + 1] / ms[i] - 1, i) for i in range(len(ms) - 1) if i + 1 >= need and len(ms) - i - 1 >= need]
    check(len(gaps) > 0, "a split leaving enough tables each side", len(ms), "the profile's fleet row")
    gap, at = max(gaps, key=lambda t: (t[0], -t[1]))  # the widest; of equal ones the first, as groups_of
    check(low["tables"] + high["tables"] == fleet["tables"] == len(ms) and low["tables"] == at + 1
          and low["min_ms"] == ms[0] and low["max_ms"] == ms[at] and high["min_ms"] == ms[at + 1]
          and high["max_ms"] == ms[-1], f"the tables parted at the widest gap ({100 * gap:.1f}% after table {at + 1})",
          groups, what + ".groups")
    check(gap >= 0.025 and high["median_ms"] / low["median_ms"] - 1 >= 0.08
          and low["tables"] >= need and high["tables"] >= need,
          "a gap of 2.5% or more, medians 8% or more apart, enough tables each side", groups, what + ".groups")
    one = server.wait_done(server.create({"variant": "async_v1", "size": "2^25", "streams": 8, "reps": 3})["id"])
    f8 = one["result"]["extra"].get("fleet") or {}
    check(f8.get("tables", 0) > 1 and "groups" not in f8, "a band and no groups", f8,
          "lent-h100 async_v1 2^25 x8: result.extra.fleet")


def test_a_simulated_result_gives_its_host_pace_band(server):
    """result.extra.host_pace: the run again with the host's calls 0.9-2 times as dear; the run itself at 1.
    Host-paced (2^22 x256) it spreads; copy-paced (2^25 x4) it moves only by what the copy engine waits for
    on the host, the large array's first H2D (about 20 us at 1x on the H100 profile): under 1%."""
    h200 = profile_machine(server, "lent-h200")
    for size, streams, sim_of, spread in (("2^22", 256, None, (0.2, 10)), ("2^25", 4, None, (0, 0.01)),
                                          ("2^22", 256, h200["id"], (0.2, 10))):
        spec = {"variant": "async_v1", "size": size, "streams": streams, "reps": 3}
        if sim_of:
            spec["sim_of"] = sim_of
        exp = server.wait_done(server.create(spec)["id"])
        pace = exp["result"]["extra"].get("host_pace")
        what = f"async_v1 {size} x{streams}{' sim_of ' + sim_of if sim_of else ''}: result.extra.host_pace"
        check(isinstance(pace, dict) and pace.get("scales") == [0.9, 1.0, 1.25, 1.5, 2.0]
              and len(pace.get("total_ms", [])) == 5, "5 scales, 0.9-2, and a total at each", pace, what)
        check(pace["total_ms"][1] == exp["result"]["total_ms"]["median"], "the run's own median at 1.0",
              pace["total_ms"][1], what)
        check(pace["min_ms"] == min(pace["total_ms"]) and pace["max_ms"] == max(pace["total_ms"]),
              "min_ms and max_ms over the totals", pace, what)
        got = pace["max_ms"] / pace["min_ms"] - 1
        check(spread[0] <= got < spread[1], f"a spread in [{spread[0]}, {spread[1]})", got, what)


def test_a_sweep_over_the_profile_machines(server):
    ms = machines_by_profile(server)
    ids = [ms[n]["id"] for n in ("lent-h100", "lent-h200")]
    body = expect_status(server.post("/api/sweeps", {"base": small(streams=2), "axes": {"sim_of": ids,
                                                                                       "chunks": [2, 8]}}), 202)
    exps = [server.wait_done(e) for e in body["experiments"]]
    check([e["spec"].get("sim_of") for e in exps] == [ids[0], ids[0], ids[1], ids[1]], "sim_of per point in order",
          [e["spec"].get("sim_of") for e in exps], "the sweep's points")
    for e, gpu in zip(exps, ("H100", "H100", "H200", "H200")):
        check(e["result"]["backend"] == "sim" and gpu in device_of(e), f"a sim run on the {gpu}",
              (e["result"]["backend"], device_of(e)), f"point {e['sweep_index']}")
    sweep = expect_status(server.get(f"/api/sweeps/{body['id']}"), 200)
    check(sweep["counts"]["done"] == 4, 4, sweep["counts"], "the sweep's counts")


def test_a_simulated_machine_with_two_gpus_runs_multi_gpu_here(server):
    """The simulated machine's devices need not exist on this one (one sim device here)."""
    h200 = profile_machine(server, "lent-h200")
    gpus = [dict(copy.deepcopy(h200["gpus"][0]), index=i) for i in range(2)]
    import_machines(server, [copy_of(h200, "m-two-h200", "two H200s", gpus)])
    exp = server.wait_done(server.create(small("multi_gpu", streams=2, sim_of="m-two-h200"))["id"])
    check(exp["spec"]["devices"] == [0, 1] and "H200" in device_of(exp), "devices [0, 1] of the simulated H200s",
          (exp["spec"]["devices"], device_of(exp)), "multi_gpu with sim_of")
    expect_error(server.post("/api/experiments", small(devices=[2], sim_of="m-two-h200")), 422, field="devices")


def test_the_two_gpu_profile_shares_its_host_side(server):
    """lent-h200x2 was measured with both GPUs: its calibration holds what they move together (host_copy_gbps),
    and multi_gpu simulated on it is slower than on the same machine with that field taken out."""
    x2 = profile_machine(server, "lent-h200x2")
    cals = [g["calibration"] for g in x2["gpus"]]
    check(len(cals) == 2 and all(c["host_copy_gbps"] > 0 and 0 < c["host_h2d_gbps"] < c["host_copy_gbps"] for c in cals),
          "two GPUs, each with host_copy_gbps > host_h2d_gbps > 0",
          [{k: c.get(k) for k in ("host_copy_gbps", "host_h2d_gbps")} for c in cals], "the profile's host side")
    alone = [dict(copy.deepcopy(g), calibration={k: v for k, v in g["calibration"].items()
                                                  if k not in ("host_copy_gbps", "host_h2d_gbps")}) for g in x2["gpus"]]
    import_machines(server, [copy_of(x2, "m-h200x2-no-host", "two H200s, no host side", alone)])
    spec = dict(small("multi_gpu"), size=1 << 24, streams=8)
    shared = server.wait_done(server.create(dict(spec, sim_of=x2["id"]))["id"])
    apart = server.wait_done(server.create(dict(spec, sim_of="m-h200x2-no-host"))["id"])
    t_shared, t_apart = shared["result"]["total_ms"]["median"], apart["result"]["total_ms"]["median"]
    check(t_shared > t_apart, "slower with the host side shared", (t_shared, t_apart),
          "multi_gpu 2^24 x8 on lent-h200x2 against the same GPUs without host_copy_gbps")


def test_a_machine_gone_by_the_time_it_runs_fails_the_experiment(make_server):
    srv = make_server(workers=0)
    h200 = profile_machine(srv, "lent-h200")
    import_machines(srv, [copy_of(h200, "m-short-lived", "short-lived")])
    eid = srv.create(small(sim_of="m-short-lived"))["id"]
    srv.stop()
    con = sqlite3.connect(srv.db)
    try:
        con.execute("DELETE FROM machines WHERE id='m-short-lived'")
        con.commit()
    finally:
        con.close()
    srv.start(workers=None)
    exp = srv.wait_status(eid)
    check(exp["status"] == "failed" and "m-short-lived" in (exp.get("error") or ""),
          "failed, naming the machine that is gone", (exp["status"], exp.get("error")), "sim_of of a deleted machine")


# ---------------------------------------------------------------- refusals

def test_refused_sim_of_stores_nothing(idle_server):
    srv = idle_server
    h200 = profile_machine(srv, "lent-h200")
    uncalibrated = copy_of(h200, "m-never-measured", "never measured",
                           [dict(copy.deepcopy(h200["gpus"][0]), calibration=None)])
    import_machines(srv, [uncalibrated, copy_of(h200, "m-no-gpus", "no GPUs", [])])
    check(expect_status(srv.get("/api/machines/m-never-measured"), 200).get("simulatable") is False,
          "simulatable: false", "true", "a machine without calibration")
    before = experiment_count(srv)
    cases = [
        ("a bad id", small(sim_of="m.nope"), "sim_of", None),
        ("an empty id", small(sim_of=""), "sim_of", None),
        ("an id too long", small(sim_of="m" * 64), "sim_of", None),
        ("not a string", small(sim_of=7), "sim_of", None),
        ("an unknown id", small(sim_of="m-0000000000000000"), "sim_of", "m-0000000000000000"),
        ("backend cuda", small(sim_of=h200["id"], backend="cuda"), "backend", "sim"),
        ("backend cpu", small(sim_of=h200["id"], backend="cpu"), "backend", None),
        ("the cpu variant", small("cpu", sim_of=h200["id"]), "variant", None),
        ("a machine without calibration", small(sim_of="m-never-measured"), "sim_of", "calibration"),
        ("a machine without GPUs", small(sim_of="m-no-gpus"), "sim_of", "GPU"),
        ("a device the simulated machine lacks", small(devices=[1], sim_of=h200["id"]), "devices", None),
    ]
    for what, spec, field, says in cases:
        err = expect_error(srv.post("/api/experiments", spec), 422, field=field)
        if says:
            check(says in err["message"], f"a message mentioning {says!r}", err["message"], what)
        check(experiment_count(srv) == before, f"{before} experiments", experiment_count(srv), f"after {what}")
    for what, sweep, field in (
            ("a sweep point with an unknown id", {"base": small(), "axes": {"sim_of": [h200["id"], "m-nope"]}},
             "sim_of"),
            ("a sweep of a machine without calibration", {"base": small(sim_of="m-never-measured"),
                                                          "axes": {"streams": [1, 2]}}, "sim_of")):
        expect_error(srv.post("/api/sweeps", sweep), 422, field=field)
        check(experiment_count(srv) == before, f"{before} experiments", experiment_count(srv), f"after {what}")
    check(srv.health()["queue_depth"] == 0, "nothing queued", srv.health()["queue_depth"], "after the refusals")


# ---------------------------------------------------------------- the CLI

def test_run_subcommand_simulates_a_profile_machine(tmp_path, make_server):
    h200 = profile_machine(make_server(workers=0), "lent-h200")  # the same binary, the same profiles
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(small(sim_of=h200["id"])))
    code, out, err = run_cli(["run", str(spec), "--backend", "sim"])
    check(code == 0, "exit 0", code, f"streamlab run with sim_of\n  stderr: {err[-1500:]}")
    exp = json.loads(out)
    check(exp["status"] == "done" and exp["spec"].get("sim_of") == h200["id"], "done, with spec.sim_of",
          (exp["status"], exp["spec"].get("sim_of")), "run output")
    check(exp["result"]["backend"] == "sim" and "H200" in device_of(exp), "a sim run on the H200",
          (exp["result"]["backend"], device_of(exp)), "run result")
    spec.write_text(json.dumps(small(sim_of="m-0000000000000000")))
    db = tmp_path / "refused.db"
    code, out, err = run_cli(["run", str(spec), "--backend", "sim", "--db", str(db)])
    check(code == 2, "exit 2", code, f"streamlab run with an unknown sim_of\n  stderr: {err[-1500:]}")
    body = json.loads(out)
    check(body["error"].get("field") == "sim_of", "an error naming sim_of", body, "run error JSON")
    con = sqlite3.connect(str(db))
    try:
        n = con.execute("SELECT count(*) FROM experiments").fetchone()[0]
    finally:
        con.close()
    check(n == 0, "no experiment stored", n, "the refused run's --db")
