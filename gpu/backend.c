/* backend.c — the dispatcher at the top of gpu/: a spec checked against the machine
 * before it is queued, and backend_run, which hands it to the cpu baseline or runs its
 * plan (run.c) on the sim or cuda backend, with tuned's choice before it, a prediction
 * from the 1-stream basis beside it, and the floor. Nothing in gpu/ calls back up here. */
#include "backend.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "cuda.h"
#include "plan.h"
#include "predict.h"
#include "run.h"
#include "sim.h"
#include "tuned.h"

int backend_check(const spec_t *spec, const machine_info_t *m, sl_error_t *err) {
    backend_kind_t be;
    int rc = run_resolve(spec, m, &be, err);
    if (rc)
        return rc;
    if (be == BACKEND_CPU)
        return SL_OK;
    const device_info_t *devs = m->devices;
    device_info_t sim_devs[SPEC_MAX_DEVICES];
    int ndev = m->device_count;
    if (be == BACKEND_SIM && m->backend != BACKEND_SIM) { /* sim forced on a GPU host */
        ndev = m->device_count > 0 ? m->device_count : 1;
        for (int i = 0; i < ndev; i++)
            sim_device_info(&sim_devs[i], i);
        devs = sim_devs;
    }
    for (int i = 0; i < spec->device_count; i++) {
        int d = spec->devices[i];
        if (d < 0 || d >= ndev)
            return sl_error_set(err, SL_E_INVALID, "devices", "device %d does not exist on this machine (%d device%s)",
                                d, ndev, ndev == 1 ? "" : "s");
        for (int j = 0; j < i; j++)
            if (spec->devices[j] == d)
                return sl_error_set(err, SL_E_INVALID, "devices", "device %d is listed twice", d);
    }
    if (spec->variant == VARIANT_MULTI_GPU && spec->device_count < 2 && ndev < 2)
        return sl_error_set(err, SL_E_INVALID, "devices", "multi_gpu needs 2 or more devices; this machine has %d", ndev);
    /* Memory: the whole array lives on each device it is split over (share per device);
     * zero_copy's kernels work on the host array itself and allocate nothing there. */
    int used = spec->variant == VARIANT_MULTI_GPU ? spec->device_count : 1;
    uint64_t bytes = spec->size * sizeof(float);
    uint64_t per_device = (bytes + (uint64_t)used - 1) / (uint64_t)used;
    for (int i = 0; i < used; i++) {
        const device_info_t *d = &devs[spec->devices[i]];
        /* leave 10% for the context, streams and events */
        if (spec->variant != VARIANT_ZERO_COPY && d->mem_bytes && per_device > d->mem_bytes / 10 * 9)
            return sl_error_set(err, SL_E_INVALID, "size",
                                "%llu elements need %.1f GiB on device %d, which has %.1f GiB",
                                (unsigned long long)spec->size, (double)per_device / (1u << 30), d->index,
                                (double)d->mem_bytes / (1u << 30));
    }
    if (spec->driver_mode != DRIVER_AUTO) {
        const char *want = driver_mode_names[spec->driver_mode];
        for (int i = 0; i < spec->device_count; i++) {
            const device_info_t *d = &devs[spec->devices[i]];
            if (strcmp(d->driver_model, want) != 0)
                return sl_error_set(err, SL_E_INVALID, "driver_mode",
                                    "the run requires driver model %s but device %d runs %s", want, d->index,
                                    d->driver_model);
        }
    }
    return SL_OK;
}

