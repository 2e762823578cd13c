"""The subcommands: run SPEC.json, devices, migrate (including a newer database refused)."""

import json
import sqlite3

from conftest import SPEC_FIELDS, Server, check, expect_status, run_cli, small


def parse_json(text, what):
    try:
        return json.loads(text)
    except ValueError:
        check(False, "JSON on stdout", text[:1500], what)


def test_run_subcommand_prints_a_done_experiment(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"variant": "async_v1", "size": "2^20", "streams": 2, "reps": 3, "warmup": 1}))
    code, out, err = run_cli(["run", str(spec), "--backend", "sim", "--db", str(tmp_path / "run.db")])
    check(code == 0, "exit 0", code, f"streamlab run\n  stderr: {err[-1500:]}")
    exp = parse_json(out, "streamlab run stdout")
    check(exp.get("status") == "done", "status done", exp.get("status"), "run output")
    for f in ("id", "spec", "machine_id", "created_at", "started_at", "finished_at", "error", "result"):
        check(f in exp, f"field {f!r}", sorted(exp), "run output")
    for f in SPEC_FIELDS:
        check(f in exp["spec"], f"spec field {f!r}", sorted(exp["spec"]), "run output spec")
    check(exp["spec"]["size"] == 1 << 20 and exp["spec"]["streams"] == 2, "size 1048576, 2 streams",
          exp["spec"], "run output spec")
    res = exp["result"]
    check(res["backend"] == "sim" and res["verified"] is True, "a verified sim result",
          {k: res.get(k) for k in ("backend", "verified")}, "run result")
    check(len(res["reps_ms"]) == 3, 3, len(res["reps_ms"]), "run result reps_ms")


def test_run_subcommand_stores_into_db_that_serve_then_shows(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(small()))
    db = tmp_path / "shared.db"
    code, out, err = run_cli(["run", str(spec), "--backend", "sim", "--db", str(db)])
    check(code == 0, "exit 0", code, f"streamlab run\n  stderr: {err[-1500:]}")
    eid = parse_json(out, "run stdout")["id"]
    srv = Server(tmp_path, name="after-run", db=db, workers=0)
    try:
        srv.start()
        got = expect_status(srv.get(f"/api/experiments/{eid}"), 200)
        check(got["status"] == "done", "done", got["status"], "the run's experiment seen by serve")
    finally:
        srv.cleanup()


def test_run_subcommand_with_invalid_spec_exits_nonzero_naming_the_field(tmp_path):
    spec = tmp_path / "bad.json"
    spec.write_text(json.dumps({"variant": "async_v1", "streams": 0}))
    code, out, err = run_cli(["run", str(spec), "--backend", "sim", "--db", str(tmp_path / "r.db")])
    check(code != 0, "a non-zero exit", code, "run with streams 0")
    check("streams" in out + err, 'an error naming "streams"', (out + err)[-1500:], "run with streams 0")
    body = None
    for text in (out, err):
        try:
            body = json.loads(text)
            break
        except ValueError:
            continue
    if body is None:  # JSON may follow log lines on stderr
        for line in (out + "\n" + err).splitlines():
            try:
                body = json.loads(line)
                break
            except ValueError:
                continue
    check(isinstance(body, dict) and isinstance(body.get("error"), dict) and body["error"].get("field") == "streams",
          '{"error": {..., "field": "streams"}} on stdout or stderr', (out + err)[-1500:],
          "run error JSON")


