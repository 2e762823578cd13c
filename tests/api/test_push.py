"""Push (`serve --push URL`, `run SPEC --push URL`): every finished experiment reaches the central server
exactly once, whatever that server's downtime, and stays in the pusher's outbox until it is accepted.

Two real servers on loopback. The central one listens on a port chosen before it starts (the pusher must
know it), so it is started through pinned_start(). The pusher's outbox is read straight from its SQLite file
(read-only; the server keeps running). Every wait polls with a deadline; the deadlines cover the push
backoff (1 s doubling to 60 s) and are never what is tested.
"""

import json
import os
import sqlite3
import time

import conftest
from conftest import RUN_DEADLINE_S, check, expect_status, free_port, run_cli, small

PUSH_DEADLINE_S = RUN_DEADLINE_S  # covers several backoff rounds


def pinned_start(srv, port, monkeypatch):
    """Start srv on `port` (the push target's address must not move between restarts)."""
    with monkeypatch.context() as m:
        m.setattr(conftest, "free_port", lambda: port)
        srv.start()
    check(srv.port == port, port, srv.port, "the central server's port")


def outbox(db):
    """The pusher's outbox rows: (experiment_id, attempts, next_attempt_at, last_error)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT experiment_id, attempts, next_attempt_at, last_error FROM outbox"
                           " ORDER BY rowid").fetchall()
    finally:
        con.close()


def wait_for(what, cond, deadline_s=PUSH_DEADLINE_S, show=lambda: None):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    check(False, what, f"not within {deadline_s}s; last seen: {show()}", "waiting")


def ids_on(srv):
    return [e["id"] for e in srv.list_all()]


def run_experiments(srv, n, **over):
    ids = [srv.create(small("async_v1", streams=1 + k, **over))["id"] for k in range(n)]
    for eid in ids:
        srv.wait_done(eid)
    return ids


def tried_while_down(db, ids):
    rows = {r[0]: r for r in outbox(db)}
    return set(ids) <= set(rows) and any(rows[i][1] >= 1 and rows[i][3] for i in ids)


def test_push_survives_the_central_server_being_down_and_delivers_each_result_once(make_server, monkeypatch):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    pusher = make_server(name="pusher", sim_devices=2, machine_label="gpu-node-1", extra=["--push", url])
    central = make_server(name="central", start=False)

    # 1. central down from the start: results wait in the outbox, which the pusher keeps trying
    first = run_experiments(pusher, 4)
    wait_for("the pusher tried while the central server was down", lambda: tried_while_down(pusher.db, first),
             show=lambda: outbox(pusher.db))
    pinned_start(central, port, monkeypatch)
    wait_for("the first results on the central server", lambda: set(first) <= set(ids_on(central)),
             show=lambda: (ids_on(central), outbox(pusher.db)))

    # 2. central up: new results go straight through
    second = run_experiments(pusher, 3)
    wait_for("the second results on the central server", lambda: set(second) <= set(ids_on(central)),
             show=lambda: (ids_on(central), outbox(pusher.db)))

    # 3. central stops and comes back on the same database and port
    central.stop()
    third = run_experiments(pusher, 3)
    wait_for("the pusher tried while the central server was stopped", lambda: tried_while_down(pusher.db, third),
             show=lambda: outbox(pusher.db))
    pinned_start(central, port, monkeypatch)
    every = first + second + third
    wait_for("every result on the central server", lambda: set(every) <= set(ids_on(central)),
             show=lambda: (ids_on(central), outbox(pusher.db)))
    wait_for("the pusher's outbox empties", lambda: outbox(pusher.db) == [], show=lambda: outbox(pusher.db))

    on_central = ids_on(central)
    check(len(on_central) == len(set(on_central)), "no duplicates", on_central, "central listing")
    check(sorted(on_central) == sorted(ids_on(pusher)) == sorted(every), sorted(every), sorted(on_central),
          "exactly the pusher's experiments, each once")
    for eid in every:
        check(central.experiment(eid) == pusher.experiment(eid), pusher.experiment(eid), central.experiment(eid),
              f"{eid} as the pusher has it")
    pusher_machine = expect_status(pusher.get("/api/machines"), 200)["this"]
    machine = expect_status(central.get(f"/api/machines/{pusher_machine}"), 200)
    check(machine["label"] == "gpu-node-1", "gpu-node-1", machine["label"], "the pusher's machine on central")
    check(sorted(ids_on_machine(central, pusher_machine)) == sorted(every), sorted(every),
          ids_on_machine(central, pusher_machine), "central's listing by the pusher's machine")


def ids_on_machine(srv, machine_id):
    return [e["id"] for e in srv.list_all(f"machine={machine_id}")]


def test_results_kept_across_a_pusher_restart_are_delivered(make_server, monkeypatch):
    port = free_port()
    pusher = make_server(name="pusher", sim_devices=2, extra=["--push", f"http://127.0.0.1:{port}"])
    central = make_server(name="central", start=False)
    ids = run_experiments(pusher, 2)
    wait_for("the results in the outbox", lambda: tried_while_down(pusher.db, ids), show=lambda: outbox(pusher.db))
    pusher.stop()
    check(sorted(r[0] for r in outbox(pusher.db)) == sorted(ids), sorted(ids), outbox(pusher.db),
          "the outbox survives the pusher's stop")
    pinned_start(central, port, monkeypatch)
    pusher.start()
    wait_for("the kept results on the central server", lambda: set(ids) <= set(ids_on(central)),
             show=lambda: (ids_on(central), outbox(pusher.db)))
    wait_for("the pusher's outbox empties", lambda: outbox(pusher.db) == [], show=lambda: outbox(pusher.db))
    check(sorted(ids_on(central)) == sorted(ids), sorted(ids), ids_on(central), "each result once")


def write_spec(tmp_path, name="spec.json", **over):
    path = tmp_path / name
    path.write_text(json.dumps(small(**over)))
    return str(path)


def env_without_push_token():
    env = dict(os.environ)
    env.pop("STREAMLAB_PUSH_TOKEN", None)
    env.pop("STREAMLAB_PUSH_URL", None)
    return env


def test_run_push_delivers_or_keeps_the_result_and_exits_3(make_server, tmp_path):
    central = make_server(name="central", sim_devices=2)
    db = str(tmp_path / "node.db")
    spec = write_spec(tmp_path)
    env = env_without_push_token()

    code, out, err = run_cli(["run", spec, "--backend", "sim", "--db", db, "--push", central.url("")], env=env)
    check(code == 0, 0, code, f"run --push to a live server\n  stderr: {err[-1500:]}")
    delivered = json.loads(out)
    check(central.experiment(delivered["id"]) == delivered, delivered, central.experiment(delivered["id"]),
          "the run's experiment on the central server")
    check(outbox(db) == [], [], outbox(db), "outbox after delivery")

    dead = f"http://127.0.0.1:{free_port()}"
    code, out, err = run_cli(["run", spec, "--backend", "sim", "--db", db, "--push", dead, "--push-wait", "1"],
                             env=env)
    check(code == 3, 3, code, f"run --push to a server that is down\n  stderr: {err[-1500:]}")
    kept = json.loads(out)["id"]
    check("not delivered" in err and kept in err, "stderr says it was not delivered", err[-1500:], "run stderr")
    rows = outbox(db)
    check([r[0] for r in rows] == [kept] and rows[0][1] >= 1 and rows[0][2] is not None and rows[0][3],
          f"one entry for {kept}, tried, still to be tried, with its error", rows, "outbox after a failed push")

    code, out, err = run_cli(["run", spec, "--backend", "sim", "--db", db, "--push", central.url("")], env=env)
    check(code == 0, 0, code, f"the next run --push\n  stderr: {err[-1500:]}")
    third = json.loads(out)["id"]
    check(sorted(ids_on(central)) == sorted([delivered["id"], kept, third]), "all three runs, each once",
          ids_on(central), "central after the next run")
    check(outbox(db) == [], [], outbox(db), "outbox after the next run delivered the kept one too")


def test_a_push_refused_with_4xx_is_kept_and_not_retried(make_server, tmp_path):
    token = tmp_path / "token"
    token.write_text("push-s3cret\n")
    central = make_server(name="central", sim_devices=2, extra=["--token-file", str(token)])
    db = str(tmp_path / "node.db")
    spec = write_spec(tmp_path)
    env = env_without_push_token()
    code, out, err = run_cli(["run", spec, "--backend", "sim", "--db", db, "--push", central.url(""),
                              "--push-wait", "5"], env=env)
    check(code == 3, 3, code, f"run --push without the token\n  stderr: {err[-1500:]}")
    refused = json.loads(out)["id"]
    rows = outbox(db)
    check(len(rows) == 1 and rows[0][0] == refused and rows[0][2] is None and "401" in (rows[0][3] or ""),
          "the entry kept, given up (next_attempt_at NULL), with the 401", rows, "outbox after a 401")
    attempts = rows[0][1]

    env["STREAMLAB_PUSH_TOKEN"] = "push-s3cret"
    code, out, err = run_cli(["run", spec, "--backend", "sim", "--db", db, "--push", central.url("")], env=env)
    check(code == 0, 0, code, f"run --push with STREAMLAB_PUSH_TOKEN\n  stderr: {err[-1500:]}")
    accepted = json.loads(out)["id"]
    check(ids_on(central) == [accepted], [accepted], ids_on(central), "only the run with the token arrived")
    rows = outbox(db)
    check(len(rows) == 1 and rows[0][0] == refused and rows[0][1] == attempts, "the refused entry untouched",
          rows, "outbox: a refused entry is not retried")


def test_push_url_is_checked(tmp_path):
    spec = write_spec(tmp_path)
    for url in ("https://central:8080", "central:8080", "http://", "http://host:99999", "http://host:80/x y",
                "http://user@host:80"):
        code, out, err = run_cli(["run", spec, "--backend", "sim", "--push", url], env=env_without_push_token())
        check(code == 2 and "push" in err, "exit 2 naming --push", (code, err[-600:]), f"--push {url!r}")


def test_an_entry_the_central_server_keeps_refusing_does_not_hold_back_the_others(make_server, tmp_path):
    """A 409 is retried (the brief: 409 and 429 are not final), but behind the entries not yet tried."""
    db = tmp_path / "node.db"
    spec = write_spec(tmp_path)
    env = env_without_push_token()
    dead = f"http://127.0.0.1:{free_port()}"
    code, out, err = run_cli(["run", spec, "--backend", "sim", "--db", str(db), "--push", dead, "--push-wait", "0"],
                             env=env)
    check(code == 3, 3, code, f"run --push to a server that is down\n  stderr: {err[-1500:]}")
    stuck = json.loads(out)["id"]
    node = make_server(name="node", db=db, workers=0)  # the node's store, to export what it holds
    bundle = expect_status(node.get(f"/api/export?experiment={stuck}"), 200)
    node.stop()
    bundle["experiments"][0]["result"]["total_ms"]["median"] += 1.0  # the central server has another version
    central = make_server(name="central", sim_devices=2)
    expect_status(central.post("/api/import", bundle), 200)

    code, out, err = run_cli(["run", spec, "--backend", "sim", "--db", str(db), "--push", central.url(""),
                              "--push-wait", "3"], env=env)
    check(code == 0, 0, code, f"the next run --push, with a conflicting entry ahead of it\n  stderr: {err[-1500:]}")
    fresh = json.loads(out)["id"]
    check(sorted(ids_on(central)) == sorted([stuck, fresh]), sorted([stuck, fresh]), ids_on(central),
          "the new result arrived; the conflicting one is the central server's own version")
    rows = outbox(str(db))
    check(len(rows) == 1 and rows[0][0] == stuck and rows[0][2] is not None and "409" in (rows[0][3] or ""),
          f"{stuck} still to be tried, with the 409", rows, "outbox")
