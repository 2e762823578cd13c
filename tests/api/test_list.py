"""GET /api/experiments: newest first, each filter, limit, and paging through `next`."""

import pytest

from conftest import Server, check, expect_json_content_type, expect_status, small


@pytest.fixture(scope="module")
def listing(tmp_path_factory):
    """An idle server holding a known set of experiments, created in a known order."""
    srv = Server(tmp_path_factory.mktemp("list"), name="list", workers=0)
    srv.start()
    specs = [
        small("async_v1", streams=2, label="alpha"),
        small("async_v2", streams=4, label="beta"),
        small("async_v1", streams=4, size=1 << 21, label="alpha"),
        small("sequential", streams=1, label="gamma"),
        small("async_v2", streams=2, size=1 << 21, label="beta"),
        small("async_v1", streams=8, label="alpha"),
        small("round_robin", streams=2, chunks=6, label="delta"),
    ]
    created = [srv.create(s) for s in specs]
    cancelled = created[3]["id"]
    expect_status(srv.delete(f"/api/experiments/{cancelled}"), 200)
    sweep = expect_status(srv.post("/api/sweeps", {"base": small(label="sw"),
                                                   "axes": {"streams": [1, 2, 3]}}), 202)
    yield {"srv": srv, "specs": specs, "ids": [e["id"] for e in created],
           "cancelled": cancelled, "sweep": sweep}
    srv.cleanup()


def ids_of(body):
    return [e["id"] for e in body["items"]]


def newest_first(ids_in_creation_order):
    return list(reversed(ids_in_creation_order))


def test_list_shape_and_newest_first(listing):
    srv = listing["srv"]
    r = srv.get("/api/experiments")
    body = expect_status(r, 200)
    expect_json_content_type(r)
    check(isinstance(body.get("items"), list) and "next" in body, '{"items": [...], "next": ...}',
          sorted(body), "list shape")
    want = newest_first(listing["ids"] + listing["sweep"]["experiments"])
    check(ids_of(body) == want, want, ids_of(body), "all experiments, newest first")
    check(body["next"] is None, "next null when everything fits", body["next"], "list next")
    for item in body["items"]:
        for f in ("id", "status", "spec", "machine_id", "created_at"):
            check(f in item, f"item field {f!r}", sorted(item), "list item")


@pytest.mark.parametrize("query,pred", [
    ("status=queued", lambda e: e["status"] == "queued"),
    ("status=cancelled", lambda e: e["status"] == "cancelled"),
    ("status=done", lambda e: e["status"] == "done"),
    ("variant=async_v1", lambda e: e["spec"]["variant"] == "async_v1"),
    ("variant=async_v2", lambda e: e["spec"]["variant"] == "async_v2"),
    ("variant=multi_gpu", lambda e: e["spec"]["variant"] == "multi_gpu"),
    ("label=alpha", lambda e: e["spec"]["label"] == "alpha"),
    ("label=beta", lambda e: e["spec"]["label"] == "beta"),
    ("size=2097152", lambda e: e["spec"]["size"] == 2097152),
    ("streams=4", lambda e: e["spec"]["streams"] == 4),
    ("streams=2&variant=async_v2", lambda e: e["spec"]["streams"] == 2 and e["spec"]["variant"] == "async_v2"),
    ("label=alpha&streams=8", lambda e: e["spec"]["label"] == "alpha" and e["spec"]["streams"] == 8),
])
def test_list_filter_returns_exactly_the_matching_experiments(listing, query, pred):
    srv = listing["srv"]
    everything = srv.list_all()
    want = [e["id"] for e in everything if pred(e)]
    got = ids_of(expect_status(srv.get(f"/api/experiments?{query}&limit=500"), 200))
    check(got == want, want, got, f"GET /api/experiments?{query}")


def test_list_filter_by_machine(listing):
    srv = listing["srv"]
    mid = srv.health_machine()["id"]
    everything = [e["id"] for e in srv.list_all()]
    got = ids_of(expect_status(srv.get(f"/api/experiments?machine={mid}&limit=500"), 200))
    check(got == everything, everything, got, "machine=<this machine>")
    got = ids_of(expect_status(srv.get("/api/experiments?machine=no-such-machine"), 200))
    check(got == [], [], got, "machine=no-such-machine")


def test_list_filter_by_sweep(listing):
    srv = listing["srv"]
    sweep = listing["sweep"]
    got = ids_of(expect_status(srv.get(f"/api/experiments?sweep={sweep['id']}"), 200))
    want = newest_first(sweep["experiments"])
    check(got == want, want, got, f"sweep={sweep['id']}")
    for e in expect_status(srv.get(f"/api/experiments?sweep={sweep['id']}"), 200)["items"]:
        check(e.get("sweep_id") == sweep["id"], sweep["id"], e.get("sweep_id"), "item sweep_id")
    got = ids_of(expect_status(srv.get("/api/experiments?sweep=no-such-sweep"), 200))
    check(got == [], [], got, "sweep=no-such-sweep")


def test_list_limit_caps_the_page(listing):
    srv = listing["srv"]
    body = expect_status(srv.get("/api/experiments?limit=2"), 200)
    check(len(body["items"]) == 2, 2, len(body["items"]), "limit=2 items")
    check(isinstance(body["next"], str) and body["next"], "a next cursor", body["next"], "limit=2 next")
    body = expect_status(srv.get("/api/experiments?limit=1"), 200)
    check(len(body["items"]) == 1, 1, len(body["items"]), "limit=1 items")
    body = expect_status(srv.get("/api/experiments?limit=500"), 200)
    check(len(body["items"]) == 10, 10, len(body["items"]), "limit=500 items")


def test_list_default_limit_is_50(make_server):
    srv = make_server(workers=0)
    expect_status(srv.post("/api/sweeps", {"base": small(), "axes": {
        "streams": list(range(1, 14)), "host_memory": ["pinned", "pageable"],
        "variant": ["async_v1", "async_v2"]}}), 202)  # 52 experiments
    body = expect_status(srv.get("/api/experiments"), 200)
    check(len(body["items"]) == 50, 50, len(body["items"]), "default limit")
    check(body["next"] is not None, "a next cursor", body["next"], "default page next")


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 10])
def test_paging_through_next_visits_all_once_newest_first(listing, limit):
    srv = listing["srv"]
    want = newest_first(listing["ids"] + listing["sweep"]["experiments"])
    got, cursor, pages = [], None, 0
    while True:
        q = f"limit={limit}" + (f"&before={cursor}" if cursor else "")
        body = expect_status(srv.get(f"/api/experiments?{q}"), 200)
        check(len(body["items"]) <= limit, f"<= {limit} items", len(body["items"]), f"page {pages}")
        got += ids_of(body)
        cursor = body["next"]
        pages += 1
        if cursor is None or pages > 20:
            break
    check(len(got) == len(set(got)), "no duplicates", got, f"paging with limit={limit}")
    check(got == want, want, got, f"paging with limit={limit}")


def test_paging_with_a_filter(listing):
    srv = listing["srv"]
    want = [e["id"] for e in srv.list_all() if e["spec"]["label"] == "alpha"]
    got, cursor = [], None
    for _ in range(10):
        q = "label=alpha&limit=1" + (f"&before={cursor}" if cursor else "")
        body = expect_status(srv.get(f"/api/experiments?{q}"), 200)
        got += ids_of(body)
        cursor = body["next"]
        if cursor is None:
            break
    check(got == want, want, got, "paging label=alpha one at a time")
