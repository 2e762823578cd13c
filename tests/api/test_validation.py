"""Bad requests: every spec field's bad values (422 naming the field), malformed JSON (400),
wrong content type (415), body too large (413), wrong method (405 with Allow), unknown
paths and ids (404), a full queue (429/503 with Retry-After). All against servers that
queue but run nothing, so that a bad request that slipped through would be visible."""

import json

import pytest

from conftest import check, describe, expect_error, expect_status, small

MISSING = object()

# (field at fault, its bad value); each is sent as small(**{field: value}).
BAD_FIELD_VALUES = [
    ("variant", "bogus"), ("variant", ""), ("variant", 5), ("variant", None), ("variant", ["async_v1"]),
    ("variant", "ASYNC_V1"),
    ("size", 0), ("size", -1), ("size", -1048576), ("size", 1.5), ("size", "abc"), ("size", "NaN"),
    ("size", "Infinity"), ("size", True), ("size", [1024]), ("size", {"n": 1}), ("size", 2 ** 40),
    ("size", 2 ** 63), ("size", 2 ** 64), ("size", 1e300), ("size", "1048576x"),
    ("size", "2^"), ("size", "2^x"), ("size", "2^-1"), ("size", "2^64"), ("size", "2^100"),
    ("size", "3^5"), ("size", "2^2.5"), ("size", "^20"), ("size", "2^20^2"), ("size", ""),
    ("size", "2 ^ 20x"),
    ("streams", 0), ("streams", 1025), ("streams", -1), ("streams", 2.5), ("streams", "8"),
    ("streams", True), ("streams", None), ("streams", 2 ** 40),
    ("chunks", 0), ("chunks", -4), ("chunks", "8"), ("chunks", 1.5), ("chunks", 2 ** 40),
    ("kernel", "bogus"), ("kernel", 1), ("kernel", ""),
    ("kernel_iters", 0), ("kernel_iters", -1), ("kernel_iters", "1"), ("kernel_iters", 1.5),
    ("block_size", 0), ("block_size", -256), ("block_size", 2048), ("block_size", "256"),
    ("block_size", 1.5),
    ("launch", "bogus"), ("launch", 0),
    ("host_memory", "bogus"), ("host_memory", True),
    ("default_stream", "bogus"), ("default_stream", 0),
    ("stream_flags", "bogus"), ("stream_flags", []),
    ("flush", "bogus"), ("flush", False),
    ("driver_mode", "bogus"), ("driver_mode", 3),
    ("driver_mode", "wddm"),  # the simulated Linux H100 is not WDDM: "a mismatch is 422"
    ("timing", "bogus"), ("timing", 1),
    ("trace_ops", "bogus"), ("trace_ops", "every"), ("trace_ops", 1), ("trace_ops", None),
    ("reps", 0), ("reps", -1), ("reps", "ten"), ("reps", 1.5), ("reps", 10 ** 12),
    ("warmup", -1), ("warmup", "2"), ("warmup", 1.5), ("warmup", 10 ** 12),
    ("devices", []), ("devices", [1]), ("devices", [-1]), ("devices", "0"), ("devices", 0),
    ("devices", ["0"]), ("devices", [0.5]), ("devices", [99]),
    ("backend", "bogus"), ("backend", 1),
    ("label", 5), ("label", {"a": 1}), ("label", ["x"]), ("label", True),
]


def _ident(v):
    s = json.dumps(v)
    return s if len(s) <= 24 else s[:21] + "..."


@pytest.mark.parametrize("field,value", BAD_FIELD_VALUES,
                         ids=[f"{f}={_ident(v)}" for f, v in BAD_FIELD_VALUES])
def test_bad_field_value_is_422_naming_the_field(shared_server, field, value):
    spec = small(**{field: value})
    expect_error(shared_server.post("/api/experiments", spec), 422, field=field)


def test_missing_variant_is_422_naming_variant(shared_server):
    expect_error(shared_server.post("/api/experiments", {"size": 1024}), 422, field="variant")


def test_empty_object_is_422_naming_variant(shared_server):
    expect_error(shared_server.post("/api/experiments", {}), 422, field="variant")


