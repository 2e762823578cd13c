"""Health, machines, static files and configuration (flags and STREAMLAB_* environment)."""

import os
import subprocess
import time

import pytest
import requests

from conftest import (BIN, START_DEADLINE_S, Server, check, describe, expect_error,
                      expect_json_content_type, expect_status, free_port, small)


def test_health_reports_ok_version_sim_backend_one_device_empty_queue(server):
    r = server.get("/api/health")
    body = expect_status(r, 200)
    expect_json_content_type(r)
    check(body.get("status") == "ok", '"status": "ok"', body.get("status"), "health status")
    check(isinstance(body.get("version"), str) and body["version"], "a non-empty version string",
          body.get("version"), "health version")
    check(body.get("backend") == "sim", '"backend": "sim"', body.get("backend"), "health backend")
    check(body.get("devices") == 1, '"devices": 1 (one simulated H100 by default)',
          body.get("devices"), "health devices")
    check(body.get("queue_depth") == 0, '"queue_depth": 0 on a fresh store',
          body.get("queue_depth"), "health queue_depth")


def test_health_counts_sim_devices_flag(make_server):
    srv = make_server(sim_devices=2)
    body = srv.health()
    check(body.get("devices") == 2, '"devices": 2 with --sim-devices 2', body.get("devices"),
          "health devices")


def test_health_queue_depth_counts_queued_experiments(idle_server):
    for _ in range(3):
        idle_server.create(small())
    body = idle_server.health()
    check(body.get("queue_depth") == 3, "queue_depth 3 after queueing 3 with --workers 0",
          body.get("queue_depth"), "health queue_depth")


def test_machines_list_holds_this_machine_and_get_by_id_returns_it(server):
    r = server.get("/api/machines")
    expect_status(r, 200)
    expect_json_content_type(r)
    machines = server.machines()
    own = [m for m in machines if "profile" not in m]  # besides the embedded profiles' machines
    check(len(own) == 1, "exactly one machine of its own in a fresh store", [m.get("id") for m in machines],
          "GET /api/machines")
    m = own[0]
    check(machines[0] is m, "this machine listed first (seen last)", [x.get("id") for x in machines],
          "GET /api/machines order")
    check(m["id"] == expect_status(r, 200)["this"], "this machine's id in \"this\"", m["id"], "GET /api/machines")
    check(isinstance(m.get("id"), str) and m["id"], "a machine with a string id", m,
          "GET /api/machines item")
    r = server.get(f"/api/machines/{m['id']}")
    one = expect_status(r, 200)
    expect_json_content_type(r)
    check(one.get("id") == m["id"], f"id {m['id']}", one.get("id"), "GET /api/machines/{id}")


def test_machine_describes_the_simulated_gpu_with_calibration(server):
    m = server.health_machine()
    one = expect_status(server.get(f"/api/machines/{m['id']}"), 200)
    gpus = one.get("gpus", one.get("devices"))
    check(isinstance(gpus, list) and len(gpus) == 1,
          'a list of GPUs ("gpus" or "devices") with the one simulated device', one,
          "machine JSON")
    text = str(one).lower()
    check("calibration" in text or "h2d" in text, "calibration (H2D, D2H, bidirectional GB/s)",
          one, "machine JSON")
    cal = gpus[0].get("calibration") or {}
    per_round, base = (cal.get("kernel_ns_per_elem") or {}).get("compute"), cal.get("compute_base_ns_per_elem")
    check(isinstance(per_round, float) and per_round > 0 and isinstance(base, float) and 0 <= base < 16 * per_round,
          "a compute kernel's cost per round > 0 and its base within 0 and 16 rounds' cost", (per_round, base),
          "calibration kernel_ns_per_elem.compute, compute_base_ns_per_elem")


def test_experiment_machine_id_names_a_known_machine(idle_server):
    exp = idle_server.create(small())
    mid = idle_server.health_machine()["id"]
    check(exp.get("machine_id") == mid, f"machine_id {mid}", exp.get("machine_id"),
          "experiment machine_id")


