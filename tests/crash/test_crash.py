"""Crash safety: `kill -9` at random moments (a seeded RNG picks them) while a sweep of sim
experiments runs and writes its op events, and while a bundle is imported; then a
restart. After every kill, the SQLite file (opened with Python's sqlite3, read-only,
before the server touches it again) passes PRAGMA integrity_check, holds every accepted
experiment (the ids of 202 answers), and shows no half-written result: a done experiment
has its result, one result_reps row per rep and op events for every rep; any other status
has none of them. After the restart, the experiments that were running are failed with
"interrupted" and nothing else is running but what the new worker just claimed; at the
end every queued experiment has run to done. SIGTERM lets the running experiment finish
(or gives it back to the queue) and exits 0.

CRASH_SEED and CRASH_KILLS choose the moments and how many (default 8 and 30)."""

import json
import os
import random
import sqlite3
import threading
import time

import pytest
import requests

from api_conftest import RUN_DEADLINE_S, SLOW, TERMINAL, check, expect_status

SEED = int(os.environ.get("CRASH_SEED", "8"))
KILLS = int(os.environ.get("CRASH_KILLS", "30"))


def base_spec(rng):
    """A sim experiment that writes thousands of op events (chunks x 3 ops x reps)."""
    return {"variant": "async_v1", "size": "2^22", "chunks": rng.choice([256, 512, 1024]),
            "reps": rng.choice([4, 8]), "warmup": 0, "backend": "sim"}


# ---------------------------------------------------------------- the file, as the kill left it

