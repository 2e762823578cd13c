"""test_metrics_trace.py — GET /metrics in the Prometheus text format (checked line by
line by a strict parser written here), counters that move as runs complete, and the
Chrome trace of a multi-stream and a host_overlap run checked against the Trace Event
format (every event has ph/ts/pid/tid, X events have dur >= 0, names present, one
thread name per stream)."""

import re

from conftest import expect_status, json_of, small

METRIC_LINE = re.compile(
    r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
    r'(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*)?\})? (-?[0-9.eE+-]+|NaN|\+Inf|-Inf)$')


def parse_prometheus(text):
    """{(name, labels): value}; fails on any line that is not HELP, TYPE or a sample,
    on samples of a metric without a TYPE, and on histograms whose buckets decrease."""
    assert text.endswith("\n"), "the exposition must end with a newline"
    types, samples = {}, {}
    for n, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            parts = line.split()
            assert len(parts) == 4 and parts[3] in ("counter", "gauge", "histogram", "summary", "untyped"), \
                f"line {n}: bad TYPE: {line!r}"
            types[parts[2]] = parts[3]
            continue
        m = METRIC_LINE.match(line)
        assert m, f"line {n} is not a Prometheus sample: {line!r}"
        name, labels, value = m.group(1), m.group(3) or "", float(m.group(5))
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        assert name in types or base in types, f"line {n}: {name} has no # TYPE"
        assert (name, labels) not in samples, f"line {n}: duplicate sample {name}{{{labels}}}"
        samples[(name, labels)] = value
    for (name, labels), _ in samples.items():
        if name.endswith("_bucket"):
            buckets = sorted((float(re.search(r'le="([^"]+)"', l).group(1).replace("+Inf", "inf")), v)
                             for (n2, l), v in samples.items() if n2 == name)
            counts = [v for _, v in buckets]
            assert counts == sorted(counts), f"{name}: cumulative buckets decrease: {buckets}"
    return types, samples


def value(samples, name, **labels):
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for (n, l), v in samples.items():
        if n == name and all(f'{k}="{val}"' in l for k, val in labels.items()):
            return v
    raise AssertionError(f"no sample {name}{{{want}}}")


def test_metrics_parse_and_count_runs(server):
    r = server.get("/metrics")
    assert r.status_code == 200, f"GET /metrics: expected 200, got {r.status_code}: {r.text[:300]}"
    assert r.headers["Content-Type"].startswith("text/plain"), r.headers["Content-Type"]
    types, before = parse_prometheus(r.text)
    for name, kind in (("streamlab_queue_depth", "gauge"), ("streamlab_experiments", "gauge"),
                       ("streamlab_http_requests_total", "counter"), ("streamlab_runs_total", "counter"),
                       ("streamlab_run_duration_seconds", "histogram"), ("streamlab_calibration_gbps", "gauge")):
        assert types.get(name) == kind, f"{name}: expected TYPE {kind}, got {types.get(name)}"
    done_before = value(before, "streamlab_runs_total", status="done")
    ids = [server.create(small(streams=s))["id"] for s in (1, 2, 4)]
    for eid in ids:
        server.wait_done(eid)
    _, after = parse_prometheus(server.get("/metrics").text)
    assert value(after, "streamlab_runs_total", status="done") == done_before + 3
    assert value(after, "streamlab_experiments", status="done") >= 3
    assert value(after, "streamlab_run_duration_seconds_count") == done_before + 3
    posts = value(after, "streamlab_http_requests_total", method="POST", route="/api/experiments", status="202")
    assert posts >= 3, f"expected at least 3 POSTs counted, got {posts}"
    assert value(after, "streamlab_calibration_gbps", device="0", direction="bidirectional") > 0


CUDA_KINDS = ("stream", "event", "graph", "graph_exec", "host_alloc", "device_alloc")


def test_metrics_say_what_cuda_objects_the_process_holds(server):
    """Issue 19: streamlab_cuda_objects, one gauge per kind; after runs finish, the process
    holds what it held before them (on the simulator: nothing, ever)."""
    types, before = parse_prometheus(server.get("/metrics").text)
    assert types.get("streamlab_cuda_objects") == "gauge", types.get("streamlab_cuda_objects")
    kinds = sorted(re.search(r'kind="([^"]+)"', l).group(1) for (n, l) in before if n == "streamlab_cuda_objects")
    assert kinds == sorted(CUDA_KINDS), f"expected one gauge per kind {sorted(CUDA_KINDS)}, got {kinds}"
    for eid in [server.create(small(streams=s, variant=v))["id"] for s, v in ((4, "async_v2"), (3, "tuned"))]:
        server.wait_done(eid)
    _, after = parse_prometheus(server.get("/metrics").text)
    for k in CUDA_KINDS:
        assert value(after, "streamlab_cuda_objects", kind=k) == value(before, "streamlab_cuda_objects", kind=k), \
            f"{k}: {value(before, 'streamlab_cuda_objects', kind=k)} before the runs, " \
            f"{value(after, 'streamlab_cuda_objects', kind=k)} after"
        if server.get("/api/health").json()["backend"] == "sim":
            assert value(after, "streamlab_cuda_objects", kind=k) == 0, f"{k}: the simulator holds no CUDA objects"


