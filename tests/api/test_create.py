"""POST /api/experiments and GET /api/experiments/{id}: 202, Location, the stored full spec."""

from conftest import (EXPERIMENT_FIELDS, SPEC_DEFAULTS, SPEC_FIELDS, check, describe,
                      expect_error, expect_json_content_type, expect_status, small)


def test_create_returns_202_location_and_the_queued_experiment(idle_server):
    r = idle_server.post("/api/experiments", {"variant": "async_v1"})
    exp = expect_status(r, 202)
    expect_json_content_type(r)
    for f in EXPERIMENT_FIELDS:
        check(f in exp, f"field {f!r} in the experiment", sorted(exp), f"POST response\n  {describe(r)}")
    check(exp["status"] == "queued", "status queued", exp["status"], "POST response status")
    loc = r.headers.get("Location", "")
    check(loc.endswith(f"/api/experiments/{exp['id']}"),
          f"Location ending /api/experiments/{exp['id']}", repr(loc), "Location header")
    for f, want in (("sweep_id", None), ("error", None), ("result", None),
                    ("started_at", None), ("finished_at", None)):
        check(exp[f] == want, f"{f} null for a queued experiment", exp[f], f"POST response {f}")
    check(exp["created_at"] is not None, "created_at set", exp["created_at"], "created_at")


def test_location_header_resolves_to_the_same_experiment(idle_server):
    r = idle_server.post("/api/experiments", small())
    exp = expect_status(r, 202)
    loc = r.headers["Location"]
    path = loc[loc.index("/api/"):]
    got = expect_status(idle_server.get(path), 200)
    check(got["id"] == exp["id"], exp["id"], got["id"], f"GET {path}")
    check(got["spec"] == exp["spec"], exp["spec"], got["spec"], "stored spec equals returned spec")


def test_create_fills_every_spec_default(idle_server):
    exp = idle_server.create({"variant": "async_v1"})
    stored = idle_server.experiment(exp["id"])["spec"]
    for f in SPEC_FIELDS:
        check(f in stored, f"field {f!r} in the stored spec", sorted(stored), "stored full spec")
    check(stored["variant"] == "async_v1", "async_v1", stored["variant"], "spec.variant")
    wrong = {f: stored.get(f) for f, want in SPEC_DEFAULTS.items() if stored.get(f) != want}
    check(not wrong, {f: SPEC_DEFAULTS[f] for f in wrong}, wrong,
          "spec defaults (the values of API.md's spec example) that differ")
    check(stored.get("label") in ("", None), "label default empty", stored.get("label"),
          "default of label")


def test_chunks_default_to_streams(idle_server):
    exp = idle_server.create(small(streams=5))
    check(exp["spec"]["chunks"] == 5, "chunks 5 (default: streams)", exp["spec"]["chunks"],
          "spec.chunks default")


def test_size_accepts_power_of_two_string(idle_server):
    exp = idle_server.create({"variant": "async_v1", "size": "2^25"})
    check(exp["spec"]["size"] == 33554432, "size 33554432 from \"2^25\"", exp["spec"]["size"],
          "spec.size")
    exp = idle_server.create({"variant": "async_v1", "size": "2^10", "streams": 4})
    check(exp["spec"]["size"] == 1024, "size 1024 from \"2^10\"", exp["spec"]["size"], "spec.size")


def test_given_fields_are_stored_as_given(idle_server):
    spec = {"variant": "round_robin", "size": 1000003, "streams": 3, "chunks": 12,
            "kernel": "compute", "kernel_iters": 4, "block_size": 128, "launch": "max_occupancy",
            "host_memory": "pageable", "default_stream": "legacy", "stream_flags": "non_blocking",
            "flush": "stream_query", "driver_mode": "auto", "timing": "events", "trace_ops": "all", "reps": 4,
            "warmup": 0, "devices": [0], "backend": "sim", "label": "given fields"}
    exp = idle_server.create(spec)
    stored = idle_server.experiment(exp["id"])["spec"]
    for f, v in spec.items():
        check(stored.get(f) == v, f"spec.{f} == {v!r}", stored.get(f), "stored spec keeps given values")


def test_boundary_values_are_accepted(idle_server):
    for over in ({"streams": 1}, {"streams": 1024, "size": 1 << 20}, {"warmup": 0},
                 {"reps": 1}, {"label": ""}, {"label": "ünïcødé ✓"}, {"chunks": 1, "streams": 1},
                 {"size": 1, "streams": 1}):
        r = idle_server.post("/api/experiments", small(**over))
        expect_status(r, 202)


def test_content_type_with_charset_is_accepted(idle_server):
    r = idle_server.post("/api/experiments", small(), content_type="application/json; charset=utf-8")
    expect_status(r, 202)


def test_multi_gpu_accepts_two_devices_when_two_exist(make_server):
    srv = make_server(workers=0, sim_devices=2)
    exp = srv.create(small("multi_gpu", devices=[0, 1], streams=4))
    check(exp["spec"]["devices"] == [0, 1], [0, 1], exp["spec"]["devices"], "spec.devices")
    expect_error(srv.post("/api/experiments", small("multi_gpu", devices=[0, 2])), 422,
                 field="devices")


def test_get_unknown_experiment_is_404_json(idle_server):
    expect_error(idle_server.get("/api/experiments/does-not-exist"), 404)
