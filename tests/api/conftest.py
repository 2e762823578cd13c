"""conftest.py — the harness of the API suite: starts the real streamlab binary
($STREAMLAB_BIN) on a free loopback port with a temporary database, talks to it over
real HTTP, and checks its stderr for sanitizer reports.

What it must not do: sleep a fixed time waiting for work (everything polls with a
deadline), or assert how long anything takes. Every check prints what was expected and
what came back, with the request that produced it.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import requests

BIN = os.environ.get("STREAMLAB_BIN", "")

# Deadlines only stop a broken test from hanging; they are never the thing tested.
# Under sanitizers everything is slower, so they are stretched.
SLOW = 4.0 if os.environ.get("SUITE_PREFIX", "").startswith("asan") else 1.0
START_DEADLINE_S = 30 * SLOW
RUN_DEADLINE_S = 180 * SLOW
STOP_DEADLINE_S = 60 * SLOW
HTTP_TIMEOUT_S = 60 * SLOW

SANITIZER_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer")

TERMINAL = ("done", "failed", "cancelled")

# Every field of API.md's "Experiment spec" and its default (the example values; chunks
# defaults to streams; label is free text whose default is empty).
SPEC_DEFAULTS = {
    "size": 33554432,
    "streams": 8,
    "chunks": 8,
    "kernel": "blog",
    "kernel_iters": 1,
    "block_size": 256,
    "launch": "chunk",
    "host_memory": "pinned",
    "default_stream": "per_thread",
    "stream_flags": "default",
    "flush": "none",
    "driver_mode": "auto",
    "timing": "events",
    "trace_ops": "sampled",
    "reps": 10,
    "warmup": 2,
    "devices": [0],
    "backend": "auto",
}
SPEC_FIELDS = ["variant"] + list(SPEC_DEFAULTS) + ["label"]

RESULT_NUMBERS = ("h2d_ms", "kernel_ms", "d2h_ms", "h2d_gbps", "d2h_gbps", "overlap",
                  "floor_ms", "efficiency")
RESULT_OPTIONAL_NUMBERS = ("predicted_ms", "prediction_error")  # "where one exists"
STATS_FIELDS = ("median", "min", "max", "mean", "stddev")

EXPERIMENT_FIELDS = ("id", "status", "spec", "machine_id", "sweep_id", "created_at",
                     "started_at", "finished_at", "error", "result")

# A small experiment that the sim finishes quickly.
SMALL = {"size": 1 << 20, "reps": 3, "warmup": 1}


def small(variant="async_v1", **over):
    spec = {"variant": variant}
    spec.update(SMALL)
    spec.update(over)
    return spec


# ---------------------------------------------------------------- assertions

def describe(resp):
    """The request and the answer, for failure messages."""
    req = resp.request
    body = req.body
    if isinstance(body, bytes):
        body = body[:300].decode("utf-8", "replace")
    elif isinstance(body, str):
        body = body[:300]
    text = resp.text
    if len(text) > 600:
        text = text[:600] + "..."
    return (f"{req.method} {req.url}" + (f" body={body!r}" if body else "")
            + f"\n  -> {resp.status_code} {dict(resp.headers)}\n  {text}")


def check(cond, expected, actual, what):
    if not cond:
        pytest.fail(f"{what}\n  expected: {expected}\n  actual:   {actual}", pytrace=False)


def json_of(resp):
    try:
        return resp.json()
    except ValueError:
        pytest.fail(f"expected a JSON body\n  {describe(resp)}", pytrace=False)


def expect_status(resp, status):
    """Assert the status (an int or a tuple of acceptable ones); return the JSON body."""
    ok = resp.status_code in status if isinstance(status, tuple) else resp.status_code == status
    if not ok:
        pytest.fail(f"expected status {status}, got {resp.status_code}\n  {describe(resp)}",
                    pytrace=False)
    if resp.status_code == 204:
        return None
    return json_of(resp)


def expect_json_content_type(resp):
    ct = resp.headers.get("Content-Type", "")
    norm = ct.replace(" ", "").lower()
    check(norm == "application/json;charset=utf-8", "Content-Type: application/json; charset=utf-8",
          f"Content-Type: {ct!r}", f"content type of {resp.request.method} {resp.request.url}")


def expect_error(resp, status, field=None, field_contains=None, no_field=False):
    """An error answer exactly as API.md says: the status, a JSON body
    {"error": {"code", "message", "field"?}}, field naming the field at fault."""
    body = expect_status(resp, status)
    expect_json_content_type(resp)
    where = describe(resp)
    check(isinstance(body, dict) and isinstance(body.get("error"), dict),
          '{"error": {"code": ..., "message": ..., "field": ...}}', body, f"error shape\n  {where}")
    err = body["error"]
    check(isinstance(err.get("code"), str) and err["code"] != "", "error.code a non-empty string",
          err.get("code"), f"error.code\n  {where}")
    check(isinstance(err.get("message"), str) and err["message"] != "",
          "error.message a non-empty string", err.get("message"), f"error.message\n  {where}")
    if field is not None:
        check(err.get("field") == field, f"error.field == {field!r}", err.get("field"),
              f"error.field\n  {where}")
    if field_contains is not None:
        check(isinstance(err.get("field"), str) and field_contains in err["field"],
              f"error.field containing {field_contains!r}", err.get("field"),
              f"error.field\n  {where}")
    if no_field:
        check("field" not in err or err["field"] in (None, ""), "no error.field",
              err.get("field"), f"error.field\n  {where}")
    return err


def close(a, b, rel=0.02, abs_=0.011):
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def intervals_intersect(a, b):
    return a["start_us"] < b["end_us"] and b["start_us"] < a["end_us"]


# ---------------------------------------------------------------- the server

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sanitizer_report(text):
    for mark in SANITIZER_MARKS:
        i = text.find(mark)
        if i >= 0:
            return text[max(0, i - 200): i + 3000]
    return None


def run_bench_tool(script, args, out_dir, kept):
    """bench/SCRIPT ARGS... run from the repository's root (its servers write their logs to
    out_dir, each checked for a sanitizer report): (the finished process, out_dir/KEPT's JSON or
    None where it wrote none)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([sys.executable, os.path.join(root, "bench", script)] + list(args), capture_output=True,
                       text=True, timeout=RUN_DEADLINE_S, cwd=root)
    for log in out_dir.glob("*-server.log"):
        rep = sanitizer_report(log.read_text(errors="replace"))
        check(not rep, "no sanitizer report", rep, str(log))
    path = out_dir / kept
    return p, json.loads(path.read_text()) if path.exists() else None


