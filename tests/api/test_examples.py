"""Bundles as files: `streamlab import FILE|DIR` and the example bundles (GET/POST /api/examples).

The bundles are made here from a running server's compact export (as examples/ is made on the lent
GPUs), written to a temporary folder given with --examples (or to the CLI).
"""

import json
import sqlite3

import pytest

from conftest import Server, check, expect_error, expect_status, run_cli, small
from test_bundles import check_same_snapshot, snapshot
from test_bundles_compact import export_ops


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """Three done experiments, exported as two compact bundles (b-second.json holds one, a-first.json two)."""
    srv = Server(tmp_path_factory.mktemp("examples-origin"), name="examples-origin", machine_label="example host")
    srv.start()
    ids = [srv.create(small("async_v2", streams=2 + k))["id"] for k in range(3)]
    for eid in ids:
        srv.wait_done(eid)
    yield {"srv": srv, "ids": ids, "first": export_ops(srv, ids[:2], "median"),
           "second": export_ops(srv, ids[2:], "median")}
    srv.cleanup()


def write_examples(folder, origin):
    folder.mkdir(exist_ok=True)
    (folder / "a-first.json").write_text(json.dumps(origin["first"]))
    (folder / "b-second.json").write_text(json.dumps(origin["second"]))
    (folder / "README.md").write_text("not a bundle: ignored\n")
    return folder


def counts(imported=0, unchanged=0, machines=0, sweeps=0):
    return {"imported": imported, "unchanged": unchanged, "machines": machines, "sweeps": sweeps}


def cli_import(path, db):
    code, out, err = run_cli(["import", str(path), "--db", str(db)])
    return code, out, err


def experiments_in(db):
    with sqlite3.connect(db) as c:
        return sorted(r[0] for r in c.execute("SELECT id FROM experiments"))


# ---------------------------------------------------------------- streamlab import

def test_cli_import_of_a_file_prints_the_counts_and_is_idempotent(origin, tmp_path):
    bundle = tmp_path / "one.json"
    bundle.write_text(json.dumps(origin["first"]))
    db = tmp_path / "cli.db"
    code, out, err = cli_import(bundle, db)
    check(code == 0, "exit 0", code, f"streamlab import FILE\n  stderr: {err[-1500:]}")
    check(json.loads(out) == counts(2, 0, 1), counts(2, 0, 1), out, "streamlab import stdout")
    code, out, err = cli_import(bundle, db)
    check(code == 0 and json.loads(out) == counts(0, 2), f"exit 0, {counts(0, 2)}", f"{code} {out}",
          f"a second import\n  stderr: {err[-1500:]}")
    srv = Server(tmp_path, name="after-import", db=db, workers=0)
    try:
        srv.start()
        a = origin["srv"]
        for eid in origin["ids"][:2]:
            check(srv.experiment(eid) == a.experiment(eid), "the experiment as on the origin", srv.experiment(eid), eid)
            got = expect_status(srv.get(f"/api/experiments/{eid}/timeline"), 200)
            check(got == expect_status(a.get(f"/api/experiments/{eid}/timeline"), 200), "the median rep's timeline",
                  json.dumps(got)[:400], f"{eid} timeline served from the imported store")
    finally:
        srv.cleanup()


def test_cli_import_of_a_folder_sums_the_counts_in_name_order(origin, tmp_path):
    folder = write_examples(tmp_path / "examples", origin)
    db = tmp_path / "cli.db"
    code, out, err = cli_import(folder, db)
    check(code == 0, "exit 0", code, f"streamlab import DIR\n  stderr: {err[-1500:]}")
    # one machine, inserted by the first file; the second finds it known and no newer
    check(json.loads(out) == counts(3, 0, 1), counts(3, 0, 1), out, "streamlab import DIR stdout")
    check(experiments_in(db) == sorted(origin["ids"]), sorted(origin["ids"]), experiments_in(db), "the store")
    code, out, err = cli_import(folder, db)
    check(code == 0 and json.loads(out) == counts(0, 3), f"exit 0, {counts(0, 3)}", f"{code} {out}",
          f"a second import of the folder\n  stderr: {err[-1500:]}")


def test_cli_import_of_a_bad_bundle_exits_2_and_stores_nothing(origin, tmp_path):
    folder = write_examples(tmp_path / "examples", origin)
    bad = dict(origin["second"], ops="some")
    (folder / "c-bad.json").write_text(json.dumps(bad))
    db = tmp_path / "cli.db"
    code, out, err = cli_import(folder, db)
    check(code == 2, "exit 2", code, f"streamlab import of a folder with a bad bundle\n  stdout: {out[-500:]}")
    e = json.loads(err)["error"]
    check(e["field"] == "ops" and "c-bad.json" in e["message"], "an error naming ops and the file", e,
          "stderr of a bad import")
    check(experiments_in(db) == [], "nothing stored", experiments_in(db), "the store after a bad folder")
    (folder / "c-bad.json").write_text("{not json")
    code, out, err = cli_import(folder / "c-bad.json", db)
    check(code == 2 and "error" in json.loads(err), "exit 2 with a JSON error", f"{code} {err[-500:]}",
          "import of malformed JSON")
    code, out, err = cli_import(tmp_path / "missing.json", db)
    check(code == 2 and "error" in json.loads(err), "exit 2 with a JSON error", f"{code} {err[-500:]}",
          "import of a missing file")


def test_usage_names_import():
    code, out, err = run_cli(["--help"])
    check("streamlab import" in out, "the import subcommand in the usage", out[-1500:], "streamlab --help")


