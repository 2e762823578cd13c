"""How far a timeline is from the run (issue 21): GET /api/experiments/{id}/timeline answers `span_ms`
(first op start to last op end of the ops it returns), `rep`, `rep_ms` (that rep's own total), `median_ms`
(result.total_ms.median), `stretch` (span_ms / median_ms) and `timing` (the spec's), and GET
/api/experiments/{id} adds `timeline_span_ms` and `timeline_stretch` (the median rep's) to the result.

All of it is computed from what the store holds, so an imported bundle gets it too: one whose median rep's
ops were made twice as long as its total answers a stretch of 2. The sim's timeline is the run: its span is
its total less what comes before its first op (lead_us: the host's issue of the first op, and over a large
array that first call's share of the first calls' extra, about 21 µs at 2^25 on the H100 profile: 32 µs in
all) and the sync's return (4 µs), a stretch within 1-1.5% of 1.
"""

import copy

import pytest

from conftest import check, close, expect_error, expect_status, small
from test_bundles import export, import_bundle

OP_KEYS = {"device", "stream", "chunk", "op", "start_us", "end_us", "bytes"}
# 2^25 elements: a few ms, against which what the sim leaves outside the span (its lead, the sync) is under 1%
BIG = {"size": 1 << 25, "streams": 4, "reps": 3, "warmup": 0}


def span_of(ops):
    return (max(o["end_us"] for o in ops) - min(o["start_us"] for o in ops)) / 1000.0


def timeline(srv, eid, rep=None):
    return expect_status(srv.get(f"/api/experiments/{eid}/timeline" + (f"?rep={rep}" if rep is not None else "")),
                         200)


def stretch_ops(ops, factor):
    """The ops slowed by factor about the first start: every start, end and gap factor times as long."""
    first = min(o["start_us"] for o in ops)
    for o in ops:
        o["start_us"] = first + factor * (o["start_us"] - first)
        o["end_us"] = first + factor * (o["end_us"] - first)


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    from conftest import Server
    srv = Server(tmp_path_factory.mktemp("stretch"), name="stretch-origin")
    srv.start()
    eid = srv.create(small("async_v1", **BIG))["id"]
    exp = srv.wait_done(eid)
    yield {"srv": srv, "id": eid, "exp": exp}
    srv.cleanup()


def test_a_sim_timeline_spans_its_total(origin):
    a, eid, exp = origin["srv"], origin["id"], origin["exp"]
    res = exp["result"]
    tl = timeline(a, eid)
    check(tl["rep"] == res["median_rep"], res["median_rep"], tl["rep"], "the default timeline's rep")
    check(tl["median_ms"] == res["total_ms"]["median"], res["total_ms"]["median"], tl["median_ms"], "median_ms")
    check(tl["rep_ms"] == res["reps_ms"][tl["rep"]], res["reps_ms"][tl["rep"]], tl["rep_ms"], "rep_ms")
    check(tl["timing"] == "events", "events (the spec's default)", tl["timing"], "timing")
    check(abs(tl["span_ms"] - span_of(tl["ops"])) < 1e-9, span_of(tl["ops"]), tl["span_ms"],
          "span_ms: the first op's start to the last op's end")
    check(close(tl["span_ms"] + tl["lead_us"] / 1000.0, res["total_ms"]["median"], rel=0, abs_=0.005),
          res["total_ms"]["median"], tl["span_ms"] + tl["lead_us"] / 1000.0,
          "a sim timeline spans its total from its lead on (the sync's return, 4 us, outside it)")
    check(abs(tl["stretch"] - 1) < 0.01, "1 within its lead", tl["stretch"], "a sim run's stretch")
    first = min(o["start_us"] for o in tl["ops"])
    check(tl["lead_us"] == first and first > 0, f"the first op's start, {first} us (after the host's first call)",
          tl["lead_us"], "lead_us: where the span starts, from the rep's start")
    check(all(set(o) == OP_KEYS for o in tl["ops"]), sorted(OP_KEYS), sorted(set().union(*map(set, tl["ops"]))),
          "ops as before: these fields, no more")
    check(res["timeline_span_ms"] == tl["span_ms"] and res["timeline_stretch"] == tl["stretch"],
          {"timeline_span_ms": tl["span_ms"], "timeline_stretch": tl["stretch"]},
          {k: res.get(k) for k in ("timeline_span_ms", "timeline_stretch")}, "the result's timeline span and stretch")