class Server:
    """One `streamlab serve` process on a free port with its own database."""

    all_started = []

    def __init__(self, tmp_path, name="srv", db=None, web=None, workers=None, sim_devices=None,
                 queue_max=None, sweep_max=None, body_max=None, machine_label=None, extra=()):
        self.dir = tmp_path
        self.name = name
        self.db = str(db or tmp_path / f"{name}.db")
        if web is None:
            web = tmp_path / "web"
            web.mkdir(exist_ok=True)
            (web / "index.html").write_text(
                "<!doctype html><title>streamlab test</title><p>streamlab-test-index</p>\n")
        self.web = str(web)
        self.opts = []
        for flag, value in (("--workers", workers), ("--sim-devices", sim_devices),
                            ("--queue-max", queue_max), ("--sweep-max", sweep_max),
                            ("--body-max", body_max), ("--machine-label", machine_label)):
            if value is not None:
                self.opts += [flag, str(value)]
        self.opts += list(extra)
        self.proc = None
        self.port = None
        self.starts = 0
        self.log_path = None
        self.log_checked = 0
        Server.all_started.append(self)

    # -- lifecycle
    def start(self, **override):
        """Start (or restart, on the same database) and wait until /api/health answers."""
        if override:
            for flag, value in override.items():
                flag = "--" + flag.replace("_", "-")
                if flag in self.opts:
                    i = self.opts.index(flag)
                    del self.opts[i:i + 2]
                if value is not None:
                    self.opts += [flag, str(value)]
        last = None
        for _ in range(5):  # a free port can be taken between choosing and binding it
            self.port = free_port()
            self.starts += 1
            self.log_path = self.dir / f"{self.name}.{self.starts}.stderr"
            self.log_checked = 0
            argv = [BIN, "serve", "--listen", f"127.0.0.1:{self.port}", "--db", self.db,
                    "--web", self.web, "--backend", "sim"] + self.opts
            self.argv = argv
            with open(self.log_path, "wb") as log:
                self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL)
            deadline = time.monotonic() + START_DEADLINE_S
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    r = requests.get(self.url("/api/health"), timeout=2)
                    if r.status_code == 200:
                        return self
                except requests.RequestException:
                    pass
                time.sleep(0.02)
            last = self.log_tail()
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
                pytest.fail(f"server did not answer /api/health within {START_DEADLINE_S}s\n"
                            f"  argv: {' '.join(argv)}\n  stderr:\n{last}", pytrace=False)
            if "address" not in last.lower() and "bind" not in last.lower() and "in use" not in last.lower():
                break
        pytest.fail(f"server exited at start (code {self.proc.returncode})\n  argv: "
                    f"{' '.join(self.argv)}\n  stderr:\n{last}", pytrace=False)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, expect_code=0):
        """SIGTERM, wait; the server must have been alive and must exit with expect_code."""
        if self.proc is None:
            return None
        proc, self.proc = self.proc, None
        if proc.poll() is not None:
            pytest.fail(f"server had died before the test stopped it (exit code {proc.returncode})\n"
                        f"  argv: {' '.join(self.argv)}\n  stderr:\n{self.log_tail(proc_done=True)}",
                        pytrace=False)
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=STOP_DEADLINE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail(f"server did not exit within {STOP_DEADLINE_S}s of SIGTERM\n"
                        f"  stderr:\n{self.log_tail()}", pytrace=False)
        self.check_sanitizers()
        if expect_code is not None:
            check(code == expect_code, f"exit code {expect_code} after SIGTERM", code,
                  f"graceful shutdown\n  stderr:\n{self.log_tail()}")
        return code

    def kill9(self):
        proc, self.proc = self.proc, None
        assert proc is not None and proc.poll() is None, "server not running when kill -9 was due"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.check_sanitizers()

    def cleanup(self):
        """Teardown: stop if still running, without masking a test's own failure."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=STOP_DEADLINE_S)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None
        self.check_sanitizers()

    # -- logs
    def log_text(self):
        if self.log_path is None or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def log_tail(self, n=4000, proc_done=False):
        t = self.log_text()
        return t[-n:]

    def check_sanitizers(self):
        """Fail if the server's stderr holds a sanitizer report not yet seen."""
        text = self.log_text()
        new = text[self.log_checked:]
        self.log_checked = len(text)
        rep = sanitizer_report(new)
        if rep:
            pytest.fail(f"sanitizer report in the server's stderr ({self.log_path}):\n{rep}",
                        pytrace=False)

    # -- HTTP
    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def request(self, method, path, **kw):
        """One HTTP request; a server that does not answer fails the test with its stderr."""
        kw.setdefault("timeout", HTTP_TIMEOUT_S)
        if self.proc is not None and self.proc.poll() is not None:
            pytest.fail(f"{method} {path}: the server is not running (exit code {self.proc.returncode})"
                        f"\n  stderr:\n{self.log_tail()}", pytrace=False)
        try:
            return requests.request(method, self.url(path), **kw)
        except requests.RequestException as e:
            end = time.monotonic() + 2  # a dying server may still be writing its report
            while self.alive() and time.monotonic() < end:
                time.sleep(0.02)
            state = "running" if self.alive() else f"exited, code {self.proc and self.proc.returncode}"
            pytest.fail(f"{method} {path}: no HTTP answer ({type(e).__name__}: {e})\n  server {state}"
                        f"\n  stderr:\n{self.log_tail()}", pytrace=False)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def post(self, path, body=None, raw=None, content_type="application/json", **kw):
        headers = dict(kw.pop("headers", {}))
        if content_type is not None:
            headers["Content-Type"] = content_type
        data = raw if raw is not None else json.dumps(body).encode()
        return self.request("POST", path, data=data, headers=headers, **kw)

    # -- the API, checked on the way
    def health(self):
        r = self.get("/api/health")
        return expect_status(r, 200)

    def create(self, spec):
        r = self.post("/api/experiments", spec)
        exp = expect_status(r, 202)
        check(isinstance(exp, dict) and isinstance(exp.get("id"), str) and exp["id"],
              "the experiment with a string id", exp, f"POST /api/experiments\n  {describe(r)}")
        return exp

    def experiment(self, eid):
        return expect_status(self.get(f"/api/experiments/{eid}"), 200)

    def wait_status(self, eid, statuses=TERMINAL, deadline_s=RUN_DEADLINE_S):
        """Poll until the experiment's status is one of statuses (never a fixed sleep)."""
        end = time.monotonic() + deadline_s
        exp = None
        while time.monotonic() < end:
            exp = self.experiment(eid)
            if exp.get("status") in statuses:
                return exp
            if not self.alive():
                pytest.fail(f"server died while waiting for {eid}\n  stderr:\n{self.log_tail()}",
                            pytrace=False)
            time.sleep(0.02)
        pytest.fail(f"experiment {eid} did not reach {statuses} within the {deadline_s}s deadline;"
                    f" last: {json.dumps(exp)[:800]}", pytrace=False)

    def wait_done(self, eid, deadline_s=RUN_DEADLINE_S):
        exp = self.wait_status(eid, TERMINAL, deadline_s)
        check(exp["status"] == "done", "status done", f"status {exp['status']}, error {exp.get('error')}",
              f"experiment {eid} ({json.dumps(exp.get('spec'))})")
        return exp

    def list_all(self, query=""):
        """Every experiment (newest first) through the pages."""
        items, cursor, seen_cursors = [], None, set()
        while True:
            q = "limit=500" + (f"&before={cursor}" if cursor else "") + (f"&{query}" if query else "")
            body = expect_status(self.get(f"/api/experiments?{q}"), 200)
            items += body["items"]
            cursor = body.get("next")
            if not cursor:
                return items
            assert cursor not in seen_cursors, f"paging loops on cursor {cursor}"
            seen_cursors.add(cursor)

    def machine_id(self):
        return self.health_machine()["id"]

    def machines(self):
        body = expect_status(self.get("/api/machines"), 200)
        items = body["items"] if isinstance(body, dict) and "items" in body else body
        check(isinstance(items, list), "a list of machines (or {\"items\": [...]})", body,
              "GET /api/machines")
        return items

    def health_machine(self):
        """This server's own machine (the store also knows the embedded profiles' machines)."""
        body = expect_status(self.get("/api/machines"), 200)
        ms = [m for m in body.get("items", []) if m.get("id") == body.get("this")]
        check(len(ms) == 1, "this machine among the machines", body, "GET /api/machines")
        return ms[0]


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="session", autouse=True)
def _binary():
    if not BIN or not os.access(BIN, os.X_OK):
        pytest.fail(f"STREAMLAB_BIN must name the built binary; got {BIN!r}", pytrace=False)
    return BIN