# ---------------------------------------------------------------- GET/POST /api/examples

def test_examples_are_listed_and_imported(origin, make_server, tmp_path):
    folder = write_examples(tmp_path / "examples", origin)
    b = make_server(name="newcomer", sim_devices=2, extra=["--examples", str(folder)])
    listing = expect_status(b.get("/api/examples"), 200)
    check(listing["dir"] == str(folder), str(folder), listing["dir"], "the examples folder")
    files = [i["file"] for i in listing["items"]]
    check(files == ["a-first.json", "b-second.json"], "the two bundles in name order", files, "GET /api/examples")
    a = origin["srv"]
    for item, key, n in zip(listing["items"], ("first", "second"), (2, 1)):
        bundle = origin[key]
        check(item["bytes"] == (folder / item["file"]).stat().st_size, "the file's size", item, item["file"])
        check(item["experiments"] == n, n, item["experiments"], f"{item['file']} experiments")
        check(len(item["machines"]) == 1 and "example host" in item["machines"][0], "the origin's label",
              item["machines"], f"{item['file']} machines")
        last = max(e["finished_at"] for e in bundle["experiments"])
        check(item["measured"] == last[:10], last[:10], item["measured"], f"{item['file']} measured")
        check(item["ops"] == "median", "median", item["ops"], f"{item['file']} ops")
    got = expect_status(b.post("/api/examples", raw=b"", content_type=None), 200)
    check(got == counts(3, 0, 1), counts(3, 0, 1), got, "POST /api/examples without a body")
    for eid in origin["ids"]:
        check(b.experiment(eid) == a.experiment(eid), "the example's experiment", b.experiment(eid), eid)
    before = snapshot(b)
    again = expect_status(b.post("/api/examples", {}), 200)
    check(again == counts(0, 3), counts(0, 3), again, "POST /api/examples {} a second time")
    check_same_snapshot(before, snapshot(b), "after loading the examples twice")
    expect_error(b.post("/api/examples", {"file": "a-first.json"}), 422, field="file")
    expect_error(b.post("/api/examples", [1]), 422)
    expect_error(b.post("/api/examples", raw=b"{", content_type="application/json"), 400)
    check_same_snapshot(before, snapshot(b), "after refused POSTs")


def test_a_bundle_of_a_machine_of_several_gpus_names_them_all(origin, make_server, tmp_path):
    """The listing names a machine by all its GPUs: "label (2 × NAME)" where they share a name,
    "label (A + B)" where they differ (it had named the first GPU only)."""
    folder = tmp_path / "several"
    folder.mkdir()
    for fname, second in (("a-same.json", None), ("b-mixed.json", "Other GPU")):
        bundle = json.loads(json.dumps(origin["first"]))
        machine = bundle["machines"][0]
        extra = dict(machine["gpus"][0], index=1)
        if second:
            extra["name"] = second
        machine["gpus"].append(extra)
        machine["device_count"] = 2
        (folder / fname).write_text(json.dumps(bundle))
    b = make_server(extra=["--examples", str(folder)])
    listing = expect_status(b.get("/api/examples"), 200)
    gpu = origin["first"]["machines"][0]["gpus"][0]["name"]
    names = [i["machines"] for i in listing["items"]]
    check(names == [[f"example host (2 \u00d7 {gpu})"], [f"example host ({gpu} + Other GPU)"]],
          f"example host (2 × {gpu}), example host ({gpu} + Other GPU)", names, "GET /api/examples machines")


def test_an_empty_or_missing_examples_folder_has_no_items(make_server, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder in (empty, tmp_path / "missing"):
        b = make_server(extra=["--examples", str(folder)])
        listing = expect_status(b.get("/api/examples"), 200)
        check(listing == {"items": [], "dir": str(folder)}, {"items": [], "dir": str(folder)}, listing,
              f"GET /api/examples of {folder.name}")
        got = expect_status(b.post("/api/examples", raw=b"", content_type=None), 200)
        check(got == counts(), counts(), got, f"POST /api/examples of {folder.name}")


def test_a_bad_example_file_is_listed_with_its_error_and_stores_nothing(origin, make_server, tmp_path):
    folder = write_examples(tmp_path / "examples", origin)
    (folder / "c-bad.json").write_text("{not json")
    b = make_server(name="bad-examples", sim_devices=2, extra=["--examples", str(folder)])
    items = expect_status(b.get("/api/examples"), 200)["items"]
    check([i["file"] for i in items] == ["a-first.json", "b-second.json", "c-bad.json"], "three files",
          [i["file"] for i in items], "GET /api/examples")
    check("error" in items[2] and "experiments" not in items[2], "an error for the bad one", items[2], "c-bad.json")
    before = snapshot(b)
    expect_error(b.post("/api/examples", {}), 400)
    check_same_snapshot(before, snapshot(b), "after POST /api/examples with a bad file")


def test_loading_the_examples_needs_the_token(origin, make_server, tmp_path):
    folder = write_examples(tmp_path / "examples", origin)
    token = tmp_path / "token"
    token.write_text("ex4mple-t0ken\n")
    b = make_server(name="guarded", sim_devices=2, extra=["--token-file", str(token), "--examples", str(folder)])
    expect_status(b.get("/api/examples"), 200)  # a read: open unless --private
    expect_error(b.post("/api/examples", raw=b"", content_type=None), 401)
    r = b.post("/api/examples", {}, headers={"Authorization": "Bearer ex4mple-t0ken"})
    check(expect_status(r, 200)["imported"] == 3, 3, r.text, "POST /api/examples with the token")