def test_rep_k_answers_that_rep(origin):
    a, eid, res = origin["srv"], origin["id"], origin["exp"]["result"]
    for k in range(res["reps"]):
        tl = timeline(a, eid, k)
        check(tl["rep"] == k and tl["rep_ms"] == res["reps_ms"][k], {"rep": k, "rep_ms": res["reps_ms"][k]},
              {"rep": tl["rep"], "rep_ms": tl["rep_ms"]}, f"?rep={k}")
        check(tl["median_ms"] == res["total_ms"]["median"], res["total_ms"]["median"], tl["median_ms"],
              f"?rep={k}: median_ms is the run's")
        check(abs(tl["span_ms"] - span_of(tl["ops"])) < 1e-9 and
              abs(tl["stretch"] - tl["span_ms"] / tl["median_ms"]) < 1e-9,
              {"span_ms": span_of(tl["ops"]), "stretch": span_of(tl["ops"]) / tl["median_ms"]},
              {"span_ms": tl["span_ms"], "stretch": tl["stretch"]}, f"?rep={k}: span and stretch of that rep")
    expect_error(a.get(f"/api/experiments/{eid}/timeline?rep={res['reps']}"), 422, field="rep")


def test_an_imported_timeline_twice_its_total_answers_stretch_2(origin, make_server):
    a, eid, res = origin["srv"], origin["id"], origin["exp"]["result"]
    bundle = copy.deepcopy(export(a, [eid]))
    median = res["median_rep"]
    reps = bundle["timelines"][eid]
    stretch_ops(next(r for r in reps if r["rep"] == median)["ops"], 2.0)
    b = make_server(name="stretched")
    expect_status(import_bundle(b, bundle), 200)
    tl = timeline(b, eid)
    was = timeline(a, eid)
    check(close(tl["span_ms"], 2 * was["span_ms"], rel=1e-9, abs_=1e-9), 2 * was["span_ms"], tl["span_ms"],
          "the stretched median rep's span")
    check(tl["median_ms"] == res["total_ms"]["median"], res["total_ms"]["median"], tl["median_ms"],
          "the imported run's median total, untouched")
    check(abs(tl["stretch"] - 2) < 0.02, "about 2", tl["stretch"], "the stretch of the imported timeline")
    got = b.experiment(eid)["result"]
    check(abs(got["timeline_stretch"] - 2) < 0.02 and got["timeline_span_ms"] == tl["span_ms"],
          {"timeline_stretch": "about 2", "timeline_span_ms": tl["span_ms"]},
          {k: got.get(k) for k in ("timeline_span_ms", "timeline_stretch")}, "the imported result's stretch")
    # another rep, its ops as they were: about 1, less what the sim leaves outside its span (the
    # lead, 32 us at 2^25 on the H100 profile, and the sync's 4 us: 1.1% of this run's 3.4 ms)
    other = (median + 1) % res["reps"]
    check(abs(timeline(b, eid, other)["stretch"] - 1) < 0.015, "about 1", timeline(b, eid, other)["stretch"],
          f"rep {other}, whose ops were left as they were")


def test_fields_are_null_where_there_is_no_result_or_no_ops(origin, make_server):
    a, eid, res = origin["srv"], origin["id"], origin["exp"]["result"]
    idle = make_server(name="idle", workers=0)
    queued = idle.create(small())["id"]
    check(idle.experiment(queued)["result"] is None, None, idle.experiment(queued)["result"],
          "a queued experiment's result")
    expect_error(idle.get(f"/api/experiments/{queued}/timeline"), 409)
    # a compact bundle keeps the median rep's ops alone; a none bundle keeps none
    compact = make_server(name="compact")
    expect_status(import_bundle(compact, expect_status(a.get(f"/api/export?experiment={eid}&ops=median"), 200)), 200)
    other = (res["median_rep"] + 1) % res["reps"]
    tl = timeline(compact, eid, other)
    want = {"span_ms": None, "stretch": None, "rep_ms": res["reps_ms"][other], "median_ms": res["total_ms"]["median"]}
    check({k: tl[k] for k in want} == want and tl["ops"] == [], want, {k: tl.get(k) for k in want},
          f"rep {other}, whose ops the compact bundle did not carry")
    check(timeline(compact, eid)["stretch"] == timeline(a, eid)["stretch"], timeline(a, eid)["stretch"],
          timeline(compact, eid)["stretch"], "the median rep's stretch, imported compact")
    bare = make_server(name="bare")
    expect_status(import_bundle(bare, expect_status(a.get(f"/api/export?experiment={eid}&ops=none"), 200)), 200)
    got = bare.experiment(eid)["result"]
    want = {"timeline_span_ms": None, "timeline_stretch": None}
    check({k: got.get(k, "absent") for k in want} == want, want, {k: got.get(k, "absent") for k in want},
          "a result whose ops the store does not hold")
    tl = timeline(bare, eid)
    check(tl["span_ms"] is None and tl["stretch"] is None and tl["rep_ms"] == res["reps_ms"][res["median_rep"]],
          "span_ms and stretch null, rep_ms the rep's total", {k: tl[k] for k in ("span_ms", "stretch", "rep_ms")},
          "the timeline of an experiment imported without ops")
