"""Queued work survives a restart; a run killed with SIGKILL is failed ("interrupted")."""

import json
import time

import pytest

from conftest import RUN_DEADLINE_S, check, expect_status, small


def test_queued_experiments_survive_sigterm_and_run_after_restart(make_server):
    srv = make_server(workers=0)
    ids = [srv.create(small(streams=s))["id"] for s in (1, 2, 4)]
    check(srv.health()["queue_depth"] == 3, 3, srv.health()["queue_depth"], "queue before restart")
    srv.stop(expect_code=0)
    srv.start(workers=1)
    for eid in ids:
        exp = srv.wait_done(eid)
        check(exp["result"]["verified"] is True, "verified", exp["result"]["verified"], f"{eid} result")
    check(srv.health()["queue_depth"] == 0, 0, srv.health()["queue_depth"], "queue after they ran")


def test_restart_keeps_done_experiments_and_their_results(make_server):
    srv = make_server()
    eid = srv.create(small())["id"]
    before = srv.wait_done(eid)
    tl_before = expect_status(srv.get(f"/api/experiments/{eid}/timeline"), 200)
    srv.stop()
    srv.start(workers=0)
    after = srv.experiment(eid)
    check(after == before, before, after, "the experiment after a restart")
    tl_after = expect_status(srv.get(f"/api/experiments/{eid}/timeline"), 200)
    check(tl_after == tl_before, "the same timeline", "a different one", "timeline after a restart")


def test_running_experiment_killed_with_sigkill_is_failed_interrupted(make_server):
    srv = make_server()
    slow = {"variant": "cpu", "size": "2^26", "reps": 50, "warmup": 0, "label": "slow"}
    eid = srv.create(slow)["id"]
    queued = srv.create(small(label="behind the slow one"))["id"]
    exp = srv.wait_status(eid, ("running", "done", "failed", "cancelled"))
    check(exp["status"] == "running", "running (a 2^26-element cpu run of 50 reps)", exp["status"],
          "the slow experiment before kill -9")
    srv.kill9()
    srv.start(workers=0)
    exp = srv.experiment(eid)
    check(exp["status"] == "failed", "failed", exp["status"], "killed experiment after restart")
    check("interrupted" in json.dumps(exp["error"]).lower(), 'error containing "interrupted"',
          exp["error"], "killed experiment error")
    check(exp["result"] is None, "no result", exp["result"], "killed experiment result")
    other = srv.experiment(queued)
    check(other["status"] == "queued", "queued (never lost)", other["status"],
          "the experiment queued behind it")
    srv.stop()
    srv.start(workers=1)
    srv.wait_done(queued)
    check(srv.experiment(eid)["status"] == "failed", "still failed", srv.experiment(eid)["status"],
          "killed experiment after a second restart")


def test_sigterm_during_a_run_loses_nothing(make_server):
    """Graceful shutdown finishes or re-queues the running experiment; a restart completes it."""
    srv = make_server()
    eid = srv.create({"variant": "cpu", "size": "2^24", "reps": 5, "warmup": 0})["id"]
    srv.wait_status(eid, ("running", "done", "failed"))
    srv.stop(expect_code=0)
    srv.start(workers=0)
    st = srv.experiment(eid)["status"]
    check(st in ("queued", "done"), "queued (given back) or done (finished)", st,
          "experiment running at SIGTERM, after restart")
    srv.stop()
    srv.start(workers=1)
    srv.wait_done(eid, deadline_s=RUN_DEADLINE_S * 2)
