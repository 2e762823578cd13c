"""Compact bundles: GET /api/export?...&ops=all|median|none and their import.

A compact bundle carries the median rep's ops only (`median`) or no ops (`none`), and says so in its
top-level "ops" field; the results keep every rep's totals. Imported, the timeline endpoint's default
(the median rep) shows the same ops as on the origin; another rep in range answers 200 with no ops.
"""

import copy
import json

import pytest

from conftest import Server, check, expect_error, expect_status, small
from test_bundles import check_same_snapshot, export, import_bundle, snapshot


def export_ops(srv, ids, ops):
    query = "&".join(f"experiment={i}" for i in ids)
    return expect_status(srv.get(f"/api/export?{query}&ops={ops}"), 200)


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """Done experiments of 5 reps (so the median rep is one of several) and a sweep."""
    srv = Server(tmp_path_factory.mktemp("compact"), name="compact-origin", machine_label="compact origin")
    srv.start()
    singles = [srv.create(small("async_v1", streams=2, reps=5))["id"],
               srv.create(small("async_v2", streams=4, reps=5))["id"]]
    sweep = expect_status(srv.post("/api/sweeps", {"base": small(reps=5), "axes": {"streams": [1, 2]}}), 202)
    ids = singles + sweep["experiments"]
    for eid in ids:
        srv.wait_done(eid)
    yield {"srv": srv, "ids": ids, "sweep": sweep["id"]}
    srv.cleanup()


def test_compact_exports_are_smaller_and_say_what_they_hold(origin):
    a, ids = origin["srv"], origin["ids"]
    full, median, none = (export_ops(a, ids, ops) for ops in ("all", "median", "none"))
    check(full == export(a, ids), "ops=all is the default export", json.dumps(full)[:800], "?ops=all")
    sizes = {name: len(json.dumps(b)) for name, b in (("all", full), ("median", median), ("none", none))}
    check(sizes["none"] < sizes["median"] < sizes["all"], "none < median < all", sizes, "bundle sizes")
    check("ops" not in full, "no ops field in a full bundle (absent means all)", full.get("ops"), "full bundle")
    check(median.get("ops") == "median", "median", median.get("ops"), "the median bundle's ops field")
    check(none.get("ops") == "none", "none", none.get("ops"), "the none bundle's ops field")
    check(none.get("timelines") == {}, "no timelines", none.get("timelines"), "the none bundle")
    for b in (median, none):
        check(b["experiments"] == full["experiments"] and b["machines"] == full["machines"] and
              b["sweeps"] == full["sweeps"], "the same experiments, machines and sweeps", b["ops"], "compact bundle")
    for e in full["experiments"]:
        res = e["result"]
        check(len(res["reps_ms"]) == res["reps"] == 5, "all 5 reps' totals", res["reps_ms"], e["id"])
        tl = median["timelines"][e["id"]]
        check([r["rep"] for r in tl] == [res["median_rep"]], [res["median_rep"]], [r["rep"] for r in tl],
              f"the median bundle's reps of {e['id']}")
        shown = expect_status(a.get(f"/api/experiments/{e['id']}/timeline"), 200)
        check(tl[0]["ops"] == shown["ops"] and len(shown["ops"]) > 0, "the ops the timeline shows by default",
              tl[0]["ops"][:2], e["id"])


def test_compact_export_of_a_sweep(origin):
    a = origin["srv"]
    b = expect_status(a.get(f"/api/export?sweep={origin['sweep']}&ops=median"), 200)
    check(b.get("ops") == "median" and len(b["experiments"]) == 2, "the sweep's 2 experiments, median ops",
          {"ops": b.get("ops"), "n": len(b["experiments"])}, "?sweep=&ops=median")
    check(all(len(tl) == 1 for tl in b["timelines"].values()), "one rep each", b["timelines"].keys(), "sweep bundle")


@pytest.mark.parametrize("value", ["some", "", "ALL", "median%00", "1"])
def test_a_bad_ops_query_is_422_naming_ops(origin, value):
    a = origin["srv"]
    expect_error(a.get(f"/api/export?experiment={origin['ids'][0]}&ops={value}"), 422, field="ops")