def test_run_subcommand_with_malformed_or_missing_file_exits_nonzero(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{\"variant\": ")
    code, out, err = run_cli(["run", str(bad), "--backend", "sim", "--db", str(tmp_path / "r.db")])
    check(code != 0, "a non-zero exit", code, "run with malformed JSON")
    code, out, err = run_cli(["run", str(tmp_path / "missing.json"), "--backend", "sim",
                              "--db", str(tmp_path / "r.db")])
    check(code != 0, "a non-zero exit", code, "run with a missing file")


def test_devices_subcommand_prints_the_machine_as_the_api_does(tmp_path):
    code, out, err = run_cli(["devices", "--backend", "sim"])
    check(code == 0, "exit 0", code, f"streamlab devices\n  stderr: {err[-1500:]}")
    m = parse_json(out, "devices stdout")
    check(isinstance(m, dict) and isinstance(m.get("id"), str), "a machine object with an id", m,
          "devices output")
    srv = Server(tmp_path, name="devices", workers=0)
    try:
        srv.start()
        api = expect_status(srv.get(f"/api/machines/{srv.health_machine()['id']}"), 200)
    finally:
        srv.cleanup()
    check(m["id"] == api["id"], api["id"], m["id"], "devices id == the server's machine id")
    # first_seen / last_seen belong to a store; `devices` has none
    want = sorted(set(api) - {"first_seen", "last_seen"})
    check(sorted(set(m) - {"first_seen", "last_seen"}) == want, want, sorted(m),
          "devices prints the API's machine fields")
    check(len(m["gpus"]) == len(api["gpus"]) == 1, "one simulated GPU in both",
          (len(m["gpus"]), len(api["gpus"])), "gpus")


def user_version(path):
    con = sqlite3.connect(str(path))
    try:
        return con.execute("PRAGMA user_version").fetchone()[0]
    finally:
        con.close()


def test_migrate_creates_a_fresh_database_and_is_idempotent(tmp_path):
    db = tmp_path / "m.db"
    code, out, err = run_cli(["migrate", "--db", str(db)])
    check(code == 0, "exit 0", code, f"migrate on a fresh db\n  {out[-800:]}{err[-800:]}")
    v = user_version(db)
    check(v >= 1, "PRAGMA user_version >= 1", v, "user_version after migrate")
    con = sqlite3.connect(str(db))
    mode = con.execute("PRAGMA journal_mode").fetchone()[0]
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    con.close()
    check(mode.lower() == "wal", "journal_mode wal", mode, "journal mode")
    check(len(tables) >= 4, "tables for machines, experiments, results, op events", sorted(tables),
          "schema")
    code, out, err = run_cli(["migrate", "--db", str(db)])
    check(code == 0, "exit 0", code, f"migrate on an up-to-date db\n  {out[-800:]}{err[-800:]}")
    check(user_version(db) == v, v, user_version(db), "user_version after a second migrate")


def _newer_db(path):
    con = sqlite3.connect(str(path))
    con.execute("CREATE TABLE from_the_future (x)")
    con.execute("PRAGMA user_version = 999")
    con.commit()
    con.close()


def test_migrate_refuses_a_database_from_a_newer_version(tmp_path):
    db = tmp_path / "future.db"
    _newer_db(db)
    code, out, err = run_cli(["migrate", "--db", str(db)])
    check(code != 0, "a non-zero exit", code, "migrate on user_version 999")
    text = (out + err).lower()
    check("newer" in text or "999" in text, "a message saying the database is newer (999)",
          (out + err)[-1500:], "migrate refusal message")
    check(user_version(db) == 999, 999, user_version(db), "user_version untouched")


def test_serve_refuses_a_database_from_a_newer_version(tmp_path):
    import subprocess
    from conftest import BIN, START_DEADLINE_S
    db = tmp_path / "future.db"
    _newer_db(db)
    web = tmp_path / "web"
    web.mkdir()
    from conftest import free_port
    try:
        p = subprocess.run([BIN, "serve", "--listen", f"127.0.0.1:{free_port()}", "--db", str(db),
                            "--web", str(web), "--backend", "sim"], capture_output=True,
                           timeout=START_DEADLINE_S)
    except subprocess.TimeoutExpired:
        check(False, "serve exits non-zero on a newer database", "it kept running",
              "serve on user_version 999")
    check(p.returncode != 0, "a non-zero exit instead of serving", p.returncode, "serve on user_version 999")
    text = (p.stdout + p.stderr).decode(errors="replace")
    check("newer" in text.lower() or "999" in text, "a message saying the database is newer",
          text[-1500:], "serve refusal message")
    check(user_version(db) == 999, 999, user_version(db), "user_version untouched")