def test_metrics_say_what_the_result_cache_holds(server):
    """Issue 19: a long-lived server's resident memory grows by the JSON it keeps to answer
    reads of finished experiments; /metrics says how much, so a soak can tell that bounded
    cache from a leak. A read of a new finished experiment and of its timeline adds two
    entries and their bytes; reading them again adds nothing."""
    types, _ = parse_prometheus(server.get("/metrics").text)
    for name in ("streamlab_cache_bytes", "streamlab_cache_entries", "streamlab_cache_limit_bytes"):
        assert types.get(name) == "gauge", f"{name}: expected TYPE gauge, got {types.get(name)}"
    eid = server.create(small(streams=2))["id"]
    server.wait_done(eid)
    _, before = parse_prometheus(server.get("/metrics").text)
    exp_read, tl_read = server.get(f"/api/experiments/{eid}"), server.get(f"/api/experiments/{eid}/timeline")
    expect_status(exp_read, 200)
    expect_status(tl_read, 200)
    exp_text, tl_text = exp_read.text, tl_read.text
    _, after = parse_prometheus(server.get("/metrics").text)
    for _ in range(3):
        server.get(f"/api/experiments/{eid}")
        server.get(f"/api/experiments/{eid}/timeline")
    _, again = parse_prometheus(server.get("/metrics").text)
    b0, b1, b2 = (value(s, "streamlab_cache_bytes") for s in (before, after, again))
    n0, n1, n2 = (value(s, "streamlab_cache_entries") for s in (before, after, again))
    assert n1 - n0 in (1, 2), f"entries {n0} before the reads, {n1} after (the timeline at least is new)"
    assert b1 - b0 >= len(tl_text.encode()), f"bytes {b0} -> {b1}: less than the timeline's {len(tl_text)}"
    assert b1 - b0 <= len(exp_text.encode()) + len(tl_text.encode()) + 2 * 128, \
        f"bytes {b0} -> {b1}: more than the two texts ({len(exp_text)} + {len(tl_text)}) and their keys"
    assert (n2, b2) == (n1, b1), f"reading them again changed the cache: {n1}/{b1} -> {n2}/{b2}"
    assert 0 < b2 <= value(again, "streamlab_cache_limit_bytes")


def test_metrics_say_what_the_allocator_holds(server):
    """Issue 19: streamlab_heap_bytes{state} (glibc's mallinfo2 over all arenas): in use and freed but
    kept, so a soak can tell a leak from fragmentation from memory outside malloc (both gauges there,
    neither negative; what they say is the soak's to read)."""
    types, before = parse_prometheus(server.get("/metrics").text)
    assert types.get("streamlab_heap_bytes") == "gauge", types.get("streamlab_heap_bytes")
    states = sorted(re.search(r'state="([^"]+)"', l).group(1) for (n, l) in before if n == "streamlab_heap_bytes")
    assert states == ["free", "in_use"], states
    assert all(v >= 0 for (n, _), v in before.items() if n == "streamlab_heap_bytes")


def check_trace(trace, streams_expected):
    events = trace["traceEvents"]
    assert events, "no events"
    thread_names = {}
    for e in events:
        for key in ("ph", "pid", "tid", "name"):
            assert key in e, f"event without {key}: {e}"
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                thread_names[(e["pid"], e["tid"])] = e["args"]["name"]
            continue
        assert e["ph"] == "X", f"unexpected phase {e['ph']}"
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
        assert e["name"] in ("h2d", "kernel", "d2h", "host"), e
        assert (e["pid"], e["tid"]) in thread_names, f"event on an unnamed thread: {e}"
    assert sorted(thread_names.values()) == sorted(streams_expected), \
        f"thread names: expected {sorted(streams_expected)}, got {sorted(thread_names.values())}"


def test_trace_of_a_multistream_run_is_valid_trace_event_format(server):
    eid = server.create(small(streams=4))["id"]
    server.wait_done(eid)
    r = server.get(f"/api/experiments/{eid}/trace")
    expect_status(r, 200)
    tr = json_of(r)
    check_trace(tr, [f"stream {s}" for s in range(4)])
    xs = [e for e in tr["traceEvents"] if e["ph"] == "X"]
    tl = json_of(server.get(f"/api/experiments/{eid}/timeline"))
    assert len(xs) == len(tl["ops"]), f"{len(xs)} X events for {len(tl['ops'])} ops"


def test_trace_names_the_host_thread(server):
    eid = server.create(small("host_overlap", streams=2))["id"]
    server.wait_done(eid)
    check_trace(json_of(server.get(f"/api/experiments/{eid}/trace")), ["stream 0", "stream 1", "host"])
