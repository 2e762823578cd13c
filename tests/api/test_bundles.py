"""Bundles (GET /api/export, POST /api/import) and the runs table as CSV (GET /api/experiments.csv).

What an import must keep: every experiment as GET /api/experiments/{id} shows it (status, spec, machine_id,
sweep, times, error, result), every repetition's timeline, the sweep, and the machine. By design only two
things are per store, so these tests ignore nothing else:
  * a machine's first_seen/last_seen: kept from the bundle when the machine is new to the store (so the
    comparisons here, into fresh stores, include them), but a store that already knew the machine keeps
    its own first_seen, and the importing server's own machine record is never overwritten;
  * the local listing order (newest first means "newest in this store": imported ones are listed by when
    they were imported, not when they ran).
"""

import copy
import csv
import io
import json

import pytest

from conftest import Server, check, expect_error, expect_json_content_type, expect_status, small

CSV_COLUMNS = ["id", "created_at", "machine_id", "status", "variant", "size", "streams", "chunks", "kernel",
               "launch", "host_memory", "default_stream", "backend", "total_median_ms", "total_min_ms",
               "total_max_ms", "h2d_gbps", "d2h_gbps", "overlap", "floor_ms", "efficiency", "verified", "label"]

TRICKY_LABEL = 'comma, "quote"\nand a newline'


# ---------------------------------------------------------------- helpers

def export(srv, ids=None, sweep=None):
    query = "&".join(f"experiment={i}" for i in ids) if ids is not None else f"sweep={sweep}"
    r = srv.get(f"/api/export?{query}")
    body = expect_status(r, 200)
    expect_json_content_type(r)
    return body


def import_bundle(srv, bundle=None, raw=None):
    return srv.post("/api/import", bundle, raw=raw)


def snapshot(srv):
    """Everything a client can see of the store: the full listing, the machines, every sweep, every
    experiment with every repetition's timeline (as a bundle), and the CSV."""
    items = srv.list_all()
    ids = [e["id"] for e in items]
    sweeps = sorted({e["sweep_id"] for e in items if e.get("sweep_id")})
    return {
        "experiments": items,
        "machines": sorted(srv.machines(), key=lambda m: m["id"]),
        "sweeps": {s: expect_status(srv.get(f"/api/sweeps/{s}"), 200) for s in sweeps},
        "bundle": export(srv, ids) if ids else None,
        "csv": expect_status_text(srv.get("/api/experiments.csv"), 200),
    }


def expect_status_text(resp, status):
    check(resp.status_code == status, status, resp.status_code, f"GET {resp.request.url}: {resp.text[:300]}")
    return resp.text


def check_same_snapshot(before, after, what):
    for key in before:
        check(before[key] == after[key], f"{key} unchanged", f"{key} changed:\n  before {json.dumps(before[key])[:1500]}"
              f"\n  after  {json.dumps(after[key])[:1500]}", what)


def run_fresh(srv, n, **over):
    """n new finished experiments on srv (it has a worker)."""
    ids = [srv.create(small("async_v2", streams=2 + k, **over))["id"] for k in range(n)]
    for eid in ids:
        srv.wait_done(eid)
    return ids


def this_machine(srv):
    return expect_status(srv.get("/api/machines"), 200)["this"]


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """A server holding finished experiments of each kind: single runs (one with a label that CSV must
    quote), a cancelled one, and a sweep. Made idle first so that one can be cancelled, then restarted
    with its worker to run the rest."""
    srv = Server(tmp_path_factory.mktemp("origin"), name="origin", workers=0, machine_label="origin host")
    srv.start()
    singles = [srv.create(small("async_v1", streams=2, label=TRICKY_LABEL))["id"],
               srv.create(small("async_v2", streams=4))["id"],
               srv.create(small("sequential", streams=1))["id"]]
    cancelled = singles[2]
    expect_status(srv.delete(f"/api/experiments/{cancelled}"), 200)
    sweep = expect_status(srv.post("/api/sweeps", {"base": small(label="sweep"), "axes": {"streams": [1, 2, 4]}}),
                          202)
    srv.stop()
    srv.start(workers=None)
    ids = singles + sweep["experiments"]
    done = [i for i in ids if i != cancelled]
    for eid in done:
        srv.wait_done(eid)
    yield {"srv": srv, "ids": ids, "done": done, "cancelled": cancelled, "sweep": sweep["id"],
           "sweep_ids": sweep["experiments"]}
    srv.cleanup()