@pytest.fixture
def make_server(tmp_path):
    """Factory: make_server(**opts) -> a started Server; all are stopped at teardown."""
    made = []

    def make(name=None, start=True, **opts):
        srv = Server(tmp_path, name=name or f"srv{len(made)}", **opts)
        made.append(srv)
        if start:
            srv.start()
        return srv

    yield make
    problems = []
    for srv in made:
        try:
            srv.cleanup()
        except BaseException as e:  # stop every server before reporting
            problems.append(str(e))
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture
def server(make_server):
    """A fresh server running the sim with its default worker."""
    return make_server()


@pytest.fixture
def idle_server(make_server):
    """A fresh server that queues but runs nothing (--workers 0)."""
    return make_server(workers=0)


@pytest.fixture(scope="module")
def _module_server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("shared"), name="shared", workers=0)
    srv.start()
    yield srv
    srv.cleanup()


@pytest.fixture
def shared_server(_module_server):
    """One idle server (--workers 0) shared by a module of request-validation tests. If an
    earlier test crashed it (that test failed with the report), it is restarted on the same
    database so that one crash is one failure, not a cascade."""
    srv = _module_server
    if not srv.alive():
        srv.proc = None
        srv.start()
    return srv


@pytest.fixture(autouse=True)
def _sanitizer_watch():
    """After each test, any sanitizer report printed by any server is that test's failure."""
    yield
    for srv in list(Server.all_started):
        srv.check_sanitizers()
        if srv.proc is None:
            Server.all_started.remove(srv)