def test_machine_label_flag_is_shown_in_the_machine(make_server):
    srv = make_server(machine_label="bench-rig-7")
    m = srv.health_machine()
    one = expect_status(srv.get(f"/api/machines/{m['id']}"), 200)
    check("bench-rig-7" in str(one), "the --machine-label text in the machine JSON", one,
          "GET /api/machines/{id}")


def test_unknown_machine_is_404_json(server):
    expect_error(server.get("/api/machines/no-such-machine"), 404)


def test_static_index_is_served_from_web_dir(server):
    r = server.get("/")
    check(r.status_code == 200, 200, r.status_code, f"GET /\n  {describe(r)}")
    check("text/html" in r.headers.get("Content-Type", ""), "Content-Type text/html",
          r.headers.get("Content-Type"), "GET / content type")
    check("streamlab-test-index" in r.text, "the index.html of --web", r.text[:200], "GET / body")


def test_unknown_api_path_is_404_json(server):
    expect_error(server.get("/api/no-such-thing"), 404)
    expect_error(server.get("/api/experiments/x/y/z"), 404)


def _start_with_env(tmp_path, env_over, args):
    env = dict(os.environ)
    env.update(env_over)
    log = open(tmp_path / "env.stderr", "wb")
    proc = subprocess.Popen([BIN, "serve"] + args, env=env, stdout=log, stderr=subprocess.STDOUT)
    return proc, log


def _wait_health(port, proc):
    end = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < end and proc.poll() is None:
        try:
            r = requests.get(f"http://127.0.0.1:{port}/api/health", timeout=2)
            if r.status_code == 200:
                return r.json()
        except requests.RequestException:
            pass
        time.sleep(0.02)
    return None


def _stop(proc):
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=60)
    return proc.returncode


def test_environment_sets_listen_db_and_backend(tmp_path):
    port = free_port()
    db = tmp_path / "env.db"
    web = tmp_path / "web"
    web.mkdir()
    proc, log = _start_with_env(tmp_path, {
        "STREAMLAB_LISTEN": f"127.0.0.1:{port}", "STREAMLAB_DB": str(db),
        "STREAMLAB_WEB": str(web), "STREAMLAB_BACKEND": "sim"}, [])
    try:
        health = _wait_health(port, proc)
        check(health is not None, f"a server on STREAMLAB_LISTEN port {port}",
              (tmp_path / "env.stderr").read_text(errors="replace")[-2000:], "env listen")
        check(health.get("backend") == "sim", "backend sim from STREAMLAB_BACKEND",
              health.get("backend"), "env backend")
        check(db.exists(), f"the database at STREAMLAB_DB {db}", os.listdir(tmp_path), "env db")
    finally:
        code = _stop(proc)
        log.close()
    check(code == 0, "exit code 0 after SIGTERM", code, "env-configured server shutdown")


def test_flags_override_environment(tmp_path):
    env_port, flag_port = free_port(), free_port()
    env_db, flag_db = tmp_path / "from-env.db", tmp_path / "from-flag.db"
    web = tmp_path / "web"
    web.mkdir()
    proc, log = _start_with_env(
        tmp_path, {"STREAMLAB_LISTEN": f"127.0.0.1:{env_port}", "STREAMLAB_DB": str(env_db),
                   "STREAMLAB_BACKEND": "sim"},
        ["--listen", f"127.0.0.1:{flag_port}", "--db", str(flag_db), "--web", str(web)])
    try:
        health = _wait_health(flag_port, proc)
        check(health is not None, f"the server on the --listen port {flag_port}",
              (tmp_path / "env.stderr").read_text(errors="replace")[-2000:], "flag listen")
        check(flag_db.exists() and not env_db.exists(), "only the --db file created",
              sorted(os.listdir(tmp_path)), "flag db over STREAMLAB_DB")
    finally:
        code = _stop(proc)
        log.close()
    check(code == 0, "exit code 0 after SIGTERM", code, "server shutdown")


def test_sigterm_stops_the_server_with_exit_code_zero(server):
    server.health()
    server.stop(expect_code=0)
