"""POST /api/predict: a single-stream trace (given, or a done 1-stream experiment's median
timeline) in, N-stream timelines out. The sim and the model are one engine, so a sim
trace predicts the sim to the unit test's 1e-9 ms, and an experiment run with "predict"
replays from the basis_trace and host it records. Bad input is a JSON error naming the
field (422; 400 for bad JSON; 413 past --body-max) and stores nothing."""

import json

import pytest

from conftest import (Server, check, describe, expect_error, expect_json_content_type,
                      expect_status, intervals_intersect, is_number)

OP_FIELDS = ("device", "stream", "chunk", "op", "start_us", "end_us", "bytes")
PREDICT_MAX_OPS = 200000           # gpu/predict.h
DEFAULT_BODY_MAX = 1 << 20         # server/main.c: --body-max default
SIM_EXACT_MS = 1e-9                # tests/unit/test_model.c: predictions_of_the_sim_match_the_sim_exactly
REPLAY_REL = 1e-6
SIZE, CHUNKS = 1 << 22, 8


def make_trace(chunks, h2d_us=20.0, kernel_us=10.0, d2h_us=20.0, gap_us=1.0, nbytes=1 << 20, blocks=1024):
    """A serial single-stream pipeline: H2D, kernel, D2H per chunk, gap_us apart, in issue order."""
    ops, t = [], 0.0
    for _ in range(chunks):
        for op, dur, extra in (("h2d", h2d_us, {"bytes": nbytes}), ("kernel", kernel_us, {"blocks": blocks}),
                               ("d2h", d2h_us, {"bytes": nbytes})):
            ops.append(dict(op=op, start_us=t, end_us=t + dur, **extra))
            t += dur + gap_us
    return {"ops": ops}


def span_us(trace):
    return max(o["end_us"] for o in trace["ops"]) - trace["ops"][0]["start_us"]


def predict(srv, body):
    r = srv.post("/api/predict", body)
    out = expect_status(r, 200)
    expect_json_content_type(r)
    check(isinstance(out, dict) and isinstance(out.get("predictions"), list) and "derived" in out
          and isinstance(out.get("device"), dict), '{"predictions": [...], "derived", "device"}',
          str(out)[:600], f"POST /api/predict\n  {describe(r)}")
    return out


def check_prediction(p, variant, streams, chunks, where):
    """One prediction in the timeline's op form: every chunk's three ops once, on the
    requested streams, inside total_ms."""
    for k in ("variant", "streams", "chunks", "total_ms", "ops"):
        check(k in p, f"prediction field {k!r}", sorted(p), where)
    check((p["variant"], p["streams"], p["chunks"]) == (variant, streams, chunks), (variant, streams, chunks),
          (p["variant"], p["streams"], p["chunks"]), f"{where}: variant, streams, chunks")
    check(is_number(p["total_ms"]) and p["total_ms"] > 0, "total_ms > 0", p["total_ms"], where)
    ops = p["ops"]
    check(isinstance(ops, list) and len(ops) == 3 * chunks, f"{3 * chunks} ops", len(ops), where)
    seen = set()
    for o in ops:
        check(all(k in o for k in OP_FIELDS), f"op fields {OP_FIELDS}", o, where)
        check(o["op"] in ("h2d", "kernel", "d2h") and 0 <= o["stream"] < streams and 0 <= o["chunk"] < chunks
              and o["device"] == 0, f"an h2d/kernel/d2h op on stream < {streams}, chunk < {chunks}", o, where)
        check(is_number(o["start_us"]) and 0 <= o["start_us"] <= o["end_us"] <= p["total_ms"] * 1000 + 1e-6,
              "0 <= start_us <= end_us <= total_ms", o, where)
        check(isinstance(o["bytes"], int) and (o["bytes"] > 0 or o["op"] == "kernel"), "copies carry bytes", o, where)
        seen.add((o["chunk"], o["op"]))
    check(len(seen) == 3 * chunks, "each chunk's h2d, kernel and d2h exactly once", len(seen), where)
    return ops


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """One sim server with a 1-stream basis, the 8-stream runs it predicts, a run with
    "predict", and a tuned run; all done before any test, so the list is stable."""
    srv = Server(tmp_path_factory.mktemp("predict"), name="predict")
    srv.start()
    base = {"size": SIZE, "chunks": CHUNKS, "reps": 3, "warmup": 1, "backend": "sim"}
    specs = {"basis": dict(base, variant="async_v1", streams=1),
             "async_v1": dict(base, variant="async_v1", streams=CHUNKS),
             "async_v2": dict(base, variant="async_v2", streams=CHUNKS),
             "predicted": dict(base, variant="async_v2", streams=4, predict=True),
             "tuned": {"variant": "tuned", "size": SIZE, "streams": 1, "reps": 2, "warmup": 0, "backend": "sim"}}
    ids = {k: srv.create(v)["id"] for k, v in specs.items()}
    exps = {k: srv.wait_done(eid) for k, eid in ids.items()}
    yield srv, exps, specs
    srv.cleanup()


