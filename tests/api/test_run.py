"""Experiments run to done on the sim: the result (every field of API.md's Result), the
timeline (overlap where streams allow it, strict order where they do not), ?rep=K, the
Chrome trace, and every variant."""

import json

import pytest

from conftest import (EXPERIMENT_FIELDS, RESULT_NUMBERS, RESULT_OPTIONAL_NUMBERS, STATS_FIELDS,
                      check, close, describe, expect_error, expect_json_content_type,
                      expect_status, intervals_intersect, is_number, small)

OP_KINDS = ("h2d", "kernel", "d2h", "host")


def check_result(exp, reps):
    res = exp["result"]
    check(isinstance(res, dict), "a result object", res, f"result of {exp['id']}")
    check(res.get("backend") == "sim", '"backend": "sim"', res.get("backend"), "result.backend")
    check(res.get("verified") is True, '"verified": true', res.get("verified"), "result.verified")
    tot = res.get("total_ms")
    check(isinstance(tot, dict) and all(is_number(tot.get(k)) for k in STATS_FIELDS),
          f"total_ms with numbers {STATS_FIELDS}", tot, "result.total_ms")
    check(tot["min"] <= tot["median"] <= tot["max"] and tot["min"] <= tot["mean"] <= tot["max"],
          "min <= median, mean <= max", tot, "result.total_ms order")
    check(tot["min"] > 0 and tot["stddev"] >= 0, "positive times, stddev >= 0", tot, "total_ms")
    reps_ms = res.get("reps_ms")
    check(isinstance(reps_ms, list) and len(reps_ms) == reps and all(is_number(x) for x in reps_ms),
          f"reps_ms: {reps} numbers", reps_ms, "result.reps_ms")
    check(close(min(reps_ms), tot["min"]) and close(max(reps_ms), tot["max"]),
          f"min/max of reps_ms {min(reps_ms)}/{max(reps_ms)}", f"{tot['min']}/{tot['max']}",
          "total_ms agrees with reps_ms")
    for k in RESULT_NUMBERS:
        check(is_number(res.get(k)), f"result.{k} a number", res.get(k), f"result.{k}")
    for k in RESULT_OPTIONAL_NUMBERS:
        check(k in res and (res[k] is None or is_number(res[k])), f"result.{k} a number or null",
              res.get(k, "<absent>"), f"result.{k}")
    check(res["h2d_ms"] > 0 and res["kernel_ms"] > 0 and res["d2h_ms"] > 0,
          "positive h2d, kernel and d2h time", {k: res[k] for k in ("h2d_ms", "kernel_ms", "d2h_ms")},
          "op sums")
    busy = res["h2d_ms"] + res["kernel_ms"] + res["d2h_ms"]
    want_overlap = 1 - tot["median"] / busy
    check(close(res["overlap"], want_overlap, abs_=0.02), f"overlap = 1 - total/(h2d+kernel+d2h) = {want_overlap:.4f}",
          res["overlap"], "result.overlap")
    if res["floor_ms"] > 0:
        want_eff = res["floor_ms"] / tot["median"]
        check(close(res["efficiency"], want_eff, abs_=0.02), f"efficiency = floor/total = {want_eff:.4f}",
              res["efficiency"], "result.efficiency")
    check(0 < res["floor_ms"] <= tot["median"] * 1.0001, "0 < floor_ms <= total median",
          f"floor {res['floor_ms']}, total {tot['median']}", "result.floor_ms")
    check(0 < res["h2d_gbps"] < 1000 and 0 < res["d2h_gbps"] < 1000, "plausible GB/s",
          (res["h2d_gbps"], res["d2h_gbps"]), "result bandwidths")