def run_cli(args, timeout=RUN_DEADLINE_S, **kw):
    """Run a subcommand of the binary; fail on a sanitizer report in its output."""
    p = subprocess.run([BIN] + args, capture_output=True, timeout=timeout, **kw)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    rep = sanitizer_report(out + err)
    if rep:
        pytest.fail(f"sanitizer report from {' '.join(args)}:\n{rep}", pytrace=False)
    return p.returncode, out, err


# ---------------------------------------------------------------- counting for run_api.sh

_outcomes = {}


def pytest_runtest_logreport(report):
    prev = _outcomes.get(report.nodeid)
    if report.failed:
        _outcomes[report.nodeid] = "failed"
    elif report.when == "call" and prev != "failed":
        _outcomes[report.nodeid] = "passed" if report.passed else "skipped"
    elif report.when == "setup" and report.skipped and prev != "failed":
        _outcomes[report.nodeid] = "skipped"


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("STREAMLAB_API_COUNTS")
    if not path:
        return
    passed = sum(1 for v in _outcomes.values() if v == "passed")
    failed = sum(1 for v in _outcomes.values() if v == "failed")
    skipped = sum(1 for v in _outcomes.values() if v == "skipped")
    with open(path, "w") as f:
        f.write(f"{passed} {failed} {skipped}\n")