# ---------------------------------------------------------------- a hand-written trace

@pytest.mark.parametrize("variant", ["async_v1", "async_v2"])
def test_hand_written_trace_predicts_every_stream_count(lab, variant):
    srv = lab[0]
    trace = make_trace(CHUNKS)
    out = predict(srv, {"trace": trace, "variant": variant, "streams": [1, 2, 4, 8], "chunks": "trace"})
    preds = out["predictions"]
    check([p.get("streams") for p in preds] == [1, 2, 4, 8], "one prediction per stream count, in order",
          [p.get("streams") for p in preds], variant)
    for p in preds:
        ops = check_prediction(p, variant, p["streams"], CHUNKS, f"{variant} x{p['streams']}")
        got = sum(o["bytes"] for o in ops if o["op"] == "h2d")
        check(got == CHUNKS << 20, CHUNKS << 20, got, f"{variant} x{p['streams']}: H2D bytes = the trace's")
    # the trace's own chunking: durations come from the trace, not rescaled
    d = out["derived"]
    check(d.get("trace_chunks") == CHUNKS and d.get("size") == (CHUNKS << 20) // 4
          and d.get("durations_from_trace") is True, "derived from the 8-chunk trace", d, "derived")
    gpu = srv.health_machine()["gpus"][0]
    check(out["device"]["copy_engines"] == gpu["copy_engines"] and out["device"]["sm_count"] == gpu["sm_count"],
          "this machine's device parameters", out["device"], "device used")
    one = preds[0]
    ordered = sorted(one["ops"], key=lambda o: o["start_us"])
    bad = [(a, b) for a, b in zip(ordered, ordered[1:]) if b["start_us"] < a["end_us"] - 1e-9]
    check(not bad, "one stream runs strictly serially", bad[:1], f"{variant} x1")
    if variant == "async_v1":  # its issue order is the trace's (async_v2 issues every H2D first)
        check(abs(one["total_ms"] * 1000 - span_us(trace)) <= 0.03 * span_us(trace),
              f"about the trace's span {span_us(trace)} us", one["total_ms"] * 1000, "async_v1 x1 total")
    for p in preds[1:]:
        check(p["total_ms"] < one["total_ms"], f"less than 1 stream's {one['total_ms']} ms", p["total_ms"],
              f"{variant} x{p['streams']}: copies overlap kernels")
        pairs = [1 for k in p["ops"] for c in p["ops"] if k["op"] == "kernel" and c["op"] != "kernel"
                 and k["stream"] != c["stream"] and intervals_intersect(k, c)]
        check(pairs, "a kernel overlapping a copy of another stream", p["ops"][:6], f"{variant} x{p['streams']}")


def test_chunks_default_to_streams_and_streams_may_be_a_number(lab):
    srv = lab[0]
    out = predict(srv, {"trace": make_trace(CHUNKS), "streams": [1, 4]})
    for p, n in zip(out["predictions"], (1, 4)):
        check_prediction(p, "async_v1", n, n, f"default chunks, {n} streams")  # N streams of one chunk each
    check(out["derived"]["durations_from_trace"] is False, "rescaled (1 chunk from an 8-chunk trace)",
          out["derived"], "derived")
    out = predict(srv, {"trace": make_trace(CHUNKS), "streams": 4, "chunks": 8})
    check(len(out["predictions"]) == 1, "one prediction", len(out["predictions"]), "streams: 4")
    check_prediction(out["predictions"][0], "async_v1", 4, 8, "streams 4, chunks 8")


def test_device_override_is_used(lab):
    """One copy engine serialises the two copy directions: never faster than two."""
    body = {"trace": make_trace(CHUNKS), "streams": [8], "chunks": "trace"}
    two = predict(lab[0], dict(body, device={"copy_engines": 2}))
    one = predict(lab[0], dict(body, device={"copy_engines": 1}))
    check(one["device"]["copy_engines"] == 1, 1, one["device"], "device.copy_engines in the answer")
    a, b = one["predictions"][0]["total_ms"], two["predictions"][0]["total_ms"]
    check(a > b, f"more than with 2 engines ({b} ms)", a, "8 streams on 1 copy engine")


