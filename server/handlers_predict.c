/* handlers_predict.c — POST /api/predict: a single-stream trace (given, or a done
 * 1-stream experiment's median timeline) in, predicted N-stream timelines out, on the
 * engine-queue model with this machine's device parameters unless the request overrides them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/predict.h"
#include "http.h"
#include "spec.h"

#define PREDICT_MAX_POINTS 64

static const char *const predict_fields[] = {"trace",   "from_experiment", "device", "host",
                                             "variant", "streams",         "chunks", "kernel_ns_per_elem"};

/* The trace of a done 1-stream experiment, with its kernels' grids from its spec. */
static bool trace_of_experiment(request_t *req, const char *id, trace_t *trace, predict_params_t *params) {
    sl_error_t err = {0};
    store_t *store = app_store(req->app, &err);
    json_t *exp = store ? store_experiment_json(store, id, &err) : NULL;
    if (!exp) {
        if (err.code == SL_E_NOTFOUND)
            sl_error_set(&err, SL_E_INVALID, "from_experiment", "no experiment %s", id);
        reply_error(req, &err);
        return false;
    }
    spec_t spec;
    bool ok = false;
    json_t *tl = NULL;
    if (strcmp(json_string_value(json_object_get(exp, "status")), "done") != 0 ||
        spec_from_json(json_object_get(exp, "spec"), &spec, &err) != SL_OK) {
        reply_errorf(req, SL_E_INVALID, "from_experiment", "experiment %s is not done", id);
        goto done;
    }
    /* tuned: the stored spec is the request (streams 1); what ran is the tuner's choice */
    if (spec.streams != 1 || spec.variant == VARIANT_CPU || spec.variant == VARIANT_HOST_OVERLAP ||
        spec.variant == VARIANT_MULTI_GPU || spec.variant == VARIANT_ENGINE_STREAMS || spec.variant == VARIANT_TUNED) {
        reply_errorf(req, SL_E_INVALID, "from_experiment",
                     "experiment %s is not a single-stream pipeline (streams %d, variant %s)", id, spec.streams,
                     variant_names[spec.variant]);
        goto done;
    }
    if (!(tl = store_timeline_json(store, id, -1, &err))) {
        reply_error(req, &err);
        goto done;
    }
    json_t *ops = json_object_get(tl, "ops");
    size_t i;
    json_t *op;
    /* and what it recorded is one stream (an imported or odd experiment may say otherwise) */
    json_array_foreach(ops, i, op) {
        if (json_integer_value(json_object_get(op, "stream")) !=
            json_integer_value(json_object_get(json_array_get(ops, 0), "stream"))) {
            reply_errorf(req, SL_E_INVALID, "from_experiment",
                         "experiment %s is not a single-stream pipeline (its timeline uses several streams)", id);
            goto done;
        }
    }
    /* the stored timeline has no grids; trace_from_json wants them on kernels */
    json_array_foreach(ops, i, op) {
        if (strcmp(json_string_value(json_object_get(op, "op")), "kernel") == 0)
            json_object_set_new(op, "blocks", json_integer(1));
    }
    if (trace_from_json(tl, trace, &err)) {
        reply_error(req, &err);
        goto done;
    }
    trace->lead_us = trace->ops[0].start_us; /* a stored timeline's times are from the rep's start */
    device_info_t dev;
    sim_device_info(&dev, 0);
    if (req->app->machine.device_count > 0 && req->app->machine.devices[0].calib.valid)
        dev = req->app->machine.devices[0];
    trace_fill_blocks(trace, &spec, &dev);
    params->block_size = spec.block_size;
    params->kernel_ns_per_elem = plan_kernel_ns_per_elem(&spec, &dev);
    ok = true;
done:
    json_decref(tl);
    json_decref(exp);
    return ok;
}