# ---------------------------------------------------------------- export

def test_export_is_the_documented_bundle(origin):
    a, ids = origin["srv"], origin["ids"]
    b = export(a, ids)
    check(b.get("format") == "streamlab-bundle" and b.get("version") == 1, "format streamlab-bundle, version 1",
          {k: b.get(k) for k in ("format", "version")}, "bundle header")
    check([e["id"] for e in b["experiments"]] == ids, ids, [e["id"] for e in b["experiments"]],
          "experiments in the order asked for")
    for e in b["experiments"]:
        check(e == a.experiment(e["id"]), "the experiment as GET /api/experiments/{id}", e, "bundle experiment")
    machine_id = a.experiment(ids[0])["machine_id"]
    check([m["id"] for m in b["machines"]] == [machine_id], [machine_id], [m["id"] for m in b["machines"]],
          "one machine, once")
    check(b["machines"][0] == expect_status(a.get(f"/api/machines/{machine_id}"), 200),
          "the machine as GET /api/machines/{id}", b["machines"][0], "bundle machine")
    check([s["id"] for s in b["sweeps"]] == [origin["sweep"]], [origin["sweep"]], b["sweeps"], "the sweep, once")
    check(set(b["timelines"]) == set(origin["done"]), sorted(origin["done"]), sorted(b["timelines"]),
          "a timeline entry for every done experiment (none for the cancelled one)")
    for eid in origin["done"]:
        reps = a.experiment(eid)["result"]["reps"]
        tl = b["timelines"][eid]
        check([r["rep"] for r in tl] == list(range(reps)), list(range(reps)), [r["rep"] for r in tl],
              f"every rep of {eid}")
        for r in tl:
            one = expect_status(a.get(f"/api/experiments/{eid}/timeline?rep={r['rep']}"), 200)
            check(r["ops"] == one["ops"], "the ops of GET .../timeline?rep=K", r["ops"][:3], f"{eid} rep {r['rep']}")
            check(len(r["ops"]) > 0, "ops recorded", r["ops"], f"{eid} rep {r['rep']}")


def test_export_by_sweep_and_by_comma_list(origin):
    a = origin["srv"]
    b = export(a, sweep=origin["sweep"])
    check([e["id"] for e in b["experiments"]] == origin["sweep_ids"], origin["sweep_ids"],
          [e["id"] for e in b["experiments"]], "a sweep's experiments in sweep order")
    check([s["id"] for s in b["sweeps"]] == [origin["sweep"]], [origin["sweep"]], b["sweeps"], "the sweep")
    joined = expect_status(a.get("/api/export?experiment=" + ",".join(origin["sweep_ids"])), 200)
    check(joined == b, "the same bundle", joined, "?experiment=a,b,c equals ?sweep=")
    twice = export(a, origin["sweep_ids"][:1] * 2)
    check(len(twice["experiments"]) == 1, 1, len(twice["experiments"]), "an id asked for twice is exported once")


def test_export_errors(origin):
    a = origin["srv"]
    expect_error(a.get("/api/export"), 422)
    expect_error(a.get(f"/api/export?experiment={origin['ids'][0]}&sweep={origin['sweep']}"), 422)
    expect_error(a.get("/api/export?experiment=e-nosuchexperiment"), 404, field="experiment")
    expect_error(a.get(f"/api/export?experiment={origin['ids'][0]}&experiment=e-nosuch"), 404)
    expect_error(a.get("/api/export?sweep=s-nosuchsweep"), 404, field="sweep")
    expect_error(a.get("/api/export?sweep="), 422)


# ---------------------------------------------------------------- import