def test_one_hardware_queue_breadth_first_on_one_stream_is_serial(lab):
    """connections 1 (pre-Hyper-Q): one stream issued breadth-first runs its kernels back to
    back, each after the one before. The model once waited for the run's end before
    starting its second kernel, stalled, and answered 500 (found by fuzz_trace)."""
    trace = make_trace(CHUNKS, gap_us=0.0)
    body = {"trace": trace, "variant": "async_v2", "streams": [1], "chunks": "trace",
            "device": {"connections": 1, "copy_engines": 1, "copy_overlap_us": 0}}
    out = predict(lab[0], body)
    p = out["predictions"][0]
    check_prediction(p, "async_v2", 1, CHUNKS, "async_v2, 1 stream, 1 connection")
    serial_ms = sum(o["end_us"] - o["start_us"] for o in trace["ops"]) / 1000.0
    check(p["total_ms"] >= serial_ms - 1e-9, f"at least the ops end to end ({serial_ms} ms): one stream is serial",
          p["total_ms"], "async_v2, 1 stream, 1 connection")


def test_channel_pools_override_is_used(lab):
    """Breadth-first over 8 streams on 2 hardware channels. As a queue per stream % 2 (the
    model before the pools), each queue holds its streams' H2Ds, then their kernels, then
    their D2Hs, so a kernel waits for the last H2D of its queue; as pools (the default)
    copies and kernels have channels of their own and a kernel waits only for its own H2D
    and the kernel ahead of it, so the pools predict the shorter pipeline. The answer says
    which it modelled."""
    body = {"trace": make_trace(CHUNKS), "variant": "async_v2", "streams": [8], "chunks": "trace"}
    pools = predict(lab[0], dict(body, device={"connections": 2}))
    queues = predict(lab[0], dict(body, device={"connections": 2, "channel_pools": False}))
    default = predict(lab[0], body)
    check(pools["device"]["channel_pools"] is True and default["device"]["channel_pools"] is True, True,
          (pools["device"], default["device"]), "device.channel_pools by default")
    check(queues["device"]["channel_pools"] is False, False, queues["device"], "device.channel_pools: false")
    a, b = pools["predictions"][0]["total_ms"], queues["predictions"][0]["total_ms"]
    check(a < b, f"less than the queues' {b} ms", a, "8 streams breadth-first on 2 channels as pools")


def test_copy_overlap_override_is_used(lab):
    """Breadth-first issue queues every H2D behind the one before it: each hides
    copy_overlap_us of its time, so a larger saving predicts a shorter pipeline."""
    body = {"trace": make_trace(CHUNKS), "variant": "async_v2", "streams": [8], "chunks": "trace"}
    none = predict(lab[0], dict(body, device={"copy_overlap_us": 0}))
    some = predict(lab[0], dict(body, device={"copy_overlap_us": 3}))
    check(some["device"]["copy_overlap_us"] == 3, 3, some["device"], "device.copy_overlap_us in the answer")
    a, b = some["predictions"][0]["total_ms"], none["predictions"][0]["total_ms"]
    check(a < b, f"less than with no saving ({b} ms)", a, "8 streams, queued copies hiding 3 us")


def test_both_ways_copy_cost_override_is_used(lab):
    """Depth-first over 8 streams, H2Ds and D2Hs of different chunks overlap: each copy
    that starts while the other direction copies pays bidir_copy_us more (alone-µs), so
    the pipeline predicts longer; the answer says what it used. Default: the sim's
    machine's own (the lent H100's profile measured one), so longer than none."""
    body = {"trace": make_trace(CHUNKS), "variant": "async_v1", "streams": [8], "chunks": "trace"}
    default = predict(lab[0], body)
    none = predict(lab[0], dict(body, device={"bidir_copy_us": 0}))
    some = predict(lab[0], dict(body, device={"bidir_copy_us": 4}))
    check(default["device"]["bidir_copy_us"] > 0, "> 0", default["device"], "device.bidir_copy_us by default (sim)")
    check(some["device"]["bidir_copy_us"] == 4, 4, some["device"], "device.bidir_copy_us in the answer")
    a, b = some["predictions"][0]["total_ms"], none["predictions"][0]["total_ms"]
    check(a > b, f"more than with none ({b} ms)", a, "8 streams, copies beside the other direction paying 4 us")
    check(default["predictions"][0]["total_ms"] > b, f"more than with none ({b} ms)", default["predictions"][0]["total_ms"],
          "the default")


def test_both_ways_share_override_is_used(lab):
    """Depth-first over 8 streams the D2Hs of early chunks run beside the H2Ds of later ones.
    Of the two directions' loss the D2H takes bidirectional_d2h_share (default 0.6, the lent
    H100's); the answer says which it used, and a different split gives a different total."""
    body = {"trace": make_trace(CHUNKS), "variant": "async_v1", "streams": [8], "chunks": "trace",
            "device": {"bidirectional_derate": 0.6}}
    default = predict(lab[0], body)
    even = predict(lab[0], dict(body, device={"bidirectional_derate": 0.6, "bidirectional_d2h_share": 0.5}))
    d2h = predict(lab[0], dict(body, device={"bidirectional_derate": 0.6, "bidirectional_d2h_share": 0.9}))
    check(default["device"]["bidirectional_d2h_share"] == 0.6, 0.6, default["device"],
          "device.bidirectional_d2h_share by default")
    check(even["device"]["bidirectional_d2h_share"] == 0.5, 0.5, even["device"], "device.bidirectional_d2h_share")
    totals = {k: v["predictions"][0]["total_ms"] for k, v in (("0.6", default), ("0.5", even), ("0.9", d2h))}
    check(len(set(totals.values())) == 3, "three totals", totals, "8 streams under three splits of the loss")