def db_state(path):
    """Read the store directly: integrity, and per experiment its status, error, result
    reps, result_reps rows and the distinct reps that have op events."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        integrity = [r[0] for r in con.execute("PRAGMA integrity_check")]
        exps = {r[0]: {"status": r[1], "error": r[2]} for r in con.execute("SELECT id, status, error FROM experiments")}
        results = dict(con.execute("SELECT experiment_id, reps FROM results"))
        rep_rows = dict(con.execute("SELECT experiment_id, count(*) FROM result_reps GROUP BY experiment_id"))
        event_reps = dict(con.execute("SELECT experiment_id, count(DISTINCT rep) FROM op_events GROUP BY experiment_id"))
    finally:
        con.close()
    return integrity, exps, results, rep_rows, event_reps


def check_file(path, accepted, when):
    """The checks on the file itself; returns the experiments by id."""
    integrity, exps, results, rep_rows, event_reps = db_state(path)
    check(integrity == ["ok"], ["ok"], integrity, f"PRAGMA integrity_check {when}")
    missing = sorted(set(accepted) - set(exps))
    check(not missing, "every accepted experiment in the file", f"missing {missing[:10]} of {len(accepted)}",
          f"accepted experiments {when}")
    half = []
    for eid, e in exps.items():
        if e["status"] == "done":
            reps = results.get(eid)
            if reps is None or rep_rows.get(eid) != reps or event_reps.get(eid) != reps:
                half.append((eid, "done", f"result reps {reps}, result_reps rows {rep_rows.get(eid)}, "
                             f"reps with op events {event_reps.get(eid)}"))
        elif eid in results or eid in rep_rows or eid in event_reps:
            half.append((eid, e["status"], f"result {eid in results}, result_reps {rep_rows.get(eid)}, "
                         f"op events of {event_reps.get(eid)} reps"))
    check(not half, "no half-written result (done: result + every rep's rows and events; else none)",
          half[:5], f"results {when}")
    return exps


def check_recovered(srv, accepted, running_at_kill, queued_at_kill, when):
    """After a restart, through the API: every accepted experiment is there, the ones that
    were running are failed ("interrupted"), and at most one is running: one the new worker
    claimed from the queue."""
    items = {e["id"]: e for e in srv.list_all()}
    missing = sorted(set(accepted) - set(items))
    check(not missing, "every accepted experiment listed", f"missing {missing[:10]}", f"GET /api/experiments {when}")
    for eid in running_at_kill:
        e = items[eid]
        check(e["status"] == "failed" and "interrupted" in json.dumps(e.get("error")).lower(),
              'failed with an error containing "interrupted"', f"{e['status']}: {e.get('error')}",
              f"experiment {eid}, running at the kill, {when}")
    running = [eid for eid, e in items.items() if e["status"] == "running"]
    check(len(running) <= 1 and all(eid in queued_at_kill for eid in running),
          "nothing running but one just claimed from the queue", running, f"running experiments {when}")
    for eid, e in items.items():
        if e["status"] == "done":
            check(isinstance(e.get("result"), dict), "a result", e.get("result"), f"done experiment {eid} {when}")


def wait_all_terminal(srv, ids, deadline_s):
    end = time.monotonic() + deadline_s
    items = {}
    while time.monotonic() < end:
        items = {e["id"]: e for e in srv.list_all()}
        if all(items.get(i, {}).get("status") in TERMINAL for i in ids):
            return items
        check(srv.alive(), "server running", f"exited\n{srv.log_tail()}", "while the queue drains")
        time.sleep(0.05)
    left = [i for i in ids if items.get(i, {}).get("status") not in TERMINAL]
    pytest.fail(f"{len(left)} experiments not finished within {deadline_s}s: {left[:10]}", pytrace=False)


# ---------------------------------------------------------------- kill -9 during sweeps

def test_kill9_at_random_moments_during_sweeps_loses_nothing(make_server):
    rng = random.Random(SEED)
    srv = make_server(workers=1)
    accepted = {}
    interrupted = set()
    hits = 0
    for k in range(KILLS):
        when = f"after kill {k + 1} of {KILLS} (seed {SEED})"
        sweep = {"base": base_spec(rng), "axes": {"streams": [1, 4, 16], "variant": ["async_v1", "round_robin"]}}
        body = expect_status(srv.post("/api/sweeps", sweep), 202)
        for eid in body["experiments"]:
            accepted[eid] = "sweep"
        kill_at = time.monotonic() + rng.uniform(0.0, 0.5) * SLOW
        while time.monotonic() < kill_at:  # the moment of the kill; more work arrives meanwhile
            if rng.random() < 0.2:
                r = srv.post("/api/experiments", base_spec(rng))
                if r.status_code == 202:
                    accepted[r.json()["id"]] = "single"
            time.sleep(0.01)
        srv.kill9()
        exps = check_file(srv.db, accepted, when)
        running_at_kill = {eid for eid, e in exps.items() if e["status"] == "running"}
        queued_at_kill = {eid for eid, e in exps.items() if e["status"] == "queued"}
        hits += bool(running_at_kill)
        interrupted |= running_at_kill
        srv.start()
        check_recovered(srv, accepted, running_at_kill, queued_at_kill, when)
    print(f"crash: {KILLS} kills, {hits} while an experiment was running, {len(accepted)} accepted")
    check(hits > 0, "at least one kill while an experiment was running (and writing its events)",
          f"{hits} of {KILLS}", "the kills' moments")
    items = wait_all_terminal(srv, list(accepted), RUN_DEADLINE_S * 2)
    for eid in accepted:
        e = items[eid]
        if eid in interrupted:
            check(e["status"] == "failed", "failed (interrupted)", e["status"], f"experiment {eid} at the end")
        else:
            check(e["status"] == "done", "done (queued work runs after the restarts)",
                  f"{e['status']}: {e.get('error')}", f"experiment {eid} at the end")
    srv.stop()
    check_file(srv.db, accepted, "at the end")


# ---------------------------------------------------------------- kill -9 during an import

def big_bundle(srv, copies, prefix):
    """A bundle of `copies` done experiments with thousands of op events each: one sim run
    exported, then copied under new ids."""
    spec = {"variant": "round_robin", "size": "2^22", "streams": 16, "chunks": 1024, "reps": 4, "warmup": 0}
    eid = srv.create(spec)["id"]
    srv.wait_done(eid)
    b = expect_status(srv.get(f"/api/export?experiment={eid}"), 200)
    exp, tl = b["experiments"][0], b["timelines"][eid]
    b["experiments"], b["timelines"] = [], {}
    for i in range(copies):
        new = f"e-{prefix}{i:04d}{eid[2:10]}"
        b["experiments"].append(dict(exp, id=new, sweep_id=None, sweep_index=None))
        b["timelines"][new] = tl
    b["sweeps"] = []
    return b, [e["id"] for e in b["experiments"]]


def big_bundle_like(bundle, prefix):
    """The same bundle under other ids."""
    b = dict(bundle, experiments=[], timelines={})
    for e in bundle["experiments"]:
        new = f"e-{prefix}{e['id'][8:]}"
        b["experiments"].append(dict(e, id=new))
        b["timelines"][new] = bundle["timelines"][e["id"]]
    return b, [e["id"] for e in b["experiments"]]


def test_kill9_during_an_import_is_all_or_nothing(make_server):
    rng = random.Random(SEED + 1)
    srv = make_server(workers=1)
    bundle, ids = big_bundle(srv, copies=12, prefix="import")
    data = json.dumps(bundle).encode()
    srv.stop()
    srv.start(workers=0)
    # how long a whole import takes here (the same size, other ids): the kills fall in it
    calib, _ = big_bundle_like(bundle, "calib")
    t0 = time.monotonic()
    expect_status(srv.post("/api/import", raw=json.dumps(calib).encode()), 200)
    import_s = time.monotonic() - t0
    outcomes = []
    for k in range(5):
        when = f"after kill {k + 1} during an import (seed {SEED + 1})"
        def post():
            try:
                requests.post(srv.url("/api/import"), data=data, headers={"Content-Type": "application/json"},
                              timeout=RUN_DEADLINE_S)
            except requests.RequestException:
                pass  # killed under it

        t = threading.Thread(target=post, daemon=True)
        t.start()
        time.sleep(rng.uniform(0.3, 1.1) * import_s)  # the moment of the kill: within the import
        srv.kill9()
        t.join(timeout=RUN_DEADLINE_S)
        exps = check_file(srv.db, {}, when)
        present = [i for i in ids if i in exps]
        check(len(present) in (0, len(ids)), f"all {len(ids)} of the bundle's experiments or none",
              f"{len(present)}", f"imported experiments {when}")
        outcomes.append(len(present) == len(ids))
        srv.start()
        if present:  # the next round imports into a store without them
            break
    print(f"crash: an import takes {import_s:.2f}s; kills left {['all' if o else 'none' for o in outcomes]}")


# ---------------------------------------------------------------- SIGTERM

def test_sigterm_lets_the_running_experiment_finish_and_exits_0(make_server):
    srv = make_server(workers=1)
    slow = {"variant": "cpu", "size": "2^24", "reps": 10, "warmup": 0, "label": "seconds of real work"}
    eid = srv.create(slow)["id"]
    behind = {"variant": "async_v1", "size": "2^22", "chunks": 256, "reps": 4, "warmup": 0}
    rest = expect_status(srv.post("/api/sweeps", {"base": behind, "axes": {"streams": [1, 2, 4]}}), 202)
    exp = srv.wait_status(eid, ("running", "done", "failed", "cancelled"))
    check(exp["status"] == "running", "running when SIGTERM comes", exp["status"], "the slow experiment")
    srv.stop(expect_code=0)  # SIGTERM; fails unless the exit code is 0
    exps = check_file(srv.db, {eid: 1, **{i: 1 for i in rest["experiments"]}}, "after SIGTERM")
    check(exps[eid]["status"] in ("done", "queued"), "done (finished) or queued (given back)",
          f"{exps[eid]['status']}: {exps[eid]['error']}", "the experiment running at SIGTERM")
    for i in rest["experiments"]:
        check(exps[i]["status"] in ("queued", "done"), "queued or done", exps[i]["status"],
              f"sweep experiment {i} after SIGTERM")
    print(f"crash: the experiment running at SIGTERM ended {exps[eid]['status']}")
    srv.start()
    items = wait_all_terminal(srv, [eid] + rest["experiments"], RUN_DEADLINE_S * 2)
    for i in [eid] + rest["experiments"]:
        check(items[i]["status"] == "done", "done", f"{items[i]['status']}: {items[i].get('error')}",
              f"experiment {i} after the restart")