def test_export_import_into_a_fresh_server_reproduces_everything(origin, make_server):
    a, ids = origin["srv"], origin["ids"]
    bundle = export(a, ids)
    b = make_server(name="central", sim_devices=2)  # 2 simulated GPUs: another machine id
    b_machine = this_machine(b)
    a_machine = bundle["machines"][0]["id"]
    check(a_machine != b_machine, "two different machines", (a_machine, b_machine), "machine ids")
    counts = expect_status(import_bundle(b, bundle), 200)
    check(counts == {"imported": len(ids), "unchanged": 0, "machines": 1, "sweeps": 1},
          {"imported": len(ids), "unchanged": 0, "machines": 1, "sweeps": 1}, counts, "import counts")
    for eid in ids:
        want = a.experiment(eid)
        got = b.experiment(eid)
        check(got == want, json.dumps(want)[:1500], json.dumps(got)[:1500], f"imported experiment {eid}")
        if want["status"] != "done":
            continue
        for rep in range(want["result"]["reps"]):
            path = f"/api/experiments/{eid}/timeline?rep={rep}"
            check(expect_status(b.get(path), 200) == expect_status(a.get(path), 200), "the same timeline",
                  "a different one", path)
        path = f"/api/experiments/{eid}/trace"
        check(expect_status(b.get(path), 200) == expect_status(a.get(path), 200), "the same trace", "a different one",
              path)
    sweep_path = f"/api/sweeps/{origin['sweep']}"
    check(expect_status(b.get(sweep_path), 200) == expect_status(a.get(sweep_path), 200), "the same sweep",
          "a different one", sweep_path)
    # with their machine: the machine (new to b, so first_seen/last_seen come from the bundle too) and the filter
    machine_path = f"/api/machines/{a_machine}"
    check(expect_status(b.get(machine_path), 200) == expect_status(a.get(machine_path), 200), "the same machine",
          expect_status(b.get(machine_path), 200), machine_path)
    listed = {e["id"] for e in b.list_all(f"machine={a_machine}")}
    check(listed == set(ids), sorted(ids), sorted(listed), "b's listing filtered by the imported machine")
    check(this_machine(b) == b_machine, b_machine, this_machine(b), "b is still itself")
    # besides the embedded profiles' machines, which every store knows
    own = [m["id"] for m in b.machines() if "profile" not in m]
    check(sorted(own) == sorted([a_machine, b_machine]), "b's machine and a's", own, "GET /api/machines on b")
    again = export(b, ids)
    check(again == bundle, "b's export equals a's", json.dumps(again)[:2000], "export after import")


def test_double_import_is_a_no_op(origin, make_server):
    a, ids = origin["srv"], origin["ids"]
    bundle = export(a, ids)
    b = make_server(name="central", sim_devices=2)
    expect_status(import_bundle(b, bundle), 200)
    before = snapshot(b)
    counts = expect_status(import_bundle(b, bundle), 200)
    check(counts == {"imported": 0, "unchanged": len(ids), "machines": 0, "sweeps": 0},
          {"imported": 0, "unchanged": len(ids), "machines": 0, "sweeps": 0}, counts, "second import")
    check_same_snapshot(before, snapshot(b), "the store after the second import")


def test_importing_a_bundle_into_its_own_server_changes_nothing(origin):
    a, ids = origin["srv"], origin["ids"]
    before = snapshot(a)
    counts = expect_status(import_bundle(a, export(a, ids)), 200)
    check(counts == {"imported": 0, "unchanged": len(ids), "machines": 0, "sweeps": 0},
          {"imported": 0, "unchanged": len(ids), "machines": 0, "sweeps": 0}, counts, "self import")
    check_same_snapshot(before, snapshot(a), "the origin after importing its own bundle")


def last_op(bundle):
    eid = bundle["experiments"][-1]["id"]
    return bundle["timelines"][eid][-1]["ops"][-1]


def set_path(obj, path, value):
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


