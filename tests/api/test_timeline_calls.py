"""The host's calls in a timeline (issue 21): GET /api/experiments/{id}/timeline answers `calls` beside
`ops`, the issuing thread's call that handed each op over ({device, stream, chunk, op, start_us, end_us}, in
issue order, on the rep's clock), where the run recorded them: the sim always, a GPU run timed by events in the
reps its timeline comes from, a CUPTI run and host work never (none: `[]`). The wait before a rep's first op
(`lead_us`) is the host's first call: an op cannot start before its call returns.

A bundle carries each rep's calls beside its ops ({"rep", "ops", "calls"}); one without them (written before
calls were recorded) imports with none; calls that name no op, repeat one, or end before they start are a 422
that changes nothing. GET .../trace?calls=1 adds them to the Chrome trace as a "host" process; without it the
trace is as before.
"""

import copy

import pytest

from conftest import check, expect_error, expect_status, small
from test_bundles import export, import_bundle

CALL_KEYS = {"device", "stream", "chunk", "op", "start_us", "end_us"}
EPS = 1e-6


def timeline(srv, eid, rep=None):
    return expect_status(srv.get(f"/api/experiments/{eid}/timeline" + (f"?rep={rep}" if rep is not None else "")),
                         200)


def key(o):
    return (o["device"], o["stream"], o["chunk"], o["op"])


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    from conftest import Server
    srv = Server(tmp_path_factory.mktemp("calls"), name="calls-origin")
    srv.start()
    ids = {
        "v1": srv.create(small("async_v1", size=1 << 22, streams=4))["id"],
        "v2": srv.create(small("async_v2", size=1 << 22, streams=8))["id"],
        "seq": srv.create(small("sequential", size=1 << 22))["id"],
        "host": srv.create(small("host_overlap", streams=2))["id"],
    }
    exps = {k: srv.wait_done(v) for k, v in ids.items()}
    yield {"srv": srv, "ids": ids, "exps": exps}
    srv.cleanup()


@pytest.mark.parametrize("which", ["v1", "v2", "seq"])
def test_every_op_of_a_sim_run_has_its_call(origin, which):
    a, eid = origin["srv"], origin["ids"][which]
    for rep in range(origin["exps"][which]["result"]["reps"]):
        tl = timeline(a, eid, rep)
        ops, calls = tl["ops"], tl["calls"]
        check(len(calls) == len(ops) and all(set(c) == CALL_KEYS for c in calls),
              f"{len(ops)} calls of keys {sorted(CALL_KEYS)}", [sorted(c) for c in calls[:2]], f"{which} rep {rep}")
        check([key(c) for c in calls] == [key(o) for o in ops], "one call per op, in the ops' (issue) order",
              [key(c) for c in calls][:6], f"{which} rep {rep}")
        for prev, c in zip(calls, calls[1:]):
            check(prev["end_us"] <= c["start_us"] + EPS, "one thread: a call starts after the one before returned",
                  (prev, c), f"{which} rep {rep}")
        for o, c in zip(ops, calls):
            check(c["start_us"] <= c["end_us"] and c["end_us"] <= o["start_us"] + EPS or
                  (which == "seq" and o["op"] != "kernel" and c["end_us"] >= o["end_us"] - EPS),
                  "an async op starts once its call returned; a blocking copy's call returns after its copy",
                  (c, o), f"{which} rep {rep}")
        check(abs(calls[0]["start_us"]) < 1.0, "the rep's first call at its start (the previous rep's sync returned)",
              calls[0]["start_us"], f"{which} rep {rep}")
        if which == "seq":  # a blocking copy is handed over inside its call, which returns after it
            check(calls[0]["start_us"] < tl["lead_us"] < calls[0]["end_us"],
                  f"the first op starts inside its call, {calls[0]['start_us']}-{calls[0]['end_us']}", tl["lead_us"],
                  f"{which} rep {rep}: lead_us")
        else:
            check(abs(tl["lead_us"] - calls[0]["end_us"]) < EPS,
                  f"the first op starts as its call returns: {calls[0]['end_us']}", tl["lead_us"],
                  f"{which} rep {rep}: lead_us")


def test_host_work_has_no_call(origin):
    a, eid = origin["srv"], origin["ids"]["host"]
    tl = timeline(a, eid)
    device_ops = [o for o in tl["ops"] if o["op"] != "host"]
    check(any(o["op"] == "host" for o in tl["ops"]), "host work in the timeline", [o["op"] for o in tl["ops"]],
          "host_overlap")
    check(sorted(map(key, tl["calls"])) == sorted(map(key, device_ops)), "calls of the device ops only",
          sorted(map(key, device_ops))[:4], "host_overlap calls")


def test_a_bundle_carries_the_calls_and_imports_them(origin, make_server):
    a = origin["srv"]
    ids = [origin["ids"]["v1"], origin["ids"]["host"]]
    bundle = export(a, ids)
    for eid in ids:
        for r in bundle["timelines"][eid]:
            tl = timeline(a, eid, r["rep"])
            check(r["ops"] == tl["ops"] and r.get("calls") == tl["calls"], "the rep's ops, and its calls beside them",
                  len(tl["calls"]), f"{eid} rep {r['rep']}: {len(r.get('calls') or [])} calls")
    b = make_server(name="calls-import")
    expect_status(import_bundle(b, bundle), 200)
    for eid in ids:
        for r in bundle["timelines"][eid]:
            got = timeline(b, eid, r["rep"])
            check(got["calls"] == r["calls"] and got["ops"] == r["ops"], "the imported calls", r["calls"][:2],
                  f"{eid} rep {r['rep']}: {got['calls'][:2]}")
    # the same bundle again: the same experiments, nothing added
    expect_status(import_bundle(b, bundle), 200)
    check(export(b, ids)["timelines"] == bundle["timelines"], "the store's timelines as imported, calls and all",
          "equal", "differs")