@pytest.mark.parametrize("name", ["bogus", "Streams", "stream", "size ", "extra_field"])
def test_unknown_field_is_422_naming_it(shared_server, name):
    spec = small()
    spec[name] = 1
    expect_error(shared_server.post("/api/experiments", spec), 422, field=name)


def test_chunks_greater_than_size_is_422_naming_chunks(shared_server):
    spec = {"variant": "async_v1", "size": 4, "streams": 1, "chunks": 8}
    expect_error(shared_server.post("/api/experiments", spec), 422, field="chunks")


def test_size_too_large_for_device_memory_is_422_naming_size(shared_server):
    # 2^36 float32 = 256 GiB, more than the simulated H100's 80 GB
    expect_error(shared_server.post("/api/experiments", small(size="2^36")), 422, field="size")


@pytest.mark.parametrize("body", [[], [{"variant": "async_v1"}], 5],
                         ids=["empty-array", "array-of-spec", "number"])
def test_body_not_an_object_is_422(shared_server, body):
    expect_error(shared_server.post("/api/experiments", body), 422)


MALFORMED = [
    b"", b"{", b"}", b"{\"variant\": \"async_v1\",}", b"{\"variant\": async_v1}",
    b"{\"variant\": \"async_v1\"", b"{'variant': 'async_v1'}", b"{\"size\": NaN, \"variant\": \"cpu\"}",
    b"{\"variant\": \"async_v1\"} trailing", b"\xff\xfe{}", b"{\"variant\": \"async\xff_v1\"}",
    b"{\"label\": \"\xc3\x28\", \"variant\": \"cpu\"}", b"[" * 10000, b"null null",
    b"{\"variant\": \"async_v1\", \"size\": 01}",
]


@pytest.mark.parametrize("raw", MALFORMED, ids=[f"m{i}" for i in range(len(MALFORMED))])
def test_malformed_json_is_400(shared_server, raw):
    expect_error(shared_server.post("/api/experiments", raw=raw), 400)


@pytest.mark.parametrize("ctype", [None, "text/plain", "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", "application/jsonx",
                                   "text/json"])
def test_post_without_json_content_type_is_415(shared_server, ctype):
    r = shared_server.post("/api/experiments", small(), content_type=ctype)
    expect_error(r, 415)


def test_sweep_post_without_json_content_type_is_415(shared_server):
    r = shared_server.post("/api/sweeps", {"base": small(), "axes": {"streams": [1, 2]}},
                           content_type="text/plain")
    expect_error(r, 415)


def test_body_over_body_max_is_413(make_server):
    srv = make_server(workers=0, body_max=1024)
    ok = small(label="x" * 100)
    expect_status(srv.post("/api/experiments", ok), 202)
    big = small(label="y" * 4000)
    expect_error(srv.post("/api/experiments", big), 413)
    huge = json.dumps(small(label="z" * 200)).encode() + b" " * 20000
    expect_error(srv.post("/api/experiments", raw=huge), 413)
    expect_error(srv.post("/api/sweeps", {"base": big, "axes": {"streams": [1]}}), 413)
    body = srv.health()
    check(body["queue_depth"] == 1, "only the small experiment queued", body["queue_depth"],
          "queue after 413s")


ALLOW_CASES = [
    ("DELETE", "/api/health", {"GET"}),
    ("POST", "/api/health", {"GET"}),
    ("PUT", "/api/experiments", {"GET", "POST"}),
    ("DELETE", "/api/experiments", {"GET", "POST"}),
    ("PATCH", "/api/experiments", {"GET", "POST"}),
    ("POST", "/api/machines", {"GET"}),
    ("DELETE", "/api/machines", {"GET"}),
]


@pytest.mark.parametrize("method,path,allow", ALLOW_CASES,
                         ids=[f"{m} {p}" for m, p, _ in ALLOW_CASES])
def test_wrong_method_is_405_with_allow(shared_server, method, path, allow):
    r = shared_server.request(method, path, data=b"{}", headers={"Content-Type": "application/json"})
    expect_error(r, 405)
    got = {m.strip().upper() for m in r.headers.get("Allow", "").split(",") if m.strip()}
    check(allow <= got, f"Allow including {sorted(allow)}", r.headers.get("Allow"),
          f"Allow header\n  {describe(r)}")