# Each corruption hits the LAST experiment (or its last op), after parts that an import writing as it goes
# would already have written. (name, mutate(bundle) -> raw bytes or None, acceptable statuses)
CORRUPTIONS = [
    ("truncated JSON", lambda b: json.dumps(b).encode()[: len(json.dumps(b)) // 2], (400,)),
    ("not an object", lambda b: json.dumps([b]).encode(), (422,)),
    ("wrong format", lambda b: set_path(b, ["format"], "tarball"), (422,)),
    ("unknown version", lambda b: set_path(b, ["version"], 2), (422,)),
    ("experiments not an array", lambda b: set_path(b, ["experiments"], {"a": 1}), (422,)),
    ("a median that is a string", lambda b: set_path(b, ["experiments", -1, "result", "total_ms", "median"], "fast"),
     (422,)),
    ("created_at a number", lambda b: set_path(b, ["experiments", -1, "created_at"], 12345), (422,)),
    ("streams a string", lambda b: set_path(b, ["experiments", -1, "spec", "streams"], "eight"), (422,)),
    ("a spec the parser refuses", lambda b: set_path(b, ["experiments", -1, "spec", "block_size"], 100), (422,)),
    ("verified not a boolean", lambda b: set_path(b, ["experiments", -1, "result", "verified"], "yes"), (422,)),
    ("reps_ms one short", lambda b: b["experiments"][-1]["result"]["reps_ms"].pop(), (422,)),
    ("a rep time that is null", lambda b: set_path(b, ["experiments", -1, "result", "reps_ms", 0], None), (422,)),
    ("a done experiment without its result", lambda b: set_path(b, ["experiments", -1, "result"], None), (422,)),
    ("a result without its experiment (timeline of an unknown id)",
     lambda b: set_path(b, ["timelines", "e-notinthisbundle"], b["timelines"][b["experiments"][-1]["id"]]), (422,)),
    ("a result without its experiment (experiment removed, timeline kept)",
     lambda b: b["experiments"].pop(), (422,)),
    ("an op with a bad op kind", lambda b: set_path(last_op(b), ["op"], "memcpy"), (422,)),
    ("an op start that is a string", lambda b: set_path(last_op(b), ["start_us"], "0"), (422,)),
    ("an op without its device", lambda b: last_op(b).pop("device"), (422,)),
    ("a rep beyond the result's reps", lambda b: set_path(b["timelines"][b["experiments"][-1]["id"]][-1], ["rep"], 99),
     (422,)),
    ("a repeated rep", lambda b: set_path(b["timelines"][b["experiments"][-1]["id"]][-1], ["rep"], 0), (422,)),
    ("a queued experiment", lambda b: (set_path(b, ["experiments", -1, "status"], "queued"),
                                       set_path(b, ["experiments", -1, "result"], None),
                                       b["timelines"].pop(b["experiments"][-1]["id"])), (422,)),
    ("a running experiment", lambda b: (set_path(b, ["experiments", -1, "status"], "running"),
                                        set_path(b, ["experiments", -1, "result"], None),
                                        b["timelines"].pop(b["experiments"][-1]["id"])), (422,)),
    ("an unknown machine", lambda b: (set_path(b, ["experiments", -1, "machine_id"], "m-nowhere"),), (422,)),
    ("an experiment twice", lambda b: b["experiments"].append(copy.deepcopy(b["experiments"][-1])), (422,)),
    ("an id with a slash", lambda b: set_path(b, ["experiments", -1, "id"], "e-../../x"), (422,)),
    ("a machine without its id", lambda b: b["machines"][-1].pop("id"), (422,)),
]


def test_a_corrupted_bundle_changes_nothing(origin, make_server):
    a = origin["srv"]
    b = make_server(name="central", sim_devices=2)
    expect_status(import_bundle(b, export(a, origin["ids"])), 200)  # b holds data already
    fresh = run_fresh(a, 2)  # new to b: a writing-as-it-goes import would store them
    good = export(a, fresh)
    before = snapshot(b)
    for name, mutate, statuses in CORRUPTIONS:
        bad = copy.deepcopy(good)
        raw = mutate(bad)
        raw = raw if isinstance(raw, bytes) else json.dumps(bad).encode()
        r = import_bundle(b, raw=raw)
        check(r.status_code in statuses, f"{statuses} for {name}", f"{r.status_code} {r.text[:400]}",
              f"import of a bundle with {name}")
        expect_error(r, r.status_code)
        check_same_snapshot(before, snapshot(b), f"the store after a bundle with {name}")
    counts = expect_status(import_bundle(b, good), 200)
    check(counts["imported"] == 2, 2, counts, "the uncorrupted bundle still imports")


def test_a_conflicting_bundle_is_refused_with_409_and_nothing_written(origin, make_server):
    a = origin["srv"]
    b = make_server(name="central", sim_devices=2)
    known = origin["done"][0]
    expect_status(import_bundle(b, export(a, [known])), 200)
    fresh = run_fresh(a, 1)
    before = snapshot(b)

    other_result = export(a, [known] + fresh)
    other_result["experiments"][0]["result"]["total_ms"]["median"] += 1.0
    expect_error(import_bundle(b, other_result), 409)
    check_same_snapshot(before, snapshot(b), "after a bundle whose result differs")
    expect_error(b.get(f"/api/experiments/{fresh[0]}"), 404)

    other_ops = export(a, [known] + fresh)
    other_ops["timelines"][known][0]["ops"][0]["end_us"] += 1.0
    expect_error(import_bundle(b, other_ops), 409)
    check_same_snapshot(before, snapshot(b), "after a bundle whose timeline differs")

    other_spec = export(a, [known] + fresh)
    other_spec["experiments"][0]["spec"]["label"] = "relabelled"
    expect_error(import_bundle(b, other_spec), 409)
    check_same_snapshot(before, snapshot(b), "after a bundle whose spec differs")

    counts = expect_status(import_bundle(b, export(a, [known] + fresh)), 200)
    check(counts["imported"] == 1 and counts["unchanged"] == 1, "1 imported, 1 unchanged", counts,
          "the true bundle imports")


def test_failed_and_cancelled_experiments_import(origin, make_server):
    a = origin["srv"]
    bundle = export(a, [origin["done"][0], origin["cancelled"]])
    failed = copy.deepcopy(bundle["experiments"][0])
    failed.update({"id": "e-crafted-failed-1", "status": "failed", "result": None,
                   "error": "device: an injected failure"})
    bundle["experiments"].append(failed)
    b = make_server(name="central", sim_devices=2)
    counts = expect_status(import_bundle(b, bundle), 200)
    check(counts["imported"] == 3, 3, counts, "done, cancelled and failed imported")
    got = b.experiment("e-crafted-failed-1")
    check(got["status"] == "failed" and got["error"] == "device: an injected failure" and got["result"] is None,
          "failed with its error, no result", got, "imported failed experiment")
    check(b.experiment(origin["cancelled"]) == a.experiment(origin["cancelled"]), "the cancelled one as it was",
          b.experiment(origin["cancelled"]), "imported cancelled experiment")
    expect_error(b.get("/api/experiments/e-crafted-failed-1/timeline"), 409)


def test_imported_experiments_are_never_run(origin, make_server):
    """Done experiments of another machine stay done; the importing server's worker stays idle."""
    a = origin["srv"]
    b = make_server(name="central", sim_devices=2)
    expect_status(import_bundle(b, export(a, origin["ids"])), 200)
    mine = b.create(small())
    b.wait_done(mine["id"])
    for eid in origin["ids"]:
        check(b.experiment(eid) == a.experiment(eid), "unchanged", b.experiment(eid)["status"], eid)
    health = b.health()
    check(health["queue_depth"] == 0, 0, health["queue_depth"], "queue depth")


def test_import_has_its_own_body_limit(origin, make_server, tmp_path):
    a = origin["srv"]
    bundle = export(a, origin["ids"])
    size = len(json.dumps(bundle))
    check(size > 4096, "a bundle over 4 KiB", size, "bundle size")
    small_specs = make_server(name="small-specs", body_max=1024)
    expect_status(import_bundle(small_specs, bundle), 200)  # --body-max is for specs, not bundles
    expect_error(small_specs.post("/api/experiments", small(label="x" * 2000)), 413)
    tight = make_server(name="tight", extra=["--import-max", "4096"])
    before = snapshot(tight)
    expect_error(import_bundle(tight, bundle), 413)
    check_same_snapshot(before, snapshot(tight), "after a bundle over --import-max")


def test_import_needs_the_token(origin, make_server, tmp_path):
    a = origin["srv"]
    token = tmp_path / "token"
    token.write_text("imp0rt-t0ken\n")
    b = make_server(name="guarded", extra=["--token-file", str(token)])
    bundle = export(a, origin["ids"][:1])
    expect_error(import_bundle(b, bundle), 401)
    r = b.post("/api/import", bundle, headers={"Authorization": "Bearer imp0rt-t0ken"})
    check(expect_status(r, 200)["imported"] == 1, 1, r.text, "import with the token")


# ---------------------------------------------------------------- CSV

def parse_csv(resp):
    check(resp.status_code == 200, 200, f"{resp.status_code} {resp.text[:300]}", "GET /api/experiments.csv")
    ct = resp.headers.get("Content-Type", "").replace(" ", "").lower()
    check(ct == "text/csv;charset=utf-8", "text/csv; charset=utf-8", ct, "CSV content type")
    rows = list(csv.reader(io.StringIO(resp.content.decode("utf-8"), newline="")))
    check(rows and rows[0] == CSV_COLUMNS, CSV_COLUMNS, rows[0] if rows else None, "CSV header")
    for row in rows[1:]:
        check(len(row) == len(CSV_COLUMNS), len(CSV_COLUMNS), row, "cells per row")
    return [dict(zip(CSV_COLUMNS, row)) for row in rows[1:]]


def test_csv_has_a_header_and_one_row_per_experiment(origin):
    a = origin["srv"]
    resp = a.get("/api/experiments.csv")
    rows = parse_csv(resp)
    items = a.list_all()
    check([r["id"] for r in rows] == [e["id"] for e in items], [e["id"] for e in items], [r["id"] for r in rows],
          "one row per experiment, newest first")
    check(resp.content.endswith(b"\r\n") and resp.content.split(b"\r\n", 1)[0].decode() == ",".join(CSV_COLUMNS),
          "CRLF line ends (RFC 4180)", resp.content[:300], "CSV bytes")
    for row, e in zip(rows, items):
        spec, res = e["spec"], e["result"]
        for col in ("id", "created_at", "machine_id", "status"):
            check(row[col] == e[col], e[col], row[col], f"{e['id']} {col}")
        for col in ("variant", "kernel", "launch", "host_memory", "default_stream", "label"):
            check(row[col] == spec[col], spec[col], row[col], f"{e['id']} {col}")
        for col in ("size", "streams", "chunks"):
            check(int(row[col]) == spec[col], spec[col], row[col], f"{e['id']} {col}")
        if res is None:
            check(all(row[c] == "" for c in CSV_COLUMNS[13:22]), "empty result cells", row, f"{e['id']} (no result)")
            check(row["backend"] == spec["backend"], spec["backend"], row["backend"], f"{e['id']} backend")
            continue
        check(row["backend"] == res["backend"], res["backend"], row["backend"], f"{e['id']} backend")
        for col, want in (("total_median_ms", res["total_ms"]["median"]), ("total_min_ms", res["total_ms"]["min"]),
                          ("total_max_ms", res["total_ms"]["max"]), ("h2d_gbps", res["h2d_gbps"]),
                          ("d2h_gbps", res["d2h_gbps"]), ("overlap", res["overlap"]), ("floor_ms", res["floor_ms"]),
                          ("efficiency", res["efficiency"])):
            got = float(row[col]) if row[col] else None
            check(got == want, want, row[col], f"{e['id']} {col} (read back exactly)")
        check(row["verified"] == ("true" if res["verified"] else "false"), res["verified"], row["verified"],
              f"{e['id']} verified")
    tricky = [r for r in rows if r["id"] == origin["ids"][0]]
    check(tricky and tricky[0]["label"] == TRICKY_LABEL, TRICKY_LABEL, tricky and tricky[0]["label"],
          "a label with a comma, quotes and a newline survives the quoting")


def test_csv_takes_the_filters_of_the_listing(origin):
    a = origin["srv"]
    for query in ("status=done", "status=cancelled", "variant=async_v1", "status=done&variant=async_v1",
                  f"sweep={origin['sweep']}", "label=sweep", "streams=2", f"size={1 << 20}", "machine=m-nowhere"):
        rows = parse_csv(a.get(f"/api/experiments.csv?{query}"))
        want = [e["id"] for e in a.list_all(query)]
        check([r["id"] for r in rows] == want, want, [r["id"] for r in rows], f"CSV ?{query}")
    items = [e["id"] for e in a.list_all()]
    rows = parse_csv(a.get("/api/experiments.csv?limit=2"))
    check([r["id"] for r in rows] == items[:2], items[:2], [r["id"] for r in rows], "?limit=2: the newest two")
    rows = parse_csv(a.get(f"/api/experiments.csv?before={items[1]}"))
    check([r["id"] for r in rows] == items[2:], items[2:], [r["id"] for r in rows], "?before= pages on")
    for bad in ("limit=0", "limit=100001", "limit=x", "status=finished", "variant=nope", "before=e-nosuch"):
        expect_error(a.get(f"/api/experiments.csv?{bad}"), 422)


def test_csv_reads_past_one_page(make_server):
    srv = make_server(name="many", workers=0)
    sweep = expect_status(srv.post("/api/sweeps", {"base": small(), "axes": {"streams": list(range(1, 601))}}), 202)
    rows = parse_csv(srv.get("/api/experiments.csv"))
    check(len(rows) == 600, 600, len(rows), "rows of 600 experiments")
    check([r["id"] for r in rows] == list(reversed(sweep["experiments"])), "newest first",
          [r["id"] for r in rows][:5], "order across pages")
    rows = parse_csv(srv.get("/api/experiments.csv?limit=550"))
    check([r["id"] for r in rows] == list(reversed(sweep["experiments"]))[:550], "the newest 550",
          len(rows), "?limit=550 across two pages")
