"""POST /api/sweeps and GET /api/sweeps/{id}: the cross product in order, queued in order,
run to completion; bad sweeps change nothing. Also times a 100-experiment sweep (printed)."""

import itertools
import time

import pytest

from conftest import (RUN_DEADLINE_S, check, describe, expect_error, expect_json_content_type,
                      expect_status, small)

AXES_12 = {"streams": [1, 2, 4], "variant": ["async_v1", "async_v2"],
           "host_memory": ["pinned", "pageable"]}


def cross(axes):
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]


def wait_sweep(srv, sid, n, deadline_s):
    end = time.monotonic() + deadline_s
    body = None
    while time.monotonic() < end:
        body = expect_status(srv.get(f"/api/sweeps/{sid}"), 200)
        counts = body.get("counts", {})
        if sum(counts.get(s, 0) for s in ("done", "failed", "cancelled")) >= n:
            return body
        if not srv.alive():
            pytest.fail(f"server died during the sweep\n{srv.log_tail()}", pytrace=False)
        time.sleep(0.05)
    pytest.fail(f"sweep {sid} not finished within {deadline_s}s: counts {body and body.get('counts')}",
                pytrace=False)


def test_sweep_of_12_is_queued_in_cross_product_order(idle_server):
    base = small(label="sweep12")
    r = idle_server.post("/api/sweeps", {"base": base, "axes": AXES_12})
    body = expect_status(r, 202)
    expect_json_content_type(r)
    check(isinstance(body.get("id"), str) and isinstance(body.get("experiments"), list),
          '{"id": ..., "experiments": [ids]}', body, f"POST /api/sweeps\n  {describe(r)}")
    ids = body["experiments"]
    check(len(ids) == 12 and len(set(ids)) == 12, "12 distinct experiment ids", ids, "sweep experiments")
    for i, (eid, point) in enumerate(zip(ids, cross(AXES_12))):
        exp = idle_server.experiment(eid)
        got = {k: exp["spec"][k] for k in point}
        check(got == point, point, got, f"experiment {i} of the sweep (first axis outermost)")
        check(exp["spec"]["label"] == "sweep12" and exp["spec"]["size"] == base["size"],
              "base fields kept", exp["spec"], f"experiment {i} spec")
        check(exp["sweep_id"] == body["id"], body["id"], exp["sweep_id"], f"experiment {i} sweep_id")
        check(exp["status"] == "queued", "queued", exp["status"], f"experiment {i} status")
    check(idle_server.health()["queue_depth"] == 12, 12, idle_server.health()["queue_depth"],
          "queue_depth after the sweep")


def test_sweep_axis_order_follows_the_axes_object(idle_server):
    axes = {"host_memory": ["pinned", "pageable"], "streams": [3, 1]}
    body = expect_status(idle_server.post("/api/sweeps", {"base": small(), "axes": axes}), 202)
    got = [{k: idle_server.experiment(e)["spec"][k] for k in axes} for e in body["experiments"]]
    check(got == cross(axes), cross(axes), got, "cross product order with host_memory outermost")


def test_sweep_of_12_runs_to_completion_in_order(server):
    r = server.post("/api/sweeps", {"base": small(), "axes": AXES_12})
    body = expect_status(r, 202)
    sid, ids = body["id"], body["experiments"]
    sweep = wait_sweep(server, sid, 12, RUN_DEADLINE_S * 2)
    for k in ("id", "created_at", "base", "axes", "experiments", "counts"):
        check(k in sweep, f"sweep field {k!r}", sorted(sweep), f"GET /api/sweeps/{sid}")
    check(sweep["id"] == sid, sid, sweep["id"], "sweep id")
    check(sweep["counts"] == {"done": 12} or
          (sweep["counts"].get("done") == 12 and not any(v for k, v in sweep["counts"].items() if k != "done")),
          '{"done": 12}', sweep["counts"], "sweep counts")
    check(sweep["axes"] == AXES_12, AXES_12, sweep["axes"], "sweep axes")
    check([e["id"] for e in sweep["experiments"]] == ids, ids, [e["id"] for e in sweep["experiments"]],
          "sweep experiments in order")
    for e in sweep["experiments"]:
        for k in ("id", "status", "spec"):
            check(k in e, f"field {k!r}", sorted(e), "sweep experiment item")
        check(e["status"] == "done", "done", e["status"], f"sweep experiment {e['id']}")
    exps = [server.experiment(e) for e in ids]
    for e in exps:
        check(e["result"] and e["result"].get("verified") is True, "verified result", e["result"],
              f"result of {e['id']}")
    starts = [e["started_at"] for e in exps]
    check(starts == sorted(starts), "started in the sweep's order (one worker)", starts,
          "started_at order")