def test_a_bundle_without_calls_imports_with_none(origin, make_server):
    a, eid = origin["srv"], origin["ids"]["v2"]
    bundle = copy.deepcopy(export(a, [eid]))
    for r in bundle["timelines"][eid]:
        r.pop("calls", None)
    b = make_server(name="calls-old-bundle")
    expect_status(import_bundle(b, bundle), 200)
    tl = timeline(b, eid)
    check(tl["calls"] == [] and tl["ops"] == timeline(a, eid)["ops"], "its ops, and no calls", "[]", tl["calls"][:2])


BAD_CALLS = [
    ("end-before-start", lambda cs: cs[1].update(end_us=cs[1]["start_us"] - 1), "end_us"),
    ("no-such-op", lambda cs: cs[0].update(chunk=999), None),
    ("repeated", lambda cs: cs.append(dict(cs[0])), None),
    ("start-a-string", lambda cs: cs[2].update(start_us="0"), "start_us"),
    ("op-unknown", lambda cs: cs[0].update(op="memset"), "op"),
    ("not-an-array", None, "calls"),
]


@pytest.mark.parametrize("name,spoil,field", BAD_CALLS, ids=[b[0] for b in BAD_CALLS])
def test_bad_calls_in_a_bundle_are_refused_and_change_nothing(origin, make_server, name, spoil, field):
    a, eid = origin["srv"], origin["ids"]["v1"]
    bundle = copy.deepcopy(export(a, [eid]))
    rep0 = bundle["timelines"][eid][0]
    if spoil is None:
        rep0["calls"] = {"0": rep0["calls"][0]}
    else:
        spoil(rep0["calls"])
    b = make_server(name=f"calls-bad-{name}")
    before = b.list_all()
    r = import_bundle(b, bundle)
    where = expect_error(r, 422).get("field") or ""
    check(f"timelines.{eid}[0]" in where and (field is None or where.endswith(field)) and "calls" in where,
          f"timelines.{eid}[0].calls…{field or ''}", where, f"{name}: error.field")
    check(b.list_all() == before, "the store unchanged", before, f"{name}: after the refused import")


def test_the_trace_adds_the_calls_when_asked(origin):
    a, eid = origin["srv"], origin["ids"]["v1"]
    tl = timeline(a, eid)
    plain = expect_status(a.get(f"/api/experiments/{eid}/trace"), 200)
    check(expect_status(a.get(f"/api/experiments/{eid}/trace?calls=0"), 200) == plain, "calls=0: the trace as before",
          "equal", "differs")
    check(all(e.get("cat") != "call" for e in plain["traceEvents"]), "no calls unless asked", "none",
          [e for e in plain["traceEvents"] if e.get("cat") == "call"][:1])
    full = expect_status(a.get(f"/api/experiments/{eid}/trace?calls=1"), 200)
    calls = [e for e in full["traceEvents"] if e.get("cat") == "call"]
    check(len(calls) == len(tl["calls"]), f"{len(tl['calls'])} call events", len(calls), "?calls=1")
    for e, c in zip(calls, tl["calls"]):
        check(e["ph"] == "X" and e["name"] == f"call {c['op']}" and abs(e["ts"] - c["start_us"]) < EPS and
              abs(e["dur"] - (c["end_us"] - c["start_us"])) < EPS and e["args"]["stream"] == c["stream"],
              f"call {c['op']} at {c['start_us']} for {c['end_us'] - c['start_us']} us", e, "a call event")
    names = {e["args"]["name"] for e in full["traceEvents"] if e["ph"] == "M"}
    check({"host", "issuing thread: calls"} <= names, "a host process and its issuing thread", sorted(names),
          "?calls=1 metadata")
    check([e for e in full["traceEvents"] if e.get("cat") != "call" and e["ph"] == "X"] ==
          [e for e in plain["traceEvents"] if e["ph"] == "X"], "the ops' events as without calls", "equal", "differs")
    expect_error(a.get(f"/api/experiments/{eid}/trace?calls=yes"), 422, field="calls")


def test_a_prediction_has_the_models_calls(origin):
    """POST /api/predict answers the model's host calls beside each prediction's ops; predicted from the sim's
    own 1-stream trace, they are the sim's N-stream run's calls."""
    a = origin["srv"]
    basis = a.create(small("async_v1", size=1 << 22, streams=1, chunks=4))["id"]
    target = a.create(small("async_v1", size=1 << 22, streams=4))["id"]
    a.wait_done(basis)
    a.wait_done(target)
    pr = expect_status(a.post("/api/predict", {"from_experiment": basis, "variant": "async_v1", "streams": [4],
                                               "chunks": 4}), 200)["predictions"][0]
    ops, calls = pr["ops"], pr["calls"]
    check(len(calls) == len(ops) and all(set(c) == CALL_KEYS for c in calls) and
          [key(c) for c in calls] == [key(o) for o in ops], "a call per op, in the ops' order", len(ops),
          [key(c) for c in calls][:4])
    run = timeline(a, target)
    for c, r in zip(calls, run["calls"]):
        check(abs(c["start_us"] - r["start_us"]) < 1e-6 and abs(c["end_us"] - r["end_us"]) < 1e-6,
              f"the sim's call {r}", c, "a predicted call against the sim's own run")
