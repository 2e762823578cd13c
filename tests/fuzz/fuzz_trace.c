/* fuzz_trace.c — libFuzzer harness of the predict trace parser and the model behind it
 * (gpu/predict.c: trace_from_json, predict_timeline).
 *
 * The input is JSON, either a trace ({"ops": [...]}) or a POST /api/predict body
 * ({"trace": ..., "device": {...}, "variant", "streams", "chunks"}; the device fields and
 * their ranges as server/handlers_predict.c accepts them; a value out of those ranges
 * ends the input, as the handler would refuse it). A refused trace must carry a sendable
 * error; an accepted one is predicted for a couple of stream counts (1 and 4, or the
 * body's), and every predicted timeline must hold only finite times with end >= start
 * (they go out as JSON numbers, which cannot be NaN or infinite). */
#include <math.h>
#include <stdint.h>

#include "../../gpu/predict.h"
#include "fuzz_util.h"

static machine_info_t machine;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_sim_machine(&machine);
    return 0;
}

static void check_timeline(const timeline_t *tl, const char *what) {
    if (!isfinite(tl->total_us) || tl->total_us < 0)
        FUZZ_FAIL("%s: total_us %g is not a finite time (it becomes a JSON number)", what, tl->total_us);
    for (size_t i = 0; i < tl->count; i++) {
        const op_event_t *e = &tl->ops[i];
        if (!isfinite(e->start_us) || !isfinite(e->end_us))
            FUZZ_FAIL("%s: op %zu has start_us %g end_us %g (not finite)", what, i, e->start_us, e->end_us);
        if (e->end_us < e->start_us)
            FUZZ_FAIL("%s: op %zu ends before it starts (%g < %g)", what, i, e->end_us, e->start_us);
        if (e->op < 0 || e->op >= OP__COUNT)
            FUZZ_FAIL("%s: op %zu has kind %d", what, i, (int)e->op);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_t *j = fuzz_load_like_server(data, size);
    if (!j)
        return 0;
    device_info_t dev;
    sim_device_info(&dev, 0);
    if (machine.device_count > 0 && machine.devices[0].calib.valid)
        dev = machine.devices[0];
    predict_params_t params;
    predict_params_for(&dev, &params);
    json_t *trace_json = j;
    int streams[8] = {1, 4};
    int nstreams = 2, chunks = 0, chunks_follow = 0;
    variant_t variants[2] = {VARIANT_ASYNC_V1, VARIANT_ROUND_ROBIN};
    int nvariants = 2;
    if (json_is_object(j) && json_object_get(j, "trace")) { /* a POST /api/predict body */
        trace_json = json_object_get(j, "trace");
        json_t *v;
        sl_error_t perr = {0};
        if (predict_params_override(json_object_get(j, "device"), json_object_get(j, "host"), &params, &perr) ||
            predict_params_kernel(json_object_get(j, "kernel_ns_per_elem"), &params, &perr))
            goto done;
        if ((v = json_object_get(j, "variant"))) {
            int k = json_is_string(v) ? sl_enum_parse(variant_names, VARIANT__COUNT, json_string_value(v)) : -1;
            if (k < 0)
                goto done;
            variants[0] = (variant_t)k;
            nvariants = 1;
        }
        if ((v = json_object_get(j, "streams"))) {
            nstreams = 0;
            size_t n = json_is_array(v) ? json_array_size(v) : 1;
            for (size_t i = 0; i < n && nstreams < 8; i++) {
                json_t *x = json_is_array(v) ? json_array_get(v, i) : v;
                if (!json_is_integer(x) || json_integer_value(x) < 1 || json_integer_value(x) > SPEC_MAX_STREAMS)
                    goto done;
                streams[nstreams++] = (int)json_integer_value(x);
            }
            if (nstreams == 0)
                goto done;
        }
        if ((v = json_object_get(j, "chunks"))) {
            if (json_is_string(v) && strcmp(json_string_value(v), "streams") == 0)
                chunks_follow = 1;
            else if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= SPEC_MAX_CHUNKS)
                chunks = (int)json_integer_value(v);
            else
                goto done;
        }
    }
    trace_t trace;
    sl_error_t err = {0};
    int rc = trace_from_json(trace_json, &trace, &err);
    if (rc) {
        fuzz_check_error(&err, rc, "trace_from_json");
        goto done;
    }
    /* FUZZ_TRACE_MAX_US=N: skip traces with an op ending after N us, to look past the
     * known stall of the model on very long ops (tests/fuzz/crashes/fuzz_trace-model-stall-*) */
    const char *max_us = getenv("FUZZ_TRACE_MAX_US");
    for (size_t i = 0; max_us && i < trace.count; i++)
        if (trace.ops[i].end_us > atof(max_us)) {
            trace_free(&trace);
            goto done;
        }
    for (int vi = 0; vi < nvariants; vi++) {
        for (int si = 0; si < nstreams; si++) {
            timeline_t tl;
            json_t *derived = NULL;
            sl_error_t perr = {0};
            char what[96];
            snprintf(what, sizeof what, "predict_timeline(%s, streams %d)", variant_names[variants[vi]], streams[si]);
            rc = predict_timeline(&trace, &params, variants[vi], streams[si], chunks_follow ? streams[si] : chunks, &tl,
                                  &derived, &perr);
            if (rc) {
                fuzz_check_error(&perr, rc, what);
                if (perr.code != SL_E_INVALID)
                    FUZZ_FAIL("%s: a trace that trace_from_json accepted ends in %s (a %s answer, not 422): %s", what,
                              sl_code_name(perr.code), perr.code == SL_E_NOMEM ? "500" : "5xx", perr.message);
            } else {
                check_timeline(&tl, what);
                timeline_free(&tl);
                if (!derived)
                    FUZZ_FAIL("%s: no derived parameters (a JSON value that would not pack?)", what);
            }
            json_decref(derived);
        }
    }
    trace_free(&trace);
done:
    json_decref(j);
    return 0;
}