def test_get_unknown_sweep_is_404(idle_server):
    expect_error(idle_server.get("/api/sweeps/no-such-sweep"), 404)


BAD_SWEEPS = [
    ("axis-value-out-of-range", {"base": small(), "axes": {"streams": [1, 0]}}, "streams"),
    ("axis-unknown-variant", {"base": small(), "axes": {"variant": ["async_v1", "bogus"]}}, "variant"),
    ("axis-unknown-field", {"base": small(), "axes": {"bogus": [1, 2]}}, "bogus"),
    ("axis-not-a-list", {"base": small(), "axes": {"streams": 4}}, "streams"),
    ("axis-empty-list", {"base": small(), "axes": {"streams": []}}, "streams"),
    ("base-bad-field", {"base": small(streams=0), "axes": {"host_memory": ["pinned"]}}, "streams"),
    ("base-unknown-field", {"base": dict(small(), bogus=1), "axes": {"streams": [1]}}, "bogus"),
    ("base-missing-variant", {"base": {"size": 1024}, "axes": {"streams": [1]}}, "variant"),
    ("axes-not-object", {"base": small(), "axes": [1, 2]}, "axes"),
    ("missing-axes", {"base": small()}, "axes"),
    # without a base, the points lack the required variant: naming either is right
    ("missing-base", {"axes": {"streams": [1, 2]}}, ("base", "variant")),
    ("unknown-top-field", {"base": small(), "axes": {"streams": [1]}, "bogus": 1}, "bogus"),
]


@pytest.mark.parametrize("name,body,field", BAD_SWEEPS, ids=[b[0] for b in BAD_SWEEPS])
def test_bad_sweep_is_422_naming_the_field_and_stores_nothing(idle_server, name, body, field):
    r = idle_server.post("/api/sweeps", body)
    if isinstance(field, tuple):
        err = expect_error(r, 422)
        check(any(f in (err.get("field") or "") for f in field), f"error.field naming one of {field}",
              err.get("field"), f"error.field\n  {describe(r)}")
    else:
        err = expect_error(r, 422, field_contains=field)
    check(idle_server.list_all() == [], "no experiments stored", len(idle_server.list_all()),
          f"after a refused sweep ({err.get('message')})")


def test_malformed_sweep_is_400(idle_server):
    expect_error(idle_server.post("/api/sweeps", raw=b'{"base": {"variant": "async_v1"}, "axes": {'), 400)


def test_sweep_over_sweep_max_is_422_and_stores_nothing(make_server):
    srv = make_server(workers=0, sweep_max=10)
    expect_error(srv.post("/api/sweeps", {"base": small(), "axes": AXES_12}), 422)
    check(srv.list_all() == [], "no experiments stored", len(srv.list_all()), "after a refused sweep")
    body = expect_status(srv.post("/api/sweeps", {"base": small(), "axes": {"streams": list(range(1, 11))}}), 202)
    check(len(body["experiments"]) == 10, 10, len(body["experiments"]), "a sweep of exactly sweep-max")


def test_time_a_100_experiment_sweep_end_to_end(make_server, capsys):
    """Prints the wall time of a 100-experiment sim sweep (reported, never asserted)."""
    srv = make_server(sweep_max=1000, queue_max=10000)
    axes = {"size": ["2^20", "2^21", "2^22", "2^23", "2^24"], "streams": [1, 2, 4, 8, 16],
            "variant": ["async_v1", "async_v2"], "host_memory": ["pinned", "pageable"]}
    t0 = time.monotonic()
    body = expect_status(srv.post("/api/sweeps", {"base": {"variant": "async_v1"}, "axes": axes}), 202)
    check(len(body["experiments"]) == 100, 100, len(body["experiments"]), "sweep size")
    sweep = wait_sweep(srv, body["id"], 100, RUN_DEADLINE_S * 10)
    elapsed = time.monotonic() - t0
    check(sweep["counts"].get("done") == 100, '{"done": 100}', sweep["counts"], "100-sweep counts")
    with capsys.disabled():
        print(f"\n[timing] 100-experiment sim sweep (reps 10, warmup 2, sizes 2^20..2^24, "
              f"1..16 streams), POST to all done: {elapsed:.2f} s")