def test_a_compact_bundle_round_trips_into_a_fresh_store(origin, make_server):
    a, ids = origin["srv"], origin["ids"]
    median = export_ops(a, ids, "median")
    b = make_server(name="fresh", sim_devices=2)
    counts = expect_status(import_bundle(b, median), 200)
    want = {"imported": len(ids), "unchanged": 0, "machines": 1, "sweeps": 1}
    check(counts == want, want, counts, "import counts of a median bundle")
    for eid in ids:
        exp = a.experiment(eid)
        check(b.experiment(eid) == exp, "the experiment as on the origin, every rep's total", b.experiment(eid), eid)
        res = exp["result"]
        got = expect_status(b.get(f"/api/experiments/{eid}/timeline"), 200)
        shown = expect_status(a.get(f"/api/experiments/{eid}/timeline"), 200)
        check(got == shown, "the origin's default (median) timeline", json.dumps(got)[:600], f"{eid} timeline")
        other = (res["median_rep"] + 1) % res["reps"]
        empty = expect_status(b.get(f"/api/experiments/{eid}/timeline?rep={other}"), 200)
        check(empty["ops"] == [] and empty["rep"] == other and empty["median_rep"] == res["median_rep"],
              "200 with no ops for a rep the bundle did not carry", json.dumps(empty)[:400], f"{eid} rep {other}")
        expect_error(b.get(f"/api/experiments/{eid}/timeline?rep={res['reps']}"), 422, field="rep")
        trace = expect_status(b.get(f"/api/experiments/{eid}/trace"), 200)
        check(trace == expect_status(a.get(f"/api/experiments/{eid}/trace"), 200), "the origin's trace",
              "a different one", f"{eid} trace")
    check(export_ops(b, ids, "median") == median, "re-exported compact, the same bundle", "a different one",
          "export of the imported store")
    before = snapshot(b)
    again = expect_status(import_bundle(b, median), 200)
    want = {"imported": 0, "unchanged": len(ids), "machines": 0, "sweeps": 0}
    check(again == want, want, again, "a second import of the median bundle")
    check_same_snapshot(before, snapshot(b), "after the second import")
    # a compact bundle of experiments the store holds in full is the same experiments
    check(expect_status(import_bundle(a, median), 200)["unchanged"] == len(ids), "unchanged", "changed",
          "the median bundle into its own (full) store")
    check(expect_status(import_bundle(a, export_ops(a, ids, "none")), 200)["unchanged"] == len(ids), "unchanged",
          "changed", "the none bundle into its own (full) store")
    # the store lacks the other reps' ops: a full bundle differs from what it holds (API.md)
    expect_error(import_bundle(b, export(a, ids[:1])), 409)


def test_a_none_bundle_imports_results_without_ops(origin, make_server):
    a, ids = origin["srv"], origin["ids"]
    b = make_server(name="no-ops", sim_devices=2)
    counts = expect_status(import_bundle(b, export_ops(a, ids, "none")), 200)
    check(counts["imported"] == len(ids), len(ids), counts, "import of a none bundle")
    derived = ("timeline_span_ms", "timeline_stretch")  # from the ops, which b does not hold
    for eid in ids:
        got, want = b.experiment(eid), a.experiment(eid)
        check({k: got["result"].pop(k, "absent") for k in derived} == dict.fromkeys(derived),
              dict.fromkeys(derived), {k: got["result"].get(k, "absent") for k in derived}, f"{eid}: no ops, no span")
        for k in derived:
            want["result"].pop(k, None)
        check(got == want, "the experiment with its result", got, eid)
        tl = expect_status(b.get(f"/api/experiments/{eid}/timeline"), 200)
        check(tl["ops"] == [], "no ops", tl["ops"][:2], f"{eid} timeline")


def test_a_bad_ops_field_in_a_bundle_is_422_and_stores_nothing(origin, make_server):
    a, ids = origin["srv"], origin["ids"]
    b = make_server(name="guard", sim_devices=2)
    before = snapshot(b)
    median = export_ops(a, ids, "median")
    full = export(a, ids)
    first = ids[0]
    other = (median["experiments"][0]["result"]["median_rep"] + 1) % 5

    def with_ops(bundle, value):
        bad = copy.deepcopy(bundle)
        bad["ops"] = value
        return bad

    wrong_rep = copy.deepcopy(median)
    wrong_rep["timelines"][first][0]["rep"] = other
    cases = [
        ("an unknown ops value", with_ops(median, "some"), "ops"),
        ("ops not a string", with_ops(median, 1), "ops"),
        ("ops median with every rep's ops", with_ops(full, "median"),
         f"timelines.{first}[{0 if median['experiments'][0]['result']['median_rep'] else 1}].rep"),
        ("ops median with another rep's ops", wrong_rep, f"timelines.{first}[0].rep"),
        ("ops none with timelines", with_ops(median, "none"), "timelines"),
    ]
    for name, bundle, field in cases:
        expect_error(import_bundle(b, bundle), 422, field=field)
        check_same_snapshot(before, snapshot(b), f"the store after a bundle with {name}")
    check(expect_status(import_bundle(b, with_ops(full, "all")), 200)["imported"] == len(ids), len(ids), "fewer",
          'a full bundle with "ops": "all" imports')
