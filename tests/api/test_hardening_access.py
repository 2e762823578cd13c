"""Hardening, access: with a token (STREAMLAB_TOKEN or --token-file) every POST and DELETE
needs "Authorization: Bearer <token>" (401 otherwise) while reads stay open; --private
closes the reads too (the dashboard's files stay open: it must load to ask for the
token); a non-loopback listen address without a token is refused at start."""

import os
import subprocess

import pytest
import requests

from conftest import BIN, START_DEADLINE_S, check, expect_error, expect_status, small
from test_hardening import TOKEN, TokenServer, _free_port, make_web


@pytest.fixture
def make_token_server(tmp_path):
    made = []

    def make(name=None, **kw):
        srv = TokenServer(tmp_path, name=name or f"tok{len(made)}", **kw)
        made.append(srv)
        srv.start()
        return srv

    yield make
    for srv in made:
        srv.cleanup()


def expect_401(resp, what):
    err = expect_error(resp, 401)
    check(resp.headers.get("WWW-Authenticate", "").startswith("Bearer"), "WWW-Authenticate: Bearer ...",
          resp.headers.get("WWW-Authenticate"), what)
    return err


def test_token_needed_for_post_and_delete_reads_stay_open(make_token_server):
    srv = make_token_server(env={"STREAMLAB_TOKEN": TOKEN}, workers=0)
    good = {"Authorization": f"Bearer {TOKEN}"}
    for label, headers in (("no Authorization", {}), ("a wrong token", {"Authorization": f"Bearer {TOKEN}-"}),
                           ("a token of another scheme", {"Authorization": f"Basic {TOKEN}"})):
        r = srv.post("/api/experiments", small(), headers=headers)
        expect_401(r, f"POST /api/experiments with {label}")
        r = srv.post("/api/sweeps", {"base": small(), "axes": {"streams": [1, 2]}}, headers=headers)
        expect_401(r, f"POST /api/sweeps with {label}")
    check(srv.list_all() == [], [], srv.list_all(), "experiments stored by refused POSTs")
    r = srv.post("/api/experiments", small(), headers=good)
    exp = expect_status(r, 202)
    eid = exp["id"]
    for label, headers in (("no Authorization", {}), ("a wrong token", {"Authorization": "Bearer x"})):
        expect_401(srv.delete(f"/api/experiments/{eid}", headers=headers), f"DELETE with {label}")
    check(srv.experiment(eid)["status"] == "queued", "queued (the refused DELETEs changed nothing)",
          srv.experiment(eid)["status"], "experiment after refused cancels")
    for path in ("/api/health", "/api/machines", "/api/experiments", f"/api/experiments/{eid}", "/metrics", "/"):
        r = srv.get(path)
        check(r.status_code == 200, f"200 for GET {path} without a token (reads stay open)", r.status_code,
              f"GET {path}")
    body = expect_status(srv.delete(f"/api/experiments/{eid}", headers=good), 200)
    check(body["status"] == "cancelled", "cancelled", body["status"], "DELETE with the token")


def test_private_makes_reads_need_the_token_too(make_token_server):
    srv = make_token_server(env={"STREAMLAB_TOKEN": TOKEN}, poll_token=TOKEN, workers=0, extra=("--private",))
    good = {"Authorization": f"Bearer {TOKEN}"}
    eid = expect_status(srv.post("/api/experiments", small(), headers=good), 202)["id"]
    for path in ("/api/health", "/api/machines", "/api/experiments", f"/api/experiments/{eid}",
                 "/api/experiments?limit=5", "/metrics", "/api/sweeps/s-nope", "/api/export?experiment=" + eid):
        expect_401(srv.get(path), f"GET {path} without the token under --private")
        expect_401(srv.get(path, headers={"Authorization": "Bearer wrong"}), f"GET {path} with a wrong token")
    for path in ("/api/health", f"/api/experiments/{eid}", "/metrics"):
        r = srv.get(path, headers=good)
        check(r.status_code == 200, 200, r.status_code, f"GET {path} with the token under --private")
    r = srv.get("/")
    check(r.status_code == 200 and "streamlab-test-index" in r.text,
          "the dashboard page without a token (it asks for the token)", f"{r.status_code} {r.text[:200]}",
          "GET / under --private")


def test_token_file_is_read(make_token_server, tmp_path):
    path = tmp_path / "token.txt"
    path.write_text("file-token-77\n")
    srv = make_token_server(workers=0, extra=("--token-file", str(path)))
    expect_401(srv.post("/api/experiments", small()), "POST without the token from --token-file")
    expect_401(srv.post("/api/experiments", small(), headers={"Authorization": "Bearer file-token-7"}),
               "POST with the token cut short")
    expect_status(srv.post("/api/experiments", small(), headers={"Authorization": "Bearer file-token-77"}), 202)


def test_token_file_unreadable_or_empty_refused_at_start(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    for label, arg in (("a missing file", str(tmp_path / "nope.txt")), ("an empty file", str(empty))):
        p = subprocess.run([BIN, "serve", "--listen", f"127.0.0.1:{_free_port()}", "--db", str(tmp_path / "t.db"),
                            "--token-file", arg], capture_output=True, timeout=START_DEADLINE_S)
        err = p.stderr.decode("utf-8", "replace")
        check(p.returncode != 0 and "token" in err.lower(), "a non-zero exit naming the token file",
              f"exit {p.returncode}, stderr {err!r}", f"--token-file with {label}")


@pytest.mark.parametrize("listen", ["0.0.0.0", "[::]", "0", ""])
def test_non_loopback_without_token_is_refused_at_start(tmp_path, listen):
    """Refused before it binds: nothing listens on the address, whatever the port."""
    env = dict(os.environ)
    env.pop("STREAMLAB_TOKEN", None)
    port = _free_port()
    argv = [BIN, "serve", "--listen", f"{listen}:{port}", "--db", str(tmp_path / "t.db"),
            "--web", str(make_web(tmp_path)), "--backend", "sim", "--workers", "0"]
    try:
        p = subprocess.run(argv, capture_output=True, timeout=START_DEADLINE_S, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(argv)} kept running (it must refuse to start without a token)", pytrace=False)
    err = p.stderr.decode("utf-8", "replace")
    check(p.returncode != 0, "a non-zero exit", p.returncode, f"serve --listen {listen}:{port} without a token")
    check("token" in err.lower() and "127.0.0.1" in err, "a message naming the token and 127.0.0.1", err,
          f"stderr of serve --listen {listen}:{port}")
    try:
        requests.get(f"http://127.0.0.1:{port}/api/health", timeout=2)
        pytest.fail(f"something answered on port {port} after the refused start", pytrace=False)
    except requests.ConnectionError:
        pass
