"""A bad request never changes stored data and never stops the server."""

import json
import socket

from conftest import check, expect_status, small


def snapshot(srv):
    items = srv.list_all()
    return {"experiments": [(e["id"], e["status"], json.dumps(e["spec"], sort_keys=True)) for e in items],
            "queue_depth": srv.health()["queue_depth"],
            "machines": sorted(m["id"] for m in srv.machines())}


def bad_requests(srv, eid, done_id):
    """(method, path, headers, body) of requests that must all be refused."""
    j = {"Content-Type": "application/json"}
    out = []
    for v in ({"variant": "bogus"}, small(streams=0), small(streams=1025), small(size=0),
              small(size=-5), small(size="2^x"), small(bogus=1), {"size": 1024},
              {"variant": "async_v1", "size": 4, "streams": 1, "chunks": 8}, [], small(size="2^36"),
              small(devices=[3]), small(reps=0), small(label=7)):
        out.append(("POST", "/api/experiments", j, json.dumps(v).encode()))
    for raw in (b"", b"{", b"{\"variant\":", b"\xff\xfe", b"[" * 5000, b"{\"variant\": NaN}"):
        out.append(("POST", "/api/experiments", j, raw))
    out.append(("POST", "/api/experiments", {}, json.dumps(small()).encode()))
    out.append(("POST", "/api/experiments", {"Content-Type": "text/plain"}, json.dumps(small()).encode()))
    out.append(("POST", "/api/experiments", j, json.dumps(small(label="x" * 3000)).encode()))  # > body-max
    for v in ({"base": small(), "axes": {"streams": [1, 0]}}, {"base": small(), "axes": {"bogus": [1]}},
              {"axes": {"streams": [1]}}, {"base": small(), "axes": {"streams": list(range(1, 30))}}):
        out.append(("POST", "/api/sweeps", j, json.dumps(v).encode()))
    out.append(("POST", "/api/sweeps", j, b"{\"base\":"))
    for method, path in (("DELETE", "/api/experiments/nope"), ("DELETE", f"/api/experiments/{done_id}"),
                         ("PUT", f"/api/experiments/{eid}"), ("PATCH", "/api/experiments"),
                         ("DELETE", "/api/health"), ("POST", "/api/machines"),
                         ("GET", "/api/nope"), ("GET", "/api/experiments?limit=0"),
                         ("GET", f"/api/experiments/{eid}/timeline?rep=99"),
                         ("GET", "/api/experiments/nope/trace"), ("GET", "/api/sweeps/nope"),
                         ("POST", f"/api/experiments/{eid}")):
        out.append((method, path, j, b"{}" if method in ("POST", "PUT", "PATCH") else None))
    return out


def test_bad_requests_change_nothing_and_the_server_survives(make_server):
    srv = make_server(workers=1, body_max=2048, sweep_max=20)
    done_id = srv.create(small())["id"]
    srv.wait_done(done_id)
    srv.stop()
    srv.start(workers=0)  # from here on nothing runs, so any change would be the bad requests'
    eid = srv.create(small(label="queued one"))["id"]
    before = snapshot(srv)
    done_before = srv.experiment(done_id)
    answered = []
    for method, path, headers, body in bad_requests(srv, eid, done_id):
        r = srv.request(method, path, headers=headers, data=body)
        answered.append((method, path, r.status_code))
        check(400 <= r.status_code < 500, "a 4xx answer", r.status_code, f"{method} {path} {body and body[:80]}")
        check(srv.alive(), "the server still running", "it exited", f"after {method} {path}")
    after = snapshot(srv)
    check(after == before, before, after, "stored experiments, queue and machines after the bad requests")
    check(srv.experiment(done_id) == done_before, "the done experiment unchanged",
          srv.experiment(done_id), "done experiment after bad requests")
    h = srv.health()
    check(h["status"] == "ok", "ok", h["status"], "health after the bad requests")


def test_server_survives_raw_garbage_and_half_requests(server):
    """Broken HTTP on the socket: the server answers or drops it, and keeps serving."""
    for payload in (b"GARBAGE\r\n\r\n", b"GET /api/health HTTP/1.1\r\n",  # never finished
                    b"POST /api/experiments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 100\r\n\r\n{\"variant\"",  # body cut short
                    b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
                    b"\x00\x01\x02\x03" * 100):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        try:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            try:
                s.recv(4096)
            except OSError:
                pass
        finally:
            s.close()
        check(server.alive(), "server running", "exited", f"after raw payload {payload[:40]!r}")
    h = server.health()
    check(h["status"] == "ok", "ok", h["status"], "health after garbage")
    check(server.list_all() == [], [], server.list_all(), "nothing stored by garbage")


def test_health_still_ok_after_everything(make_server):
    """Every kind of failure status in a row, then the server still answers and runs work."""
    srv = make_server(queue_max=50, body_max=4096)
    srv.post("/api/experiments", raw=b"{")
    srv.post("/api/experiments", small(), content_type="text/plain")
    srv.post("/api/experiments", small(label="q" * 8000))
    srv.request("PUT", "/api/health")
    srv.get("/api/nope")
    srv.post("/api/experiments", small(streams=0))
    eid = srv.create(small())["id"]
    srv.wait_done(eid)
    srv.delete(f"/api/experiments/{eid}")
    check(srv.health()["status"] == "ok", "ok", srv.health()["status"], "health at the end")
    expect_status(srv.get(f"/api/experiments/{eid}/timeline"), 200)