def test_breadth_first_call_override_is_used(lab):
    """async_v2 issues every kernel and D2H after another stream's call: each such call costs the
    host reorder_us more. A dear one slows a host-bound breadth-first pipeline; depth-first
    (async_v1) issues none and does not move."""
    small = make_trace(64, h2d_us=2.0, kernel_us=2.0, d2h_us=2.0, nbytes=1 << 16)
    body = {"trace": small, "streams": [64], "chunks": "trace"}
    v2 = {r: predict(lab[0], dict(body, variant="async_v2", host={"reorder_us": r}))["predictions"][0]["total_ms"]
          for r in (0, 20)}
    v1 = {r: predict(lab[0], dict(body, variant="async_v1", host={"reorder_us": r}))["predictions"][0]["total_ms"]
          for r in (0, 20)}
    check(v2[20] > v2[0], f"more than with none ({v2[0]} ms)", v2[20], "async_v2 x64, 20 us a reordered call")
    check(abs(v1[20] - v1[0]) <= 1e-9, v1[0], v1[20], "async_v1 x64 with the same price: no reordered call")


def test_rep_lead_override_delays_the_rep_once(lab):
    """host.lead_us: the rep's first call costs that much more (the rep waiting before its first op), once
    a rep, not every call: the whole rep moves by it, at 1 stream and at 64 alike. A trace given as JSON
    carries none by default."""
    small = make_trace(64, h2d_us=2.0, kernel_us=2.0, d2h_us=2.0, nbytes=1 << 16)
    for n in (1, 64):
        body = {"trace": small, "streams": [n], "chunks": "trace", "variant": "async_v1"}
        got = {r: predict(lab[0], dict(body, host={"lead_us": r}))["predictions"][0]["total_ms"] for r in (0, 20)}
        plain = predict(lab[0], body)["predictions"][0]["total_ms"]
        check(abs(got[20] - got[0] - 0.020) <= 1e-9, f"{got[0]} + 0.020 ms", got[20], f"async_v1 x{n}, a 20 us lead")
        check(abs(plain - got[0]) <= 1e-12, got[0], plain, f"async_v1 x{n}, a JSON trace's default lead")


