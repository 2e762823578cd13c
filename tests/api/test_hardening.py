"""Hardening: the corpus of bad requests in tests/data/bad_requests/cases.json, each sent
to the real server (started with STREAMLAB_TOKEN) with its expected status; every one is
answered, errors under /api are {"error": {"code", "message"}} JSON, the server stays up,
and the database is unchanged by all of them (the API's view and the SQLite file's row
counts, read with Python's sqlite3, read-only).

The requests go over a raw socket (not `requests`): paths are sent byte for byte (no
dot-segment clean-up of /../), bodies may be invalid UTF-8 or 10 MB, and a server that
answers before reading the whole body is fine. The helpers here (raw_http, TokenServer,
db_row_counts, make_web) are shared by test_hardening_*.py.
"""

import base64
import json
import os
import socket
import sqlite3
import subprocess
import time

import pytest
import requests

from conftest import (BIN, START_DEADLINE_S, HTTP_TIMEOUT_S, Server, check, small)

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_PATH = os.path.join(HERE, "..", "data", "bad_requests", "cases.json")
TOKEN = "hardening-test-token-5f1c"
SECRET = "STREAMLAB-SECRET-OUTSIDE-WEB"


# ---------------------------------------------------------------- raw HTTP

class RawReply:
    def __init__(self, status, reason, headers, body, note=""):
        self.status, self.reason, self.headers, self.body, self.note = status, reason, headers, body, note

    def header(self, name):
        return self.headers.get(name.lower())

    def json(self):
        try:
            return json.loads(self.body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None

    def describe(self):
        b = self.body[:400].decode("utf-8", "replace")
        return f"{self.status} {self.reason} {self.headers} {b!r}{' (' + self.note + ')' if self.note else ''}"


def _read_reply(sock, head_only=False):
    """Read one HTTP/1.x reply: status line, headers, a Content-Length body (or to EOF)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            if not buf:
                return None
            break
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise ValueError(f"not an HTTP reply: {buf[:200]!r}")
    status = int(parts[1])
    reason = parts[2] if len(parts) > 2 else ""
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if head_only or status in (204, 304) or 100 <= status < 200:
        return RawReply(status, reason, headers, b"")
    if "content-length" in headers:
        n = int(headers["content-length"])
        while len(rest) < n:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        return RawReply(status, reason, headers, rest[:n])
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            while b"\r\n" not in rest:
                chunk = sock.recv(65536)
                if not chunk:
                    return RawReply(status, reason, headers, body, "chunked body cut short")
                rest += chunk
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                rest += chunk
            body += rest[:size]
            rest = rest[size + 2:]
            if size == 0:
                return RawReply(status, reason, headers, body)
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return RawReply(status, reason, headers, rest)
        rest += chunk


def raw_http(port, method, path, headers=None, body=None, timeout=HTTP_TIMEOUT_S, raw=None):
    """One request on its own connection (Connection: close). `raw`: send these bytes
    instead of building a request. Returns a RawReply, or None when the server closed the
    connection without an answer. A server that answers before it has read a large body
    (413) and then closes is fine: the reply is read after a failed send."""
    if raw is None:
        hdrs = {"Host": f"127.0.0.1:{port}", "Connection": "close"}
        hdrs.update(headers or {})
        if body is not None and "Content-Length" not in hdrs and "Transfer-Encoding" not in hdrs:
            hdrs["Content-Length"] = str(len(body))
        head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"
        raw = head.encode("latin-1") + (body or b"")
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        try:
            sock.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered early; read what it said
        try:
            return _read_reply(sock, head_only=(method == "HEAD"))
        except ConnectionResetError:
            return None
    finally:
        sock.close()


# ---------------------------------------------------------------- servers with a token

class TokenServer(Server):
    """A Server whose process gets extra environment (STREAMLAB_TOKEN) and whose start-up
    poll may send a token (--private makes /api/health need it too)."""

    def __init__(self, tmp_path, env=None, poll_token=None, **kw):
        super().__init__(tmp_path, **kw)
        self.env = dict(env or {})
        self.poll_token = poll_token

    def start(self, **override):
        assert not override, "TokenServer.start takes no overrides"
        env = dict(os.environ)
        env.pop("STREAMLAB_TOKEN", None)
        env.update(self.env)
        headers = {"Authorization": f"Bearer {self.poll_token}"} if self.poll_token else {}
        last = ""
        for _ in range(5):
            self.port = _free_port()
            self.starts += 1
            self.log_path = self.dir / f"{self.name}.{self.starts}.stderr"
            self.log_checked = 0
            self.argv = [BIN, "serve", "--listen", f"127.0.0.1:{self.port}", "--db", self.db,
                         "--web", self.web, "--backend", "sim"] + self.opts
            with open(self.log_path, "wb") as log:
                self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, env=env)
            deadline = time.monotonic() + START_DEADLINE_S
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    if requests.get(self.url("/api/health"), headers=headers, timeout=2).status_code == 200:
                        return self
                except requests.RequestException:
                    pass
                time.sleep(0.02)
            last = self.log_tail()
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
                pytest.fail(f"server did not answer /api/health within {START_DEADLINE_S}s\n"
                            f"  argv: {' '.join(self.argv)}\n  stderr:\n{last}", pytrace=False)
            if "in use" not in last.lower() and "listen" not in last.lower():
                break
        pytest.fail(f"server exited at start (code {self.proc.returncode})\n  argv: "
                    f"{' '.join(self.argv)}\n  stderr:\n{last}", pytrace=False)

    def auth(self, token=None):
        return {"Authorization": f"Bearer {token or TOKEN}"}


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_web(root):
    """A web dir with files of each type, a subfolder, and two symlinks out of it (to a
    file that holds SECRET, and to the parent folder)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "secret.txt").write_text(SECRET + "\n")
    web = root / "web"
    (web / "sub").mkdir(parents=True, exist_ok=True)
    (web / "index.html").write_text("<!doctype html><title>streamlab test</title><p>streamlab-test-index</p>\n")
    (web / "app.js").write_text("export const answer = 42;\n")
    (web / "style.css").write_text("body { margin: 0 }\n")
    (web / "logo.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>\n')
    (web / "data.bin").write_bytes(b"\x00\x01\x02")
    (web / "sub" / "data.json").write_text('{"a": 1}\n')
    for name, target in (("escape.txt", root / "secret.txt"), ("up", root)):
        link = web / name
        if not link.is_symlink():
            os.symlink(target, link)
    return web


# ---------------------------------------------------------------- the database

def db_row_counts(path):
    """Row count of every table of the SQLite file, opened read-only."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        con.close()


def api_snapshot(srv):
    """What the API shows: every experiment (limit=500 pages), the machines, the queue."""
    exps = srv.list_all()
    return {"experiments": exps, "machines": srv.machines(), "queue_depth": srv.health()["queue_depth"]}


def expect_error_shape(reply, what):
    body = reply.json()
    ct = (reply.header("content-type") or "").replace(" ", "").lower()
    check(ct == "application/json;charset=utf-8", "Content-Type: application/json; charset=utf-8",
          reply.header("content-type"), f"{what}: error content type\n  reply: {reply.describe()}")
    err = body.get("error") if isinstance(body, dict) else None
    check(isinstance(err, dict) and isinstance(err.get("code"), str) and err["code"]
          and isinstance(err.get("message"), str) and err["message"],
          '{"error": {"code": "...", "message": "..."}}', body, f"{what}: error body\n  reply: {reply.describe()}")
    return err


# ---------------------------------------------------------------- the corpus

def load_cases():
    with open(CASES_PATH) as f:
        doc = json.load(f)
    return doc["cases"]


CASES = load_cases()


def case_body(case):
    if "body" in case:
        return case["body"].encode("utf-8")
    if "body_json" in case:
        return json.dumps(case["body_json"]).encode()
    if "body_b64" in case:
        return base64.b64decode(case["body_b64"])
    if "generated" in case:
        g = case["generated"]
        piece = g["repeat"].encode("utf-8")
        data = g.get("prefix", "").encode() + piece * g["count"] + g.get("suffix", "").encode()
        return data
    return None


def case_request(case, port, ids):
    """The request bytes of a case: path placeholders filled, the token as the case says."""
    path = case["path"]
    for k, v in ids.items():
        path = path.replace("{" + k + "}", v)
    headers = dict(case.get("headers", {}))
    auth = case.get("auth", "good")
    if auth == "good":
        headers.setdefault("Authorization", f"Bearer {TOKEN}")
    elif auth == "wrong":
        headers["Authorization"] = f"Bearer {TOKEN}x"
    elif auth != "none":
        headers["Authorization"] = auth  # a literal header value
    body = case_body(case)
    if case.get("chunked") and body is not None:
        headers["Transfer-Encoding"] = "chunked"
        pieces = [body[i:i + 65536] for i in range(0, len(body), 65536)]
        body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"
    if case.get("raw"):
        return path, None, case["raw"].encode("latin-1")
    return path, headers, body


@pytest.fixture(scope="module")
def corpus_server(tmp_path_factory):
    """One server with STREAMLAB_TOKEN and no workers, holding a done experiment (run before
    the restart that took its worker away), a queued one, and a sweep. The snapshot before
    any case is kept for test_the_corpus_changed_nothing."""
    root = tmp_path_factory.mktemp("corpus")
    web = make_web(root)
    srv = TokenServer(root, name="corpus", web=web, env={"STREAMLAB_TOKEN": TOKEN}, workers=1)
    srv.start()
    auth = srv.auth()
    r = requests.post(srv.url("/api/experiments"), json=small(label="done one"), headers=auth, timeout=30)
    assert r.status_code == 202, r.text
    done_id = r.json()["id"]
    srv.wait_done(done_id)
    srv.stop()
    srv.opts[srv.opts.index("--workers") + 1] = "0"
    srv.start()
    r = requests.post(srv.url("/api/experiments"), json=small(label="queued one"), headers=auth, timeout=30)
    assert r.status_code == 202, r.text
    queued_id = r.json()["id"]
    r = requests.post(srv.url("/api/sweeps"), json={"base": small(), "axes": {"streams": [1, 2]}}, headers=auth,
                      timeout=30)
    assert r.status_code == 202, r.text
    sweep_id = r.json()["id"]
    srv.ids = {"done_id": done_id, "queued_id": queued_id, "sweep_id": sweep_id,
               "machine_id": srv.machine_id()}
    srv.before_api = api_snapshot(srv)
    srv.before_rows = db_row_counts(srv.db)
    srv.answered = []
    yield srv
    srv.cleanup()


def _param(case):
    """A case marked "known_bug" (an open bug, named) is a strict xfail: it must fail, and
    once the bug is fixed it fails the suite until the mark is removed."""
    marks = [pytest.mark.xfail(reason=case["known_bug"], strict=True)] if case.get("known_bug") else []
    return pytest.param(case, id=case["name"], marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_bad_request_is_refused_with_its_status(corpus_server, case):
    srv = corpus_server
    if not srv.alive():
        pytest.fail(f"the server is down before case {case['name']}\n{srv.log_tail()}", pytrace=False)
    path, headers, body = case_request(case, srv.port, srv.ids)
    what = f"case {case['name']}: {case['method']} {path[:120]}"
    if headers is None:
        reply = raw_http(srv.port, case["method"], path, raw=body)
    else:
        reply = raw_http(srv.port, case["method"], path, headers=headers, body=body)
    check(srv.alive(), "the server still running", f"exited ({srv.proc.returncode})\n{srv.log_tail()}", what)
    expect = case["expect"]
    allowed = expect if isinstance(expect, list) else [expect]
    if reply is None:
        check(case.get("may_close", False), f"an answer with status {allowed}",
              "the connection closed without an answer", what)
        return
    srv.answered.append(case["name"])
    check(reply.status in allowed, f"status {allowed}", reply.describe(), what)
    if SECRET.encode() in reply.body:
        pytest.fail(f"{what}: served a file from outside web/: {reply.describe()}", pytrace=False)
    if case.get("mhd"):
        return  # refused by libmicrohttpd itself (its own HTML page)
    api = path.startswith("/api") or path.startswith("/metrics")
    if api and reply.status >= 400:
        err = expect_error_shape(reply, what)
        if "field" in case:
            check(err.get("field") == case["field"], f"error.field {case['field']!r}", err.get("field"), what)
    if reply.status == 405:
        check(bool(reply.header("allow")), "an Allow header", reply.headers, what)
    if reply.status == 401:
        check((reply.header("www-authenticate") or "").startswith("Bearer"), "WWW-Authenticate: Bearer ...",
              reply.header("www-authenticate"), what)
    if not api and reply.status == 404:
        ct = reply.header("content-type") or ""
        check(ct.startswith("text/html"), "a 404 HTML page outside /api", reply.describe(), what)


def test_the_corpus_changed_nothing_and_the_server_is_up(corpus_server):
    """After every case (run first, in file order): health answers, the API shows the same
    experiments, machines and queue, and the SQLite file has the same row counts."""
    srv = corpus_server
    check(srv.alive(), "the server running after the corpus", "it exited", "server after the corpus")
    h = srv.health()
    check(h["status"] == "ok", "ok", h, "health after the corpus")
    after_api = api_snapshot(srv)
    check(after_api == srv.before_api, srv.before_api, after_api, "the API's view of the store after the corpus")
    after_rows = db_row_counts(srv.db)
    check(after_rows == srv.before_rows, srv.before_rows, after_rows,
          "row counts of every table (sqlite3, read-only) after the corpus")
    con = sqlite3.connect(f"file:{srv.db}?mode=ro", uri=True, timeout=30)
    try:
        ok = con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()
    check(ok == "ok", "ok", ok, "PRAGMA integrity_check after the corpus")
