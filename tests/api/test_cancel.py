"""DELETE /api/experiments/{id}: a queued one is cancelled; anything else is 409; unknown 404."""

from conftest import check, expect_error, expect_json_content_type, expect_status, small


def test_cancel_queued_experiment_returns_200_and_cancelled(idle_server):
    eid = idle_server.create(small())["id"]
    r = idle_server.delete(f"/api/experiments/{eid}")
    body = expect_status(r, 200)
    expect_json_content_type(r)
    check(body.get("id") == eid and body.get("status") == "cancelled",
          f"the experiment {eid} with status cancelled", body, "DELETE response")
    got = idle_server.experiment(eid)
    check(got["status"] == "cancelled", "cancelled", got["status"], "GET after cancel")
    check(got["result"] is None, "no result", got["result"], "cancelled experiment result")


def test_cancel_reduces_queue_depth_and_leaves_others_queued(idle_server):
    ids = [idle_server.create(small())["id"] for _ in range(3)]
    expect_status(idle_server.delete(f"/api/experiments/{ids[1]}"), 200)
    check(idle_server.health()["queue_depth"] == 2, 2, idle_server.health()["queue_depth"],
          "queue_depth after one cancel of three")
    for eid in (ids[0], ids[2]):
        st = idle_server.experiment(eid)["status"]
        check(st == "queued", "queued", st, f"status of {eid}")


def test_cancel_twice_is_409(idle_server):
    eid = idle_server.create(small())["id"]
    expect_status(idle_server.delete(f"/api/experiments/{eid}"), 200)
    expect_error(idle_server.delete(f"/api/experiments/{eid}"), 409)
    check(idle_server.experiment(eid)["status"] == "cancelled", "still cancelled",
          idle_server.experiment(eid)["status"], "after a second DELETE")


def test_cancel_done_experiment_is_409_and_keeps_it_done(server):
    eid = server.create(small())["id"]
    before = server.wait_done(eid)
    expect_error(server.delete(f"/api/experiments/{eid}"), 409)
    after = server.experiment(eid)
    check(after["status"] == "done" and after["result"] == before["result"],
          "still done with the same result", after["status"], "after DELETE of a done experiment")


def test_cancel_unknown_experiment_is_404(idle_server):
    expect_error(idle_server.delete("/api/experiments/no-such-experiment"), 404)


def test_cancelled_experiment_never_runs_after_restart(make_server):
    srv = make_server(workers=0)
    keep = srv.create(small())["id"]
    gone = srv.create(small())["id"]
    expect_status(srv.delete(f"/api/experiments/{gone}"), 200)
    srv.stop()
    srv.start(workers=1)
    srv.wait_done(keep)
    st = srv.experiment(gone)
    check(st["status"] == "cancelled" and st["started_at"] is None, "still cancelled, never started",
          (st["status"], st["started_at"]), "cancelled experiment after restart with a worker")