def test_kernel_time_per_element_makes_compute_bound_kernels_queue(lab):
    """Kernels whose grid fills half the GPU run two at a time by their grid alone. Given
    the kernel's time per element with the GPU to itself, each asks for the share of the
    GPU's throughput it uses (here 0.9: 90 of its 100 us), so two cannot both run at full
    speed and the kernels take at least their summed work at full throughput."""
    chunks, nbytes, kernel_us, share = 8, 1 << 20, 100.0, 0.9
    trace = make_trace(chunks, h2d_us=10.0, kernel_us=kernel_us, d2h_us=10.0, nbytes=nbytes, blocks=132 * 8 // 2)
    body = {"trace": trace, "variant": "async_v1", "streams": [chunks]}
    ns = share * kernel_us * 1e3 / (nbytes // 4)
    by_grid = predict(lab[0], body)
    by_work = predict(lab[0], dict(body, kernel_ns_per_elem=ns))
    check(by_grid["kernel_ns_per_elem"] == 0, 0, by_grid["kernel_ns_per_elem"], "kernel_ns_per_elem of a bare trace")
    check(abs(by_work["kernel_ns_per_elem"] - ns) <= 1e-12, ns, by_work["kernel_ns_per_elem"],
          "kernel_ns_per_elem in the answer")
    a, b = by_work["predictions"][0]["total_ms"], by_grid["predictions"][0]["total_ms"]
    work_ms = chunks * share * kernel_us / 1000.0
    check(a >= work_ms - 1e-9, f"at least the kernels' work at full throughput ({work_ms} ms)", a,
          "8 streams of compute-bound half-GPU kernels")
    check(b < work_ms, f"under {work_ms} ms: by their grid two kernels run at once", b, "the same without it")


# ---------------------------------------------------------------- from the sim's own runs

@pytest.mark.parametrize("variant", ["async_v1", "async_v2"])
def test_from_experiment_predicts_the_sim_exactly(lab, variant):
    """Predicting 8 streams from the 1-stream run gives what the 8-stream run measured."""
    srv, exps, _ = lab
    out = predict(srv, {"from_experiment": exps["basis"]["id"], "variant": variant, "streams": [CHUNKS]})
    p = out["predictions"][0]
    ops = check_prediction(p, variant, CHUNKS, CHUNKS, f"{variant} from {exps['basis']['id']}")
    check(is_number(out["kernel_ns_per_elem"]) and out["kernel_ns_per_elem"] > 0, "> 0: this machine's calibration",
          out["kernel_ns_per_elem"], "kernel_ns_per_elem of an experiment's trace")
    measured = exps[variant]["result"]["total_ms"]["median"]
    check(abs(p["total_ms"] - measured) <= SIM_EXACT_MS, f"the sim's median {measured} ms (+-{SIM_EXACT_MS})",
          p["total_ms"], f"predicted {variant} x{CHUNKS}")
    tl = expect_status(srv.get(f"/api/experiments/{exps[variant]['id']}/timeline"), 200)["ops"]
    key = lambda o: (o["stream"], o["chunk"], o["op"])  # noqa: E731
    for got, want in zip(sorted(ops, key=key), sorted(tl, key=key)):
        check(key(got) == key(want) and got["bytes"] == want["bytes"]
              and abs(got["start_us"] - want["start_us"]) <= 1e-6 and abs(got["end_us"] - want["end_us"]) <= 1e-6,
              want, got, f"predicted op against the measured timeline ({variant})")
    check(len(ops) == len(tl), len(tl), len(ops), "op count against the measured timeline")


def test_predict_true_records_a_replayable_prediction(lab):
    srv, exps, specs = lab
    exp, spec = exps["predicted"], specs["predicted"]
    res = exp["result"]
    pred, med = res.get("predicted_ms"), res["total_ms"]["median"]
    check(is_number(pred) and pred > 0 and is_number(res.get("prediction_error")), "numeric prediction",
          {k: res.get(k) for k in ("predicted_ms", "prediction_error")}, "result of a predict run")
    want_err = abs(pred - med) / med
    check(abs(res["prediction_error"] - want_err) <= 1e-12 + 1e-9 * want_err,
          f"|predicted - median| / median = {want_err}", res["prediction_error"], "prediction_error")
    check(res["prediction_error"] <= SIM_EXACT_MS / med, "~0: the basis is the sim's own trace",
          res["prediction_error"], "prediction_error on the sim")
    p = (res.get("extra") or {}).get("prediction")
    check(isinstance(p, dict), "result.extra.prediction", res.get("extra"), "extra")
    for k in ("basis_trace", "basis_ms", "basis_reps", "event_tax_us", "basis_issue_us", "host", "device",
              "kernel_ns_per_elem", "predicted_ms"):
        check(k in p, f"extra.prediction.{k}", sorted(p), "extra.prediction")
    check(p["basis_reps"] == max(5, min(15, spec["reps"])), "as many reps as the run, 5 to 15", p["basis_reps"],
          "basis_reps")
    check(abs(p["basis_ms"] - exps["basis"]["result"]["total_ms"]["median"]) <= SIM_EXACT_MS,
          "the 1-stream run's median", p["basis_ms"], "basis_ms")
    check(is_number(p["event_tax_us"]) and 0 <= p["event_tax_us"] <= 3, "0..3 us", p["event_tax_us"], "event_tax_us")
    check(is_number(p["basis_issue_us"]) and p["basis_issue_us"] >= 0, ">= 0", p["basis_issue_us"], "basis_issue_us")
    host = p["host"]
    check(isinstance(host, dict) and set(host) == {"copy_submit_us", "kernel_launch_us", "reorder_us", "lead_us"}
          and all(is_number(v) and 0 <= v <= 1000 for v in host.values()),
          "{copy_submit_us, kernel_launch_us, reorder_us, lead_us} within what POST /api/predict takes", host,
          "extra.prediction.host")
    # the sim's reps wait 8 us for their first call beyond its cost; the basis's reps did, and so the prediction
    check(abs(host["lead_us"] - 8.0) <= 1e-6, "8 us: the sim's rep lead, read from the basis's first op",
          host["lead_us"], "extra.prediction.host.lead_us")
    check(p["predicted_ms"] == pred, pred, p["predicted_ms"], "extra.prediction.predicted_ms")
    ops = p["basis_trace"].get("ops") if isinstance(p["basis_trace"], dict) else None
    check(isinstance(ops, list) and len(ops) == 3 * spec["chunks"], f"{{'ops': [{3 * spec['chunks']} ops]}}",
          str(p["basis_trace"])[:300], "basis_trace")
    for a, b in zip(ops, ops[1:]):
        check(a["start_us"] <= b["start_us"] and b["start_us"] <= b["end_us"], "sorted, end >= start", (a, b),
              "basis_trace order")
    for o in ops:
        want = "bytes" if o["op"] in ("h2d", "d2h") else "blocks"
        check(isinstance(o.get(want), int) and o[want] > 0, f"{o['op']} with {want} > 0", o, "basis_trace op")
    device = p["device"]
    costs = {k: v for k, v in device.items() if k not in ("connections", "channel_pools", "bidirectional_d2h_share")}
    check(isinstance(device, dict) and set(costs) == {"copy_overlap_us", "bidir_copy_us", "copy_switch_us"}
          and all(is_number(v) and 0 <= v <= 1000 for v in costs.values())
          and isinstance(device.get("connections"), int) and 1 <= device["connections"] <= 32
          and isinstance(device.get("channel_pools"), bool)
          and is_number(device.get("bidirectional_d2h_share")) and 0.05 <= device["bidirectional_d2h_share"] <= 0.95,
          "{copy_overlap_us, bidir_copy_us, copy_switch_us, connections, channel_pools, bidirectional_d2h_share} within "
          "what POST /api/predict takes", device, "extra.prediction.device")
    check(is_number(p["kernel_ns_per_elem"]) and p["kernel_ns_per_elem"] > 0, "> 0: the sim's calibration",
          p["kernel_ns_per_elem"], "extra.prediction.kernel_ns_per_elem")
    replay = predict(srv, {"trace": p["basis_trace"], "host": host, "device": device, "variant": spec["variant"],
                           "streams": [spec["streams"]], "chunks": spec["chunks"],
                           "kernel_ns_per_elem": p["kernel_ns_per_elem"]})["predictions"][0]
    check(abs(replay["total_ms"] - pred) <= REPLAY_REL * pred, f"predicted_ms {pred} (rel {REPLAY_REL})",
          replay["total_ms"], "POST /api/predict replaying basis_trace, host, device and kernel_ns_per_elem")
    plain = exps["basis"]["result"]  # a run without "predict" has none
    check(plain["predicted_ms"] is None and plain["prediction_error"] is None
          and "prediction" not in (plain.get("extra") or {}), "null prediction, no extra.prediction",
          {k: plain.get(k) for k in ("predicted_ms", "prediction_error", "extra")}, "a run without predict")


# ---------------------------------------------------------------- bad input

def _ops(*ops):
    return {"trace": {"ops": list(ops)}}


H = {"op": "h2d", "start_us": 0, "end_us": 10, "bytes": 4096}
K = {"op": "kernel", "start_us": 11, "end_us": 15, "blocks": 4}
D = {"op": "d2h", "start_us": 16, "end_us": 26, "bytes": 4096}
GOOD = make_trace(2)

BAD = [  # (name, body or f(experiments), field; None: no field)
    ("unsorted", _ops(dict(H, start_us=12, end_us=20), K, D), "trace"),
    ("negative-duration", _ops(H, dict(K, end_us=5), D), "trace"),
    ("missing-start", _ops({k: v for k, v in H.items() if k != "start_us"}, K, D), "trace"),
    ("start-a-string", _ops(dict(H, start_us="0"), K, D), "trace"),
    ("before-zero", _ops(dict(H, start_us=-5), K, D), "trace"),
    ("copy-without-bytes", _ops({k: v for k, v in H.items() if k != "bytes"}, K, D), "trace"),
    ("copy-zero-bytes", _ops(H, K, dict(D, bytes=0)), "trace"),
    ("copy-under-one-float", _ops(dict(H, bytes=1), K, D), "trace"),
    ("copy-bytes-a-float", _ops(dict(H, bytes=4096.0), K, D), "trace"),
    ("copy-past-2^32-floats", _ops(dict(H, bytes=1 << 62), K, D), "trace"),
    ("copies-past-2^32-floats", _ops(dict(H, bytes=1 << 34), K, D, dict(H, start_us=30, end_us=40, bytes=1 << 34),
                                     dict(K, start_us=41, end_us=45), dict(D, start_us=46, end_us=56)), "trace"),
    ("kernel-without-blocks", _ops(H, {k: v for k, v in K.items() if k != "blocks"}, D), "trace"),
    ("threads-per-block-0", _ops(H, dict(K, threads_per_block=0), D), "trace"),
    ("unknown-op", _ops(H, dict(K, op="memset"), D), "trace"),
    ("op-not-object", _ops(H, 5, D), "trace"),
    ("no-kernel", _ops(H, D), "trace"),
    ("empty-ops", _ops(), "trace"),
    ("trace-not-object", {"trace": [H, K, D]}, "trace"),
    ("trace-null", {"trace": None}, "trace"),
    ("body-a-list", [GOOD], None),
    ("body-a-number", 5, None),
    ("unknown-field", {"trace": GOOD, "stream": 2}, "stream"),
    ("unknown-variant", {"trace": GOOD, "variant": "async_v9"}, "variant"),
    ("variant-not-string", {"trace": GOOD, "variant": 1}, "variant"),
    ("variant-not-predicted", {"trace": GOOD, "variant": "cpu"}, "variant"),
    ("streams-empty", {"trace": GOOD, "streams": []}, "streams"),
    ("streams-0", {"trace": GOOD, "streams": [1, 0]}, "streams"),
    ("streams-1025", {"trace": GOOD, "streams": 1025}, "streams"),
    ("streams-fraction", {"trace": GOOD, "streams": 2.5}, "streams"),
    ("streams-string", {"trace": GOOD, "streams": "4"}, "streams"),
    ("streams-65-points", {"trace": GOOD, "streams": list(range(1, 66))}, "streams"),
    ("chunks-0", {"trace": GOOD, "chunks": 0}, "chunks"),
    ("chunks-word", {"trace": GOOD, "chunks": "many"}, "chunks"),
    ("trace-and-from", lambda e: {"trace": GOOD, "from_experiment": e["basis"]["id"]}, "trace"),
    ("neither", {"variant": "async_v1", "streams": [2]}, "trace"),
    ("from-unknown-id", {"from_experiment": "e-0000000000000000"}, "from_experiment"),
    ("from-not-string", {"from_experiment": 5}, "from_experiment"),
    ("from-multi-stream", lambda e: {"from_experiment": e["async_v1"]["id"]}, "from_experiment"),
    ("device-not-object", {"trace": GOOD, "device": 2}, "device"),
    ("device-unknown-field", {"trace": GOOD, "device": {"engines": 2}}, "device"),
    ("copy-engines-0", {"trace": GOOD, "device": {"copy_engines": 0}}, "device.copy_engines"),
    ("channel-pools-a-number", {"trace": GOOD, "device": {"channel_pools": 1}}, "device.channel_pools"),
    ("channel-pools-null", {"trace": GOOD, "device": {"channel_pools": None}}, "device.channel_pools"),
    ("copy-engines-17", {"trace": GOOD, "device": {"copy_engines": 17}}, "device.copy_engines"),
    ("derate-2", {"trace": GOOD, "device": {"bidirectional_derate": 2}}, "device.bidirectional_derate"),
    ("d2h-share-1", {"trace": GOOD, "device": {"bidirectional_d2h_share": 1}}, "device.bidirectional_d2h_share"),
    ("d2h-share-a-string", {"trace": GOOD, "device": {"bidirectional_d2h_share": "0.6"}},
     "device.bidirectional_d2h_share"),
    ("sm-count-fraction", {"trace": GOOD, "device": {"sm_count": 13.5}}, "device.sm_count"),
    ("blocks-per-sm-65", {"trace": GOOD, "device": {"max_blocks_per_sm": 65}}, "device.max_blocks_per_sm"),
    ("copy-overlap-negative", {"trace": GOOD, "device": {"copy_overlap_us": -1}}, "device.copy_overlap_us"),
    ("copy-overlap-a-string", {"trace": GOOD, "device": {"copy_overlap_us": "2"}}, "device.copy_overlap_us"),
    ("bidir-copy-negative", {"trace": GOOD, "device": {"bidir_copy_us": -0.5}}, "device.bidir_copy_us"),
    ("bidir-copy-1001", {"trace": GOOD, "device": {"bidir_copy_us": 1001}}, "device.bidir_copy_us"),
    ("bidir-copy-null", {"trace": GOOD, "device": {"bidir_copy_us": None}}, "device.bidir_copy_us"),
    ("host-not-object", {"trace": GOOD, "host": "fast"}, "host"),
    ("copy-submit-negative", {"trace": GOOD, "host": {"copy_submit_us": -1}}, "host.copy_submit_us"),
    ("kernel-launch-1001", {"trace": GOOD, "host": {"kernel_launch_us": 1001}}, "host.kernel_launch_us"),
    ("reorder-negative", {"trace": GOOD, "host": {"reorder_us": -0.5}}, "host.reorder_us"),
    ("lead-negative", {"trace": GOOD, "host": {"lead_us": -1}}, "host.lead_us"),
    ("lead-1001", {"trace": GOOD, "host": {"lead_us": 1001}}, "host.lead_us"),
    # a misspelt host cost was dropped without a word and the default used instead
    ("host-unknown-field", {"trace": GOOD, "host": {"copy_submit": 1}}, "host"),
    ("kernel-ns-negative", {"trace": GOOD, "kernel_ns_per_elem": -0.1}, "kernel_ns_per_elem"),
    ("kernel-ns-a-string", {"trace": GOOD, "kernel_ns_per_elem": "0.01"}, "kernel_ns_per_elem"),
    ("kernel-ns-past-1e6", {"trace": GOOD, "kernel_ns_per_elem": 2e6}, "kernel_ns_per_elem"),
    ("kernel-ns-null", {"trace": GOOD, "kernel_ns_per_elem": None}, "kernel_ns_per_elem"),
]


def snapshot(srv):
    return {"experiments": srv.list_all(), "queue_depth": srv.health()["queue_depth"]}


@pytest.mark.parametrize("name,body,field", BAD, ids=[b[0] for b in BAD])
def test_bad_predict_request_is_422_naming_the_field_and_changes_nothing(lab, name, body, field):
    srv, exps, _ = lab
    before = snapshot(srv)
    body = body(exps) if callable(body) else body
    err = expect_error(srv.post("/api/predict", body), 422, field=field, no_field=field is None)
    check(snapshot(srv) == before, "the experiments and queue as before", "changed", f"after {name}: {err}")


@pytest.mark.parametrize("raw", [b"", b'{"trace": {"ops": [', b'{"streams": 1, "streams": 2}'],
                         ids=["empty", "truncated", "duplicate-key"])
def test_malformed_predict_body_is_400(lab, raw):
    before = snapshot(lab[0])
    expect_error(lab[0].post("/api/predict", raw=raw), 400)
    check(snapshot(lab[0]) == before, "the experiments and queue as before", "changed", f"after {raw!r}")


def test_from_an_experiment_not_yet_done_is_422(idle_server):
    exp = idle_server.create({"variant": "async_v1", "size": 1 << 20, "streams": 1, "chunks": 4, "reps": 2})
    expect_error(idle_server.post("/api/predict", {"from_experiment": exp["id"]}), 422, field="from_experiment")
    check(idle_server.experiment(exp["id"])["status"] == "queued", "still queued", "changed", exp["id"])


def test_from_a_tuned_run_names_from_experiment(lab):
    """A tuned run's stored spec is the request (streams 1); what ran was the tuner's choice,
    several streams on the sim: refused as not a single-stream pipeline, not as a bad trace."""
    srv, exps, _ = lab
    r = srv.post("/api/predict", {"from_experiment": exps["tuned"]["id"], "streams": [2]})
    expect_error(r, 422, field="from_experiment")


# ---------------------------------------------------------------- limits

def test_a_trace_of_thousands_of_ops_is_predicted(lab):
    trace = make_trace(3000, nbytes=1 << 16, blocks=64)
    raw = json.dumps({"trace": trace, "streams": [1, 8], "chunks": "trace"}, separators=(",", ":")).encode()
    check(len(raw) < DEFAULT_BODY_MAX, "a body under --body-max (the case under test)", len(raw), "9000-op body")
    r = lab[0].post("/api/predict", raw=raw)
    one, eight = expect_status(r, 200)["predictions"]
    check_prediction(one, "async_v1", 1, 3000, "9000 ops x1")
    check_prediction(eight, "async_v1", 8, 3000, "9000 ops x8")
    check(abs(one["total_ms"] * 1000 - span_us(trace)) <= 0.03 * span_us(trace),
          f"about the trace's span {span_us(trace)} us", one["total_ms"] * 1000, "9000 ops x1 total")
    check(eight["total_ms"] < one["total_ms"], f"less than 1 stream's {one['total_ms']}", eight["total_ms"],
          "9000 ops x8")


def test_a_trace_past_the_body_limit_is_413(lab):
    """PREDICT_MAX_OPS + 1 ops are ~7.6 MB: --body-max (1 MiB) refuses them first."""
    srv = lab[0]
    before = snapshot(srv)
    host = {"op": "host", "start_us": 0, "end_us": 0}
    raw = json.dumps({"trace": {"ops": [host] * (PREDICT_MAX_OPS + 1)}}, separators=(",", ":")).encode()
    expect_error(srv.post("/api/predict", raw=raw), 413)
    check(snapshot(srv) == before, "the experiments and queue as before", "changed", "after a 413")


def test_predict_max_ops_is_exact(make_server):
    """With room in --body-max, PREDICT_MAX_OPS ops are predicted and one more is 422."""
    srv = make_server(workers=0, body_max=64 << 20)
    trace = make_trace(PREDICT_MAX_OPS // 3, nbytes=4096, blocks=4)
    end = trace["ops"][-1]["end_us"]
    trace["ops"] += [{"op": "host", "start_us": end, "end_us": end + 1}] * (PREDICT_MAX_OPS % 3)
    body = {"trace": trace, "streams": [4], "chunks": 8}
    check(len(trace["ops"]) == PREDICT_MAX_OPS, PREDICT_MAX_OPS, len(trace["ops"]), "ops at the limit")
    out = expect_status(srv.post("/api/predict", body), 200)
    check_prediction(out["predictions"][0], "async_v1", 4, 8, f"{PREDICT_MAX_OPS} ops")
    trace["ops"].append({"op": "host", "start_us": end + 1, "end_us": end + 2})
    expect_error(srv.post("/api/predict", body), 422, field="trace")
    check(srv.health()["status"] == "ok", "healthy", srv.health(), "after PREDICT_MAX_OPS + 1 ops")