double backend_floor_ms(const spec_t *spec, const machine_info_t *m) {
    if (spec->variant == VARIANT_CPU || spec->variant == VARIANT_HOST_OVERLAP)
        return 0;
    int used = spec->variant == VARIANT_MULTI_GPU ? spec->device_count : 1;
    double floor_ms = 0;
    for (int i = 0; i < used; i++) {
        int idx = spec->devices[i];
        device_info_t simdev;
        const device_info_t *d;
        if (idx < m->device_count &&
            (m->backend == BACKEND_SIM || (m->backend == BACKEND_CUDA && spec->backend != BACKEND_SIM))) {
            d = &m->devices[idx]; /* the device the run used: a GPU's calibration, or the sim machine's own */
        } else {
            sim_device_info(&simdev, idx);
            d = &simdev;
        }
        const calibration_t *c = &d->calib;
        if (!c->valid || c->bidir_gbps <= 0)
            return 0;
        uint64_t lo, count;
        plan_chunk_range(spec->size, used, i, &lo, &count);
        double bytes = (double)count * sizeof(float);
        /* Both directions at once at the peak bidirectional rate, by copy engines or by
         * kernels reading and writing mapped memory, whichever moves more; GB/s = bytes per ns. */
        double gbps = c->zero_copy_gbps > c->bidir_gbps ? c->zero_copy_gbps : c->bidir_gbps;
        double copy_ms = bytes / (gbps * 1e6);
        double kernel_ms = (double)count * plan_kernel_ns_per_elem(spec, d) / 1e6;
        double dev_floor = copy_ms > kernel_ms ? copy_ms : kernel_ms;
        if (dev_floor > floor_ms)
            floor_ms = dev_floor;
    }
    return floor_ms;
}

void backend_cuda_objects(long long out[CUDA_OBJ__COUNT]) {
    cuda_objects(out);
}

/* The most event tax taken per op: 2.4-3.6 us on the lent H100 at 8-64 chunks; from
 * 2-4 chunks, where a few us of noise divide among 6-12 ops, -9 to +4.7. */
#define EVENT_TAX_CAP_US 3.0

/* predict: run the 1-stream basis in the same chunks, predict this spec from its
 * op-by-op median trace on the model, and record the prediction and its error beside the measurement. */
static int predict_from_basis(backend_kind_t be, const spec_t *spec, const machine_info_t *m, result_t *out,
                              sl_error_t *err) {
    spec_t basis = *spec;
    basis.variant = VARIANT_ASYNC_V1;
    basis.streams = 1;
    basis.predict = false;
    basis.reps_auto = false;
    /* every op traced in every traced rep, as the model's host and tax terms were
     * fitted on (a 1-stream basis is one share anyway, unless it runs many chunks) */
    basis.trace_ops = TRACE_ALL;
    /* the trace is the op-by-op median of the basis reps: as many as the run's, 5 to 15 */
    basis.reps = spec->reps_auto || spec->reps > 15 ? 15 : spec->reps < 5 ? 5 : spec->reps;
    /* Events, not CUPTI, time the basis, though CUPTI's op durations are the truer ones
     * (a 512 KB copy: 11.8 us by CUPTI, 18 by events on the lent H100): tried on the
     * H100 (2026-11-23), CUPTI traces predicted 20-40% short at 2^22 where the model's
     * gaps cannot carry the stream handoffs that events keep inside the ops (median
     * error 7-9% against 2% from events traces of another H100), and the runs measured
     * after it in that process were 11% slower at 2^25 x32 than bench-gpu's in the same
     * call (one comparison on a noisy machine). */
    result_t b;
    memset(&b, 0, sizeof b);
    int rc = run_plan(be, &basis, m, &b, err);
    if (rc)
        return rc;
    device_info_t dev;
    sim_device_for(m, spec, 0, &dev);
    predict_params_t params;
    predict_params_for(&dev, &params);
    params.block_size = spec->block_size;
    params.kernel_ns_per_elem = plan_kernel_ns_per_elem(spec, &dev);
    trace_t trace;
    rc = trace_from_timelines(b.timelines, (size_t)b.reps, (size_t)b.median_rep, &trace, err);
    /* The traced reps' events stretch each op (the event tax) where the clean reps'
     * total says by how much; and the host issued the basis in the clean reps' issue
     * time, a moment ago, on a host whose speed drifts. Both are kept in the result, so
     * that POST /api/predict replays the prediction from basis_trace, host and device. */
    double tax = 0, issue = 0;
    json_t *bt = b.extra ? json_object_get(b.extra, "timing") : NULL;
    if (rc == SL_OK && bt) {
        if (basis.timing == TIMING_EVENTS && b.backend == BACKEND_CUDA) { /* the sim's ops pay no events */
            trace_remove_event_tax(&trace, b.total_ms.median * 1000.0, EVENT_TAX_CAP_US, &tax);
            params.dev.copy_overlap_us = PREDICT_DETAXED_COPY_OVERLAP_US;
        }
        issue = json_number_value(json_object_get(bt, "issue_us_clean"));
        predict_lead_from_trace(&params, &trace);
        predict_host_from_issue(&params, issue, basis.chunks);
    }
    if (rc == SL_OK) {
        trace_fill_blocks(&trace, &basis, &dev);
        timeline_t tl;
        json_t *derived = NULL;
        rc = predict_timeline(&trace, &params, spec->variant, spec->streams, spec->chunks, &tl, &derived, err);
        if (rc == SL_OK) {
            out->predicted_ms = tl.total_us / 1000.0;
            out->prediction_error = fabs(out->predicted_ms - out->total_ms.median) / out->total_ms.median;
            if (!out->extra)
                out->extra = json_object();
            /* the trace it was predicted from, as POST /api/predict takes it: the
             * prediction can be replayed, and the model tried on it offline */
            json_t *tj = trace_to_json(&trace);
            json_t *p = json_pack("{s:f, s:i, s:s, s:f, s:f, s:{s:f, s:f, s:f, s:f}, s:{s:f, s:f, s:f, s:i, s:b, s:f}, "
                                  "s:f, s:f, s:o, s:o}",
                                  "basis_ms", b.total_ms.median, "basis_reps", b.reps, "basis_timing",
                                  timing_names[basis.timing], "event_tax_us", tax, "basis_issue_us", issue, "host",
                                  "copy_submit_us", params.host.copy_submit_us, "kernel_launch_us",
                                  params.host.kernel_launch_us, "reorder_us", params.host.reorder_us, "lead_us",
                                  params.host.lead_us, "device",
                                  "copy_overlap_us", params.dev.copy_overlap_us, "bidir_copy_us",
                                  params.dev.bidir_copy_us, "copy_switch_us", params.dev.copy_switch_us, "connections",
                                  params.dev.connections, "channel_pools", params.dev.channel_pools,
                                  "bidirectional_d2h_share", params.dev.bidir_d2h_share, "kernel_ns_per_elem",
                                  params.kernel_ns_per_elem,
                                  "predicted_ms", out->predicted_ms, "derived", derived ? derived : json_null(),
                                  "basis_trace", tj ? tj : json_null());
            if (out->extra && p)
                json_object_set_new(out->extra, "prediction", p);
            timeline_free(&tl);
        }
        trace_free(&trace);
    }
    result_free(&b);
    return rc;
}

