"""A result's reps in two groups: GET /api/experiments/{id} adds `rep_modes` to the result, each group's
median and count, the outliers left out and the stretches the slow reps lie in (server/API.md), where the
reps fall in two groups, and null where they do not. Computed when read from the stored reps, so the shipped
example bundles get it: on a lent H200, 2^25 async_v1 x64 drew each of its two modes five times, in three
stretches of slow reps (examples/h200-lent.json), and its median (3.28 ms) is neither.
"""

import json
import pathlib

import pytest

from conftest import Server, check, expect_status, small
from test_bundles import import_bundle

H200_BUNDLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "h200-lent.json"
TWO_MODES = "e-239229329bf5a8fc"  # 2^25 async_v1 x64: 3.530 3.034 3.035 3.030 3.525 3.529 3.036 3.044 3.507 3.530
ONE_GROUP = "e-7cdc8759203e5eba"  # 2^25 async_v1 x128: 3.36-3.81 ms, no gap past 5%
FIELDS = {"fast_ms", "fast_reps", "slow_ms", "slow_reps", "outliers", "slow_runs"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("rep-modes"), name="rep-modes")
    s.start()
    expect_status(import_bundle(s, json.loads(H200_BUNDLE.read_text())), 200)
    yield s
    s.cleanup()


def result_of(srv, eid):
    return expect_status(srv.get(f"/api/experiments/{eid}"), 200)["result"]


def test_two_modes_are_told_with_their_medians_and_how_they_lie(srv):
    r = result_of(srv, TWO_MODES)
    m = r.get("rep_modes")
    check(isinstance(m, dict) and set(m) == FIELDS, sorted(FIELDS), m, "rep_modes' fields")
    check((m["fast_reps"], m["slow_reps"], m["outliers"], m["slow_runs"]) == (5, 5, 0, 3), (5, 5, 0, 3),
          (m["fast_reps"], m["slow_reps"], m["outliers"], m["slow_runs"]), "the groups' counts and the slow stretches")
    reps = r["reps_ms"]
    fast, slow = sorted(reps)[:5], sorted(reps)[5:]
    check(m["fast_ms"] == fast[2] and m["slow_ms"] == slow[2], (fast[2], slow[2]), (m["fast_ms"], m["slow_ms"]),
          "each group's median, from the stored reps")
    check(m["fast_ms"] < r["total_ms"]["median"] < m["slow_ms"], "fast < median < slow",
          (m["fast_ms"], r["total_ms"]["median"], m["slow_ms"]), "the run's median lies between the modes")


def test_one_group_is_null(srv):
    r = result_of(srv, ONE_GROUP)
    check("rep_modes" in r and r["rep_modes"] is None, None, r.get("rep_modes", "absent"), "rep_modes of one group")


def test_a_sim_run_is_one_group_and_the_list_carries_the_same(srv):
    eid = srv.create(small("async_v2", streams=4, reps=10))["id"]
    srv.wait_done(eid)
    check(result_of(srv, eid)["rep_modes"] is None, None, result_of(srv, eid)["rep_modes"],
          "the sim's reps (deterministic) are one group")
    items = expect_status(srv.get("/api/experiments?limit=500"), 200)["items"]
    listed = {e["id"]: e["result"].get("rep_modes", "absent") for e in items if e["id"] in (TWO_MODES, ONE_GROUP)}
    want = {TWO_MODES: result_of(srv, TWO_MODES)["rep_modes"], ONE_GROUP: None}
    check(listed == want, want, listed, "rep_modes in GET /api/experiments' items, as in GET one")
    sweep = expect_status(srv.get(f"/api/experiments/{TWO_MODES}"), 200)["sweep_id"]
    in_sweep = {e["id"]: e["result"].get("rep_modes", "absent")
                for e in expect_status(srv.get(f"/api/sweeps/{sweep}"), 200)["experiments"]
                if e["id"] in (TWO_MODES, ONE_GROUP)}
    check(in_sweep == want, want, in_sweep, "rep_modes in the sweep's experiments (both in the seeds' 2^25 sweep)")