def timeline(srv, eid, query=""):
    r = srv.get(f"/api/experiments/{eid}/timeline{query}")
    body = expect_status(r, 200)
    expect_json_content_type(r)
    for k in ("experiment", "rep", "median_rep", "reps", "ops"):
        check(k in body, f"timeline field {k!r}", sorted(body), f"GET timeline {eid}")
    check(body["experiment"] == eid, eid, body["experiment"], "timeline.experiment")
    ops = body["ops"]
    check(isinstance(ops, list) and ops, "a non-empty list of ops", ops, "timeline.ops")
    for op in ops:
        for k in ("device", "stream", "chunk", "op", "start_us", "end_us"):
            check(k in op, f"op field {k!r}", op, "timeline op")
        check(op["op"] in OP_KINDS, f"op in {OP_KINDS}", op["op"], "timeline op kind")
        check(is_number(op["start_us"]) and is_number(op["end_us"]) and op["end_us"] >= op["start_us"] >= 0,
              "0 <= start_us <= end_us", op, "timeline op times")
        if op["op"] in ("h2d", "d2h"):
            check(isinstance(op.get("bytes"), int) and op["bytes"] > 0, "copies carry bytes > 0", op,
                  "timeline copy bytes")
    return body


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One server, a few experiments run to done once and shared by the tests below."""
    from conftest import Server
    srv = Server(tmp_path_factory.mktemp("runs"), name="runs")
    srv.start()
    specs = {
        "v1_4": {"variant": "async_v1", "size": 1 << 22, "streams": 4, "reps": 5, "warmup": 1},
        "seq_1": {"variant": "sequential", "size": 1 << 22, "streams": 1, "reps": 3, "warmup": 1},
        "v1_1": {"variant": "async_v1", "size": 1 << 22, "streams": 1, "reps": 3, "warmup": 1},
        "uneven": {"variant": "async_v1", "size": 1000003, "streams": 3, "reps": 3, "warmup": 0},
        "rr": {"variant": "round_robin", "size": 1 << 20, "streams": 3, "chunks": 10, "reps": 2,
               "warmup": 0},
    }
    ids = {k: srv.create(v)["id"] for k, v in specs.items()}
    yield srv, ids, specs
    srv.cleanup()


def test_experiment_runs_to_done_with_times_and_no_error(runs):
    srv, ids, specs = runs
    exp = srv.wait_done(ids["v1_4"])
    for f in EXPERIMENT_FIELDS:
        check(f in exp, f"field {f!r}", sorted(exp), "done experiment")
    check(exp["error"] is None, "error null", exp["error"], "done experiment error")
    for f in ("created_at", "started_at", "finished_at"):
        check(exp[f] is not None, f"{f} set", exp[f], f"done experiment {f}")
    check(str(exp["created_at"]) <= str(exp["started_at"]) <= str(exp["finished_at"])
          if isinstance(exp["created_at"], str) else
          exp["created_at"] <= exp["started_at"] <= exp["finished_at"],
          "created_at <= started_at <= finished_at",
          (exp["created_at"], exp["started_at"], exp["finished_at"]), "experiment times")


def test_done_result_has_every_field_of_the_result(runs):
    srv, ids, specs = runs
    for key in ("v1_4", "seq_1", "uneven"):
        exp = srv.wait_done(ids[key])
        check_result(exp, specs[key]["reps"])


def test_four_stream_async_v1_overlaps_copy_with_compute(runs):
    srv, ids, specs = runs
    srv.wait_done(ids["v1_4"])
    ops = timeline(srv, ids["v1_4"])["ops"]
    streams = {o["stream"] for o in ops if o["op"] != "host"}
    check(len(streams) == 4, "ops on 4 streams", sorted(streams), "4-stream timeline")
    for kind in ("h2d", "kernel", "d2h"):
        n = sum(1 for o in ops if o["op"] == kind)
        check(n >= 4, f">= 4 {kind} ops (one per chunk)", n, "4-stream timeline")
    kernels = [o for o in ops if o["op"] == "kernel"]
    copies = [o for o in ops if o["op"] in ("h2d", "d2h")]
    pairs = [(k, c) for k in kernels for c in copies
             if k["stream"] != c["stream"] and intervals_intersect(k, c)]
    check(pairs, "some kernel interval intersecting a copy of another stream", json.dumps(ops)[:1500],
          "copy/compute overlap in a 4-stream async_v1 run")
    res = srv.experiment(ids["v1_4"])["result"]
    check(res["overlap"] > 0, "overlap > 0", res["overlap"], "result.overlap of a 4-stream run")


def _strictly_serial(ops):
    ops = sorted(ops, key=lambda o: (o["start_us"], o["end_us"]))
    for a, b in zip(ops, ops[1:]):
        if b["start_us"] < a["end_us"]:
            return (a, b)
    return None


def test_one_stream_sequential_run_is_strictly_serial(runs):
    srv, ids, specs = runs
    srv.wait_done(ids["seq_1"])
    ops = [o for o in timeline(srv, ids["seq_1"])["ops"] if o["op"] != "host"]
    bad = _strictly_serial(ops)
    check(bad is None, "each op starts after the previous one ends", bad,
          "1-stream sequential timeline")
    order = [o["op"] for o in sorted(ops, key=lambda o: o["start_us"])]
    check(order.index("h2d") < order.index("kernel") < order.index("d2h"),
          "h2d before kernel before d2h", order, "sequential order")


def test_one_stream_async_v1_run_is_strictly_serial(runs):
    srv, ids, specs = runs
    srv.wait_done(ids["v1_1"])
    ops = [o for o in timeline(srv, ids["v1_1"])["ops"] if o["op"] != "host"]
    bad = _strictly_serial(ops)
    check(bad is None, "each op starts after the previous one ends", bad, "1-stream async_v1 timeline")


def test_uneven_chunks_copy_every_byte_exactly_once(runs):
    srv, ids, specs = runs
    srv.wait_done(ids["uneven"])
    ops = timeline(srv, ids["uneven"])["ops"]
    want = 4 * specs["uneven"]["size"]
    for kind in ("h2d", "d2h"):
        got = sum(o["bytes"] for o in ops if o["op"] == kind)
        check(got == want, f"{want} {kind} bytes (4 x size)", got, f"{kind} bytes, size 1000003 / 3 streams")


def test_round_robin_spreads_chunks_over_streams(runs):
    srv, ids, specs = runs
    srv.wait_done(ids["rr"])
    ops = timeline(srv, ids["rr"])["ops"]
    chunks = {o["chunk"] for o in ops if o["op"] == "kernel"}
    streams = {o["stream"] for o in ops if o["op"] == "kernel"}
    check(len(chunks) == 10, "10 chunks", sorted(chunks), "round_robin chunks")
    check(len(streams) == 3, "3 streams", sorted(streams), "round_robin streams")


def test_timeline_defaults_to_the_median_rep_and_rep_selects_one(runs):
    srv, ids, specs = runs
    srv.wait_done(ids["v1_4"])
    body = timeline(srv, ids["v1_4"])
    reps = specs["v1_4"]["reps"]
    check(body["reps"] == reps, reps, body["reps"], "timeline.reps")
    check(0 <= body["median_rep"] < reps, f"median_rep in [0,{reps})", body["median_rep"],
          "timeline.median_rep")
    check(body["rep"] == body["median_rep"], "rep == median_rep by default",
          (body["rep"], body["median_rep"]), "timeline default rep")
    for k in (0, reps - 1):
        one = timeline(srv, ids["v1_4"], f"?rep={k}")
        check(one["rep"] == k, k, one["rep"], f"timeline ?rep={k}")


@pytest.mark.parametrize("rep", ["5", "-1", "999", "abc", "1.5"])
def test_timeline_rep_out_of_range_is_422_or_404(runs, rep):
    srv, ids, specs = runs
    srv.wait_done(ids["v1_4"])  # reps = 5: valid reps are 0..4
    r = srv.get(f"/api/experiments/{ids['v1_4']}/timeline?rep={rep}")
    expect_error(r, (422, 404))


def test_timeline_and_trace_of_unknown_experiment_are_404(runs):
    srv, _, _ = runs
    expect_error(srv.get("/api/experiments/no-such-id/timeline"), 404)
    expect_error(srv.get("/api/experiments/no-such-id/trace"), 404)


def test_trace_is_chrome_trace_event_json(runs):
    srv, ids, specs = runs
    srv.wait_done(ids["v1_4"])
    r = srv.get(f"/api/experiments/{ids['v1_4']}/trace")
    body = expect_status(r, 200)
    events = body.get("traceEvents") if isinstance(body, dict) else None
    check(isinstance(events, list) and events, '{"traceEvents": [...]}', str(body)[:500], "trace shape")
    x = [e for e in events if e.get("ph") == "X"]
    m = [e for e in events if e.get("ph") == "M"]
    n_ops = len(timeline(srv, ids["v1_4"])["ops"])
    check(len(x) >= n_ops, f">= {n_ops} complete (X) events, one per op", len(x), "trace X events")
    check(m, "metadata (M) events naming processes/threads", len(m), "trace M events")
    for e in x:
        for k in ("ts", "dur", "pid", "tid", "name"):
            check(k in e, f"X event field {k!r}", e, "trace X event")
        check(is_number(e["ts"]) and is_number(e["dur"]) and e["dur"] >= 0, "numeric ts, dur >= 0", e,
              "trace X event times")


def test_timeline_of_a_queued_experiment_is_not_200(idle_server):
    eid = idle_server.create(small())["id"]
    r = idle_server.get(f"/api/experiments/{eid}/timeline")
    check(r.status_code in (404, 409, 422), "404/409/422 (no timeline before it has run)",
          r.status_code, f"timeline of a queued experiment\n  {describe(r)}")
    expect_error(r, r.status_code)


VARIANTS = ["sequential", "async_v1", "async_v2", "round_robin", "engine_streams", "cpu",
            "host_overlap", "multi_gpu", "tuned", "zero_copy"]


def test_every_variant_runs_to_done_on_the_sim(make_server):
    srv = make_server(sim_devices=2)
    ids = {}
    for v in VARIANTS:
        spec = small(v, size=1 << 18, streams=1 if v == "sequential" else 4, reps=2, warmup=0)
        if v == "multi_gpu":
            spec["devices"] = [0, 1]
        ids[v] = srv.create(spec)["id"]
    failed = {}
    for v, eid in ids.items():
        exp = srv.wait_status(eid)
        if exp["status"] != "done" or not (exp.get("result") or {}).get("verified"):
            failed[v] = (exp["status"], exp.get("error"))
    check(not failed, "every variant done and verified", failed, "variants on the sim")


def test_zero_copy_runs_kernels_only_on_pinned_memory(make_server):
    """zero_copy: the kernels read and write the pinned host array through its device
    mapping. Its defaults (one stream, a grid-stride launch) are stored, its timeline
    holds kernels only, and the machine's calibration carries the zero-copy rate. On
    pageable memory it is refused (422 naming host_memory) and nothing is stored."""
    srv = make_server()
    cal = srv.health_machine()["gpus"][0]["calibration"]
    check(is_number(cal.get("zero_copy_gbps")) and cal["zero_copy_gbps"] > 0, "calibration.zero_copy_gbps > 0",
          cal.get("zero_copy_gbps"), "GET /api/machines")
    exp = srv.wait_done(srv.create({"variant": "zero_copy", "size": 1 << 20, "reps": 2, "warmup": 0})["id"])
    spec, res = exp["spec"], exp["result"]
    check((spec["streams"], spec["chunks"], spec["launch"], spec["host_memory"]) == (1, 1, "max_occupancy", "pinned"),
          "zero_copy's defaults: 1 stream, 1 chunk, max_occupancy, pinned",
          (spec["streams"], spec["chunks"], spec["launch"], spec["host_memory"]), "stored spec")
    check(res["verified"] is True and res["h2d_ms"] == 0 and res["d2h_ms"] == 0 and res["kernel_ms"] > 0,
          "verified, kernel time only", {k: res[k] for k in ("verified", "h2d_ms", "kernel_ms", "d2h_ms")}, "result")
    check(0 < res["efficiency"] < 1, "0 < efficiency < 1 (zero-copy moves less than the copy engines' floor)",
          res["efficiency"], "result.efficiency")
    eid = srv.wait_done(srv.create({"variant": "zero_copy", "size": 1000003, "streams": 3, "chunks": 7,
                                    "launch": "chunk", "reps": 2, "warmup": 0})["id"])["id"]
    ops = timeline(srv, eid)["ops"]
    check(sorted((o["op"], o["chunk"], o["stream"]) for o in ops) == [("kernel", c, c % 3) for c in range(7)],
          "7 kernels, chunk c on stream c % 3, no copies", [(o["op"], o["chunk"], o["stream"]) for o in ops],
          "zero_copy timeline")
    before = len(srv.list_all())
    expect_error(srv.post("/api/experiments", small("zero_copy", host_memory="pageable")), 422, field="host_memory")
    check(len(srv.list_all()) == before, f"{before} experiments (the refusal stored nothing)", len(srv.list_all()),
          "after a refused zero_copy")
    tuned = srv.wait_done(srv.create(small("tuned", reps=2, warmup=0))["id"])["result"]["extra"]["tuned"]
    check(tuned.get("launch") in ("chunk", "max_occupancy") and tuned.get("variant") and tuned["candidates"] > 300,
          "tuned records its variant, launch and candidates (pipelines and zero-copy)", tuned, "extra.tuned")


def test_multi_gpu_timeline_uses_both_devices(make_server):
    srv = make_server(sim_devices=2)
    eid = srv.create(small("multi_gpu", devices=[0, 1], streams=4, reps=2, warmup=0))["id"]
    srv.wait_done(eid)
    devs = {o["device"] for o in timeline(srv, eid)["ops"] if o["op"] != "host"}
    check(devs == {0, 1}, "ops on devices 0 and 1", sorted(devs), "multi_gpu timeline")