int backend_run(const spec_t *spec_in, const machine_info_t *m, result_t *out, sl_error_t *err) {
    memset(out, 0, sizeof *out);
    backend_kind_t be;
    int rc = run_resolve(spec_in, m, &be, err);
    if (rc)
        return rc;
    if (be == BACKEND_CPU)
        return cpu_run(spec_in, m, out, err);

    spec_t spec = *spec_in;
    json_t *tuned_choice = NULL;
    /* tuned's trials and final run, and a prediction's basis, share one CPU reference */
    bool keep_ref = be == BACKEND_CUDA && (spec.variant == VARIANT_TUNED || spec.predict);
    if (keep_ref)
        cuda_reference_keep(true);
    if (spec.variant == VARIANT_TUNED) {
        rc = tuned_choose(spec_in, m, &spec, &tuned_choice, err);
        if (rc)
            goto done;
    }
    rc = run_plan(be, &spec, m, out, err);
    if (rc)
        goto done;
    /* the model predicts copy pipelines from a 1-stream copy pipeline's trace: zero_copy has no copies */
    if (spec.predict && spec.variant != VARIANT_HOST_OVERLAP && spec.variant != VARIANT_MULTI_GPU &&
        spec.variant != VARIANT_ZERO_COPY &&
        (rc = predict_from_basis(be, &spec, m, out, err)))
        goto done;
    out->floor_ms = backend_floor_ms(&spec, m);
    out->efficiency = out->floor_ms > 0 && out->total_ms.median > 0 ? out->floor_ms / out->total_ms.median : 0;
    if (tuned_choice) {
        if (!out->extra)
            out->extra = json_object();
        if (out->extra)
            json_object_set(out->extra, "tuned", tuned_choice);
    }
done:
    if (keep_ref)
        cuda_reference_keep(false);
    if (tuned_choice)
        json_decref(tuned_choice);
    if (rc)
        result_free(out);
    return rc;
}