def test_wrong_method_on_an_experiment_is_405_with_allow(shared_server):
    eid = shared_server.create(small())["id"]
    for method, path, allow in (("PUT", f"/api/experiments/{eid}", {"GET", "DELETE"}),
                                ("POST", f"/api/experiments/{eid}", {"GET", "DELETE"}),
                                ("POST", f"/api/experiments/{eid}/timeline", {"GET"}),
                                ("DELETE", f"/api/experiments/{eid}/trace", {"GET"})):
        r = shared_server.request(method, path, data=b"{}",
                                  headers={"Content-Type": "application/json"})
        expect_error(r, 405)
        got = {m.strip().upper() for m in r.headers.get("Allow", "").split(",") if m.strip()}
        check(allow <= got, f"Allow including {sorted(allow)}", r.headers.get("Allow"),
              f"Allow header\n  {describe(r)}")


def test_wrong_method_on_a_machine_and_a_sweep_is_405_with_allow(shared_server):
    mid = shared_server.health_machine()["id"]
    r = shared_server.request("DELETE", f"/api/machines/{mid}")
    expect_error(r, 405)
    check("GET" in r.headers.get("Allow", ""), "Allow including GET", r.headers.get("Allow"),
          f"Allow\n  {describe(r)}")
    sweep = expect_status(shared_server.post(
        "/api/sweeps", {"base": small(), "axes": {"streams": [1, 2]}}), 202)
    r = shared_server.request("PUT", f"/api/sweeps/{sweep['id']}", data=b"{}",
                              headers={"Content-Type": "application/json"})
    expect_error(r, 405)
    check("GET" in r.headers.get("Allow", ""), "Allow including GET", r.headers.get("Allow"),
          f"Allow\n  {describe(r)}")


@pytest.mark.parametrize("method,path", [
    ("GET", "/api/"), ("GET", "/api/nope"), ("POST", "/api/nope"),
    ("GET", "/api/experiment"), ("GET", "/api/experiments/nope"),
    ("DELETE", "/api/experiments/nope"), ("GET", "/api/experiments/nope/timeline"),
    ("GET", "/api/experiments/nope/trace"), ("GET", "/api/sweeps/nope"),
    ("GET", "/api/machines/nope"), ("GET", "/api/health/extra"),
    ("GET", "/api/experiments/nope/bogus"),
])
def test_unknown_path_or_id_is_404_json(shared_server, method, path):
    r = shared_server.request(method, path, data=b"{}", headers={"Content-Type": "application/json"})
    expect_error(r, 404)


@pytest.mark.parametrize("query,field", [
    ("limit=0", "limit"), ("limit=501", "limit"), ("limit=-1", "limit"), ("limit=abc", "limit"),
    ("limit=1.5", "limit"),
])
def test_bad_list_limit_is_422_naming_limit(shared_server, query, field):
    expect_error(shared_server.get(f"/api/experiments?{query}"), 422, field=field)


def test_full_queue_is_429_or_503_with_retry_after(make_server):
    srv = make_server(workers=0, queue_max=2)
    srv.create(small())
    srv.create(small())
    r = srv.post("/api/experiments", small())
    expect_error(r, (429, 503))
    ra = r.headers.get("Retry-After", "")
    check(ra.strip().isdigit(), "Retry-After: <seconds>", repr(ra), f"Retry-After\n  {describe(r)}")
    r = srv.post("/api/sweeps", {"base": small(), "axes": {"streams": [1, 2]}})
    expect_error(r, (429, 503))
    check(r.headers.get("Retry-After", "").strip().isdigit(), "Retry-After: <seconds>",
          repr(r.headers.get("Retry-After")), f"Retry-After on sweep\n  {describe(r)}")
    check(srv.health()["queue_depth"] == 2, "queue_depth stays 2", srv.health()["queue_depth"],
          "queue after refusals")
    check(len(srv.list_all()) == 2, "2 experiments stored", len(srv.list_all()),
          "nothing stored for refused requests")