void handle_predict(request_t *req) {
    json_t *body = request_json(req);
    if (!body)
        return;
    trace_t trace = {0};
    json_t *preds = NULL, *derived = NULL;
    if (!json_is_object(body)) {
        reply_errorf(req, SL_E_INVALID, NULL, "the request must be a JSON object");
        goto done;
    }
    const char *key;
    json_t *val;
    json_object_foreach(body, key, val) {
        if (sl_enum_parse(predict_fields, (int)(sizeof predict_fields / sizeof predict_fields[0]), key) < 0) {
            reply_errorf(req, SL_E_INVALID, key, "unknown field \"%.64s\"", key);
            goto done;
        }
    }
    /* device parameters: this machine's first device, else the sim's H100; then overrides */
    device_info_t dev;
    sim_device_info(&dev, 0);
    if (req->app->machine.device_count > 0 && req->app->machine.devices[0].calib.valid)
        dev = req->app->machine.devices[0];
    predict_params_t params;
    predict_params_for(&dev, &params);
    sl_error_t perr = {0};
    if (predict_params_override(json_object_get(body, "device"), json_object_get(body, "host"), &params, &perr)) {
        reply_error(req, &perr);
        goto done;
    }
    /* the trace */
    json_t *t = json_object_get(body, "trace"), *from = json_object_get(body, "from_experiment");
    sl_error_t err = {0};
    if ((t != NULL) == (from != NULL)) {
        reply_errorf(req, SL_E_INVALID, "trace", "give either \"trace\" or \"from_experiment\"");
        goto done;
    }
    if (t && trace_from_json(t, &trace, &err)) {
        reply_error(req, &err);
        goto done;
    }
    if (from && (!json_is_string(from) || !trace_of_experiment(req, json_string_value(from), &trace, &params))) {
        if (!json_is_string(from))
            reply_errorf(req, SL_E_INVALID, "from_experiment", "from_experiment must be an experiment id");
        goto done;
    }
    /* the rep's lead, where the trace came from a rep and the request does not give one */
    if (!json_object_get(json_object_get(body, "host"), "lead_us"))
        predict_lead_from_trace(&params, &trace);
    /* the kernel's time per element with the GPU to itself (a from_experiment trace has
     * its kernel's from this machine's calibration) */
    if (predict_params_kernel(json_object_get(body, "kernel_ns_per_elem"), &params, &err)) {
        reply_error(req, &err);
        goto done;
    }
    /* what to predict */
    int variant = VARIANT_ASYNC_V1;
    json_t *v = json_object_get(body, "variant");
    if (v && (!json_is_string(v) || (variant = sl_enum_parse(variant_names, VARIANT__COUNT, json_string_value(v))) < 0)) {
        reply_errorf(req, SL_E_INVALID, "variant", "unknown variant");
        goto done;
    }
    json_t *streams = json_object_get(body, "streams");
    json_t *list = json_is_array(streams) ? json_incref(streams) : streams ? json_pack("[O]", streams) : json_pack("[i]", 1);
    if (!list || json_array_size(list) == 0 || json_array_size(list) > PREDICT_MAX_POINTS) {
        json_decref(list);
        reply_errorf(req, SL_E_INVALID, "streams", "streams must be an integer or a list of 1 to %d integers",
                     PREDICT_MAX_POINTS);
        goto done;
    }
    json_t *chunks_v = json_object_get(body, "chunks");
    /* default: N streams of one chunk each; "trace": the trace's chunking */
    bool chunks_trace = json_is_string(chunks_v) && strcmp(json_string_value(chunks_v), "trace") == 0;
    bool chunks_follow = !chunks_v || (json_is_string(chunks_v) && strcmp(json_string_value(chunks_v), "streams") == 0);
    if (chunks_v && !chunks_follow && !chunks_trace &&
        (!json_is_integer(chunks_v) || json_integer_value(chunks_v) < 1 || json_integer_value(chunks_v) > SPEC_MAX_CHUNKS)) {
        json_decref(list);
        reply_errorf(req, SL_E_INVALID, "chunks", "chunks must be an integer from 1 to %d, \"streams\" or \"trace\"",
                     SPEC_MAX_CHUNKS);
        goto done;
    }
    preds = json_array();
    size_t i;
    json_t *sv;
    json_array_foreach(list, i, sv) {
        if (!json_is_integer(sv) || json_integer_value(sv) < 1 || json_integer_value(sv) > SPEC_MAX_STREAMS) {
            reply_errorf(req, SL_E_INVALID, "streams", "streams[%zu] must be an integer from 1 to %d", i, SPEC_MAX_STREAMS);
            json_decref(list);
            goto done;
        }
        int n = (int)json_integer_value(sv);
        int chunks = chunks_follow ? n : chunks_trace ? 0 : (int)json_integer_value(chunks_v);
        timeline_t tl;
        if (predict_timeline(&trace, &params, (variant_t)variant, n, chunks, &tl, derived ? NULL : &derived, &err)) {
            reply_error(req, &err);
            json_decref(list);
            goto done;
        }
        json_t *ops = json_array(), *calls = json_array(); /* calls: the model's host, as a timeline's */
        int used_chunks = 0;
        for (size_t k = 0; k < tl.count; k++) {
            const op_event_t *e = &tl.ops[k];
            if (e->chunk + 1 > used_chunks)
                used_chunks = e->chunk + 1;
            json_array_append_new(ops, json_pack("{s:i, s:i, s:i, s:s, s:f, s:f, s:I}", "device", e->device, "stream",
                                                 e->stream, "chunk", e->chunk, "op", op_names[e->op], "start_us",
                                                 e->start_us, "end_us", e->end_us, "bytes", (json_int_t)e->bytes));
            if (e->call)
                json_array_append_new(calls, json_pack("{s:i, s:i, s:i, s:s, s:f, s:f}", "device", e->device, "stream",
                                                       e->stream, "chunk", e->chunk, "op", op_names[e->op], "start_us",
                                                       e->call_start_us, "end_us", e->call_end_us));
        }
        json_array_append_new(preds, json_pack("{s:s, s:i, s:i, s:f, s:o, s:o}", "variant", variant_names[variant],
                                               "streams", n, "chunks", used_chunks, "total_ms", tl.total_us / 1000.0,
                                               "ops", ops, "calls", calls));
        timeline_free(&tl);
    }
    json_decref(list);
    reply_json(req, 200,
               json_pack("{s:O, s:o, s:{s:i, s:f, s:f, s:i, s:b, s:i, s:i, s:i, s:f, s:f, s:f}, s:f}", "predictions",
                         preds,
                         "derived", derived ? derived : json_null(), "device", "copy_engines", params.dev.copy_engines,
                         "bidirectional_derate", params.dev.bidir_derate, "bidirectional_d2h_share",
                         params.dev.bidir_d2h_share, "connections", params.dev.connections,
                         "channel_pools", params.dev.channel_pools,
                         "sm_count", params.dev.sm_count, "max_threads_per_sm", params.dev.max_threads_per_sm,
                         "max_blocks_per_sm", params.dev.max_blocks_per_sm, "copy_overlap_us",
                         params.dev.copy_overlap_us, "bidir_copy_us", params.dev.bidir_copy_us, "copy_switch_us",
                         params.dev.copy_switch_us, "kernel_ns_per_elem", params.kernel_ns_per_elem));
    derived = NULL;
done:
    json_decref(preds);
    json_decref(derived);
    trace_free(&trace);
    json_decref(body);
}
